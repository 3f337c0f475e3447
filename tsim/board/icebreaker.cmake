# icebreaker-sim (included by tsim/CMakeLists.txt): the iCEBreaker board top (rtl/board with the pico
# core of rtl/pico, the sources the bitstream is built from) verilated for board config pico, its UART
# harness, the icebreaker-sim target plugin and the pty stand-in board.
set(TESSERA_ICEBREAKER_CONFIG pico)  # the board top's config: the runtime side checks the same (icebreaker.h)
set(ib_dir "${CMAKE_CURRENT_BINARY_DIR}/icebreaker")
set(ib_mdir "${ib_dir}/verilated")
set(ib_prefix Vtessera_icebreaker_top)
file(GLOB TESSERA_BOARD_RTL_SOURCES CONFIGURE_DEPENDS "${CMAKE_SOURCE_DIR}/rtl/pico/*.sv"
     "${CMAKE_SOURCE_DIR}/rtl/board/*.sv")
list(SORT TESSERA_BOARD_RTL_SOURCES)
set(ib_svh "${TESSERA_GENERATED_DIR}/${TESSERA_ICEBREAKER_CONFIG}/tessera_config.svh")
# The simulated UART runs at 4 cycles a bit (sim_board.h, kClksPerBit); no waveform support, which
# would only lengthen the compile.
add_custom_command(
  OUTPUT "${ib_dir}/${ib_prefix}__fast.cpp" "${ib_dir}/${ib_prefix}__slow.cpp" "${ib_dir}/${ib_prefix}__stamp.h"
  COMMAND "${VERILATOR_BIN}" --cc -O3 --assert --x-assign fast --x-initial fast -Wall
          --top-module tessera_icebreaker_top -GClksPerBit=4 ${TESSERA_TSIM_VERILATOR_FLAGS}
          --prefix ${ib_prefix} --Mdir "${ib_mdir}"
          "-I${TESSERA_GENERATED_DIR}/${TESSERA_ICEBREAKER_CONFIG}" "-I${TESSERA_RTL_DIR}"
          ${TESSERA_BOARD_RTL_SOURCES}
  COMMAND "${CMAKE_COMMAND}" "-DMDIR=${ib_mdir}" "-DPREFIX=${ib_prefix}" "-DOUT_DIR=${ib_dir}"
          -P "${CMAKE_CURRENT_SOURCE_DIR}/cmake/verilated_sources.cmake"
  DEPENDS ${TESSERA_BOARD_RTL_SOURCES} "${ib_svh}"
          "${CMAKE_CURRENT_SOURCE_DIR}/cmake/verilated_sources.cmake"
  COMMENT "Verilating tessera_icebreaker_top for config ${TESSERA_ICEBREAKER_CONFIG}"
  VERBATIM)
add_library(tessera_icebreaker_rtl STATIC "${ib_dir}/${ib_prefix}__fast.cpp" "${ib_dir}/${ib_prefix}__slow.cpp")
set_target_properties(tessera_icebreaker_rtl PROPERTIES COMPILE_OPTIONS "-w;-g0;-faligned-new;-fcf-protection=none;-fno-sanitize=alignment")
set_source_files_properties("${ib_dir}/${ib_prefix}__fast.cpp" PROPERTIES COMPILE_OPTIONS "${TESSERA_TSIM_OPT}")
set_source_files_properties("${ib_dir}/${ib_prefix}__slow.cpp" PROPERTIES COMPILE_OPTIONS "-O1")
target_include_directories(tessera_icebreaker_rtl SYSTEM PRIVATE "${ib_mdir}")
target_compile_definitions(tessera_icebreaker_rtl PRIVATE ${VL_DEFINES})
target_link_libraries(tessera_icebreaker_rtl PUBLIC tessera_verilated)
add_dependencies(tessera_icebreaker_rtl tessera_generated_headers)

# The harness and the host-link driver (the runtime's own source, so the plugin needs nothing from
# the program that loads it), position-independent for the plugin.
add_library(tessera_icebreaker_sim STATIC board/sim_board.cpp "${CMAKE_SOURCE_DIR}/runtime/src/icebreaker_target.cpp")
target_include_directories(tessera_icebreaker_sim PUBLIC board "${CMAKE_SOURCE_DIR}/runtime/include")
target_include_directories(tessera_icebreaker_sim SYSTEM PRIVATE "${ib_dir}" "${ib_mdir}")
set_source_files_properties(board/sim_board.cpp PROPERTIES OBJECT_DEPENDS "${ib_dir}/${ib_prefix}__stamp.h"
                            COMPILE_DEFINITIONS "${VL_DEFINES}" COMPILE_OPTIONS "-O3")
target_link_libraries(tessera_icebreaker_sim PUBLIC tessera_hw PRIVATE tessera_icebreaker_rtl tessera_verilated)

tessera_add_target_plugin(icebreaker TARGETS icebreaker-sim SOURCES board/target_plugin.cpp
                          LIBRARIES tessera_icebreaker_sim)

add_executable(tessera-fake-icebreaker board/fake_icebreaker.cpp)
target_link_libraries(tessera-fake-icebreaker PRIVATE tessera_icebreaker_sim util)
set(TESSERA_HAVE_ICEBREAKER_SIM ON PARENT_SCOPE)
