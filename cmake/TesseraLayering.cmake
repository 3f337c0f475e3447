# The link graph of Tessera's own libraries, written at configure time to build/layering.txt, so a
# test can hold docs/architecture.md's table of libraries and what each links to the build itself.
#
# One line per library (static, shared, module, object or interface target named tessera_*):
# "NAME: DEP DEP ...", its direct links among Tessera's libraries, private ones included. Targets
# made once per hardware config carry the config's name; it is written as <config>, so the graph
# does not depend on which configs a build was asked for.

function(tessera_collect_build_targets dir out)
  get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    tessera_collect_build_targets("${sub}" sub_targets)
    list(APPEND targets ${sub_targets})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

function(tessera_write_layering output)
  set(config_names "")
  foreach(cfg_file ${TESSERA_CONFIG_FILES} ${TESSERA_BOARD_CONFIG_FILES})
    get_filename_component(cfg "${cfg_file}" NAME_WE)
    list(APPEND config_names "${cfg}")
  endforeach()
  # Points of the explored space (docs/explore.md) are configs too, by their names (with their buffers
  # when tessera explore chose other than the largest).
  list(APPEND config_names "b[0-9]+_i[0-9]+_o[0-9]+_w[0-9]+(_u[0-9]+_i[0-9]+_w[0-9]+_a[0-9]+)?")
  list(JOIN config_names "|" config_alternatives)
  tessera_collect_build_targets("${CMAKE_SOURCE_DIR}" all_targets)
  set(lines "")
  foreach(t ${all_targets})
    if(NOT t MATCHES "^tessera_")
      continue()
    endif()
    get_target_property(type ${t} TYPE)
    if(NOT type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY|INTERFACE_LIBRARY)$")
      continue()
    endif()
    if(type STREQUAL "INTERFACE_LIBRARY")
      get_target_property(links ${t} INTERFACE_LINK_LIBRARIES)
    else()
      get_target_property(links ${t} LINK_LIBRARIES)
    endif()
    set(deps "")
    foreach(l ${links})
      # $<BUILD_INTERFACE:x>, $<LINK_ONLY:x> and the like name x.
      string(REGEX REPLACE "^\\$<[A-Z_]+:(.*)>$" "\\1" l "${l}")
      if(l MATCHES "^tessera_" AND TARGET ${l})
        string(REGEX REPLACE "_(${config_alternatives})$" "_<config>" l "${l}")
        list(APPEND deps "${l}")
      endif()
    endforeach()
    string(REGEX REPLACE "_(${config_alternatives})$" "_<config>" name "${t}")
    list(REMOVE_DUPLICATES deps)
    list(SORT deps)
    list(JOIN deps " " deps)
    list(APPEND lines "${name}: ${deps}")
  endforeach()
  list(REMOVE_DUPLICATES lines)
  list(SORT lines)
  list(JOIN lines "\n" text)
  file(WRITE "${output}" "${text}\n")
endfunction()
