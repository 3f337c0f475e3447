# Target plugins: a simulator's or a board driver's directory builds its runtime targets as one shared object plus a manifest naming them.
#
# The runtime finds plugins by their manifests (NAME.targets next to NAME.so) on its plugin search
# path (TESSERA_PLUGIN_PATH, the executable's directory, ../lib/tessera relative to it, this build's
# TESSERA_PLUGIN_DIR; runtime/src/plugin_path.cpp) and loads one only when one of its targets is
# named; listing the targets reads the manifests alone. The listed names registered here (global
# property TESSERA_TARGETS, fsim first) are what the tests derive their filters and labels from, so
# adding a target touches only its own directory.
set(TESSERA_PLUGIN_DIR "${CMAKE_BINARY_DIR}/lib/tessera")
set(TESSERA_PLUGIN_INSTALL_DIR "lib/tessera")  # the runtime looks in ../lib/tessera next to bin/
set_property(GLOBAL PROPERTY TESSERA_TARGETS fsim)
set_property(GLOBAL PROPERTY TESSERA_MEMORY_TIMING_TARGETS "")
# Every executable that links the runtime depends on this, so a build of it has all targets.
add_custom_target(tessera_target_plugins)

# tessera_add_target_plugin(NAME [TARGETS t...] [DEVICE_TARGETS t...] [NAME_PREFIXES p...] SOURCES s...
#                           LIBRARIES l... [MEMORY_TIMING_TARGETS t...] [EXPORTS symbol...])
# Builds tessera-NAME.so from SOURCES (which use TESSERA_TARGET_PLUGIN to register exactly what the
# lists name) and writes its manifest tessera-NAME.targets (runtime/README.md, "Plugin manifests").
# TARGETS: listed targets, which the tests run on every config. DEVICE_TARGETS: targets that need a
# device (a board), found by name only and never listed. NAME_PREFIXES: families of targets, every
# name starting with the prefix (registered with TargetRegistrar::addNamePrefix), never listed.
# MEMORY_TIMING_TARGETS: those taking tsim's DRAM timing options, which the runtime tests run again
# under extreme timings. EXPORTS: C symbols a library the plugin loads looks up in it (libsystemc
# calls the program's sc_main).
function(tessera_add_target_plugin name)
  cmake_parse_arguments(arg "ON_REQUEST" "" "TARGETS;DEVICE_TARGETS;NAME_PREFIXES;SOURCES;LIBRARIES;MEMORY_TIMING_TARGETS;EXPORTS"
                        ${ARGN})
  if(NOT (arg_TARGETS OR arg_DEVICE_TARGETS OR arg_NAME_PREFIXES) OR NOT arg_SOURCES)
    message(FATAL_ERROR "tessera_add_target_plugin(${name}): SOURCES and one of TARGETS, DEVICE_TARGETS and "
                        "NAME_PREFIXES are required")
  endif()
  set(lib tessera_plugin_${name})
  set(header "# Targets registered by tessera-${name}.so, one a line: NAME, NAME device (needs a device, not listed) or PREFIX* (written by the build)")
  set(optional "")
  if(arg_ON_REQUEST)
    # Not part of the default build: the manifest says how to build it, and the runtime says so
    # when one of its targets is named before it is built.
    add_library(${lib} MODULE EXCLUDE_FROM_ALL ${arg_SOURCES})
    string(APPEND header "\n# build: cmake --build ${CMAKE_BINARY_DIR} --target ${lib}")
    set(optional OPTIONAL)
  else()
    add_library(${lib} MODULE ${arg_SOURCES})
  endif()
  set_target_properties(${lib} PROPERTIES PREFIX "" OUTPUT_NAME "tessera-${name}" SUFFIX ".so"
                        LIBRARY_OUTPUT_DIRECTORY "${TESSERA_PLUGIN_DIR}"
                        CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  target_link_libraries(${lib} PRIVATE tessera_target_api ${arg_LIBRARIES})
  # The plugin carries its own copies of the static libraries it links (hw, the simulator) and
  # exports only its entry points, so it never binds to, or is bound by, the executable's copies;
  # --no-undefined proves it needs nothing from the executable.
  set(exported tessera_target_plugin_abi tessera_register_targets ${arg_EXPORTS})
  list(JOIN exported "; " exported)
  set(version_script "${CMAKE_CURRENT_BINARY_DIR}/tessera-${name}.map")
  file(GENERATE OUTPUT "${version_script}" CONTENT "{\n  global: ${exported};\n  local: *;\n};\n")
  target_link_options(${lib} PRIVATE "LINKER:--version-script=${version_script}" "LINKER:--no-undefined")
  set_property(TARGET ${lib} APPEND PROPERTY LINK_DEPENDS "${version_script}")
  set(entries ${arg_TARGETS})
  foreach(t IN LISTS arg_DEVICE_TARGETS)
    list(APPEND entries "${t} device")
  endforeach()
  foreach(p IN LISTS arg_NAME_PREFIXES)
    list(APPEND entries "${p}*")
  endforeach()
  string(JOIN "\n" entries ${entries})
  file(GENERATE OUTPUT "${TESSERA_PLUGIN_DIR}/tessera-${name}.targets"
       CONTENT "${header}\n${entries}\n")
  if(NOT arg_ON_REQUEST)
    add_dependencies(tessera_target_plugins ${lib})
  endif()
  install(TARGETS ${lib} LIBRARY DESTINATION "${TESSERA_PLUGIN_INSTALL_DIR}" ${optional})
  if(arg_ON_REQUEST)
    # Its manifest only with the plugin: an installed manifest of a plugin left unbuilt would point
    # at this build tree.
    install(CODE "if(EXISTS \"${TESSERA_PLUGIN_DIR}/tessera-${name}.so\")
  file(INSTALL \"${TESSERA_PLUGIN_DIR}/tessera-${name}.targets\" DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${TESSERA_PLUGIN_INSTALL_DIR}\")
endif()")
  else()
    install(FILES "${TESSERA_PLUGIN_DIR}/tessera-${name}.targets" DESTINATION "${TESSERA_PLUGIN_INSTALL_DIR}")
  endif()
  set_property(GLOBAL APPEND PROPERTY TESSERA_TARGETS ${arg_TARGETS})
  set_property(GLOBAL APPEND PROPERTY TESSERA_MEMORY_TIMING_TARGETS ${arg_MEMORY_TIMING_TARGETS})
endfunction()
