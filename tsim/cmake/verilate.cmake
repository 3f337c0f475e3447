# tessera_verilate(): one Verilator run into OUT_DIR/verilated and its fixed-name unity sources
# (verilated_sources.cmake), the step every verilated model here shares (tsim, tsim-cov, tsim-mut,
# rtl-sc, the iCEBreaker board top and its coverage and netlist builds).
#
#   tessera_verilate(OUT_DIR DIR PREFIX P FLAGS f... SOURCES s... [DEPENDS d...] [LOG FILE] COMMENT TEXT)
#
# Outputs DIR/P__fast.cpp, DIR/P__slow.cpp and DIR/P__stamp.h. FLAGS are Verilator's (mode, top,
# includes, coverage...); SOURCES are the files it reads (and depends on); LOG takes Verilator's
# output instead of the console (for netlists, whose warnings are many and expected).
set(TESSERA_VERILATED_SOURCES_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/verilated_sources.cmake")
function(tessera_verilate)
  cmake_parse_arguments(arg "" "OUT_DIR;PREFIX;LOG;COMMENT" "FLAGS;SOURCES;DEPENDS" ${ARGN})
  foreach(required OUT_DIR PREFIX SOURCES COMMENT)
    if(NOT arg_${required})
      message(FATAL_ERROR "tessera_verilate: ${required} is missing")
    endif()
  endforeach()
  set(mdir "${arg_OUT_DIR}/verilated")
  set(redirect "")
  if(arg_LOG)
    set(redirect > "${arg_LOG}" 2>&1)
  endif()
  add_custom_command(
    OUTPUT "${arg_OUT_DIR}/${arg_PREFIX}__fast.cpp" "${arg_OUT_DIR}/${arg_PREFIX}__slow.cpp"
           "${arg_OUT_DIR}/${arg_PREFIX}__stamp.h"
    COMMAND "${VERILATOR_BIN}" ${arg_FLAGS} --prefix ${arg_PREFIX} --Mdir "${mdir}" ${arg_SOURCES} ${redirect}
    COMMAND "${CMAKE_COMMAND}" "-DMDIR=${mdir}" "-DPREFIX=${arg_PREFIX}" "-DOUT_DIR=${arg_OUT_DIR}"
            -P "${TESSERA_VERILATED_SOURCES_SCRIPT}"
    DEPENDS ${arg_SOURCES} ${arg_DEPENDS} "${TESSERA_VERILATED_SOURCES_SCRIPT}"
    COMMENT "${arg_COMMENT}"
    VERBATIM)
endfunction()
