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
set(IB_VERILATOR_FLAGS --cc -O3 --assert --x-assign fast --x-initial fast -Wall
    --top-module tessera_icebreaker_top -GClksPerBit=4 ${TESSERA_TSIM_VERILATOR_FLAGS}
    "-I${TESSERA_GENERATED_DIR}/${TESSERA_ICEBREAKER_CONFIG}" "-I${TESSERA_RTL_DIR}")
tessera_verilate(OUT_DIR "${ib_dir}" PREFIX ${ib_prefix} FLAGS ${IB_VERILATOR_FLAGS}
                 SOURCES ${TESSERA_BOARD_RTL_SOURCES} DEPENDS "${ib_svh}"
                 COMMENT "Verilating tessera_icebreaker_top for config ${TESSERA_ICEBREAKER_CONFIG}")
add_library(tessera_icebreaker_rtl STATIC "${ib_dir}/${ib_prefix}__fast.cpp" "${ib_dir}/${ib_prefix}__slow.cpp")
set_target_properties(tessera_icebreaker_rtl PROPERTIES COMPILE_OPTIONS "${TESSERA_GENERATED_MODEL_OPTIONS}")
set_source_files_properties("${ib_dir}/${ib_prefix}__fast.cpp" PROPERTIES COMPILE_OPTIONS "${TESSERA_TSIM_OPT}")
set_source_files_properties("${ib_dir}/${ib_prefix}__slow.cpp" PROPERTIES COMPILE_OPTIONS "-O1")
target_include_directories(tessera_icebreaker_rtl SYSTEM PRIVATE "${ib_mdir}")
target_compile_definitions(tessera_icebreaker_rtl PRIVATE ${VL_DEFINES})
target_link_libraries(tessera_icebreaker_rtl PUBLIC tessera_verilated)
add_dependencies(tessera_icebreaker_rtl tessera_generated_headers)

# The harness, over the iCEBreaker driver the icebreaker target links too (runtime/icebreaker): the
# UART lines (no verilated header), then the plain model behind it.
add_library(tessera_icebreaker_harness STATIC board/sim_board.cpp board/board_target.cpp)
target_include_directories(tessera_icebreaker_harness PUBLIC board)
set_source_files_properties(board/sim_board.cpp PROPERTIES COMPILE_OPTIONS "-O3")
target_link_libraries(tessera_icebreaker_harness PUBLIC tessera_icebreaker_driver)
add_library(tessera_icebreaker_sim STATIC board/rtl_board_model.cpp)
target_include_directories(tessera_icebreaker_sim SYSTEM PRIVATE "${ib_dir}" "${ib_mdir}")
set_source_files_properties(board/rtl_board_model.cpp PROPERTIES OBJECT_DEPENDS "${ib_dir}/${ib_prefix}__stamp.h"
                            COMPILE_DEFINITIONS "${VL_DEFINES}" COMPILE_OPTIONS "-O3")
target_link_libraries(tessera_icebreaker_sim PUBLIC tessera_icebreaker_harness PRIVATE tessera_icebreaker_rtl tessera_verilated)

tessera_add_target_plugin(icebreaker-sim TARGETS icebreaker-sim SOURCES board/target_plugin.cpp
                          LIBRARIES tessera_icebreaker_sim)

# icebreaker-sim-cov: the board top verilated again with line, toggle and cover-point coverage
# (tsim-cov's flags), behind the same harness; named only (it needs coverage=DIR). Built with tsim-cov
# (not where TESSERA_TSIM_COV_CONFIGS is empty, as in the sanitizer preset).
if(TARGET tessera_verilated_cov)
set(ibc_dir "${CMAKE_CURRENT_BINARY_DIR}/icebreaker_cov")
set(ibc_mdir "${ibc_dir}/verilated")
set(ibc_prefix Vtessera_icebreaker_top_cov)
tessera_verilate(OUT_DIR "${ibc_dir}" PREFIX ${ibc_prefix}
                 FLAGS ${IB_VERILATOR_FLAGS} --coverage-line --coverage-toggle --coverage-user
                 SOURCES ${TESSERA_BOARD_RTL_SOURCES} DEPENDS "${ib_svh}"
                 COMMENT "Verilating tessera_icebreaker_top with coverage for config ${TESSERA_ICEBREAKER_CONFIG}")
add_library(tessera_icebreaker_cov_rtl STATIC "${ibc_dir}/${ibc_prefix}__fast.cpp" "${ibc_dir}/${ibc_prefix}__slow.cpp")
set_target_properties(tessera_icebreaker_cov_rtl PROPERTIES
                      COMPILE_OPTIONS "${TESSERA_GENERATED_MODEL_OPTIONS};-O1"
                      POSITION_INDEPENDENT_CODE ON)
# Its slow half runs once per model: -O0, as for tsim-cov (tsim/coverage/coverage.cmake).
set_source_files_properties("${ibc_dir}/${ibc_prefix}__slow.cpp" PROPERTIES COMPILE_OPTIONS -O0)
target_include_directories(tessera_icebreaker_cov_rtl SYSTEM PRIVATE "${ibc_mdir}")
target_compile_definitions(tessera_icebreaker_cov_rtl PRIVATE ${COV_DEFINES})
target_link_libraries(tessera_icebreaker_cov_rtl PUBLIC tessera_verilated_cov)
add_dependencies(tessera_icebreaker_cov_rtl tessera_generated_headers)
add_library(tessera_icebreaker_sim_cov STATIC board/coverage_board_model.cpp)
target_include_directories(tessera_icebreaker_sim_cov SYSTEM PRIVATE "${ibc_dir}" "${ibc_mdir}")
set_source_files_properties(board/coverage_board_model.cpp PROPERTIES OBJECT_DEPENDS "${ibc_dir}/${ibc_prefix}__stamp.h"
                            COMPILE_DEFINITIONS "${COV_DEFINES}")
target_link_libraries(tessera_icebreaker_sim_cov PUBLIC tessera_icebreaker_harness
                      PRIVATE tessera_icebreaker_cov_rtl tessera_coverage_totals tessera_verilated_cov)
tessera_add_target_plugin(icebreaker-sim-cov DEVICE_TARGETS icebreaker-sim-cov SOURCES board/target_plugin_cov.cpp
                          LIBRARIES tessera_icebreaker_sim_cov)
set(TESSERA_HAVE_ICEBREAKER_SIM_COV ON PARENT_SCOPE)
endif()

add_executable(tessera-fake-icebreaker board/fake_icebreaker.cpp)
target_link_libraries(tessera-fake-icebreaker PRIVATE tessera_icebreaker_sim util)
set(TESSERA_HAVE_ICEBREAKER_SIM ON PARENT_SCOPE)

# icebreaker-gls (option TESSERA_BUILD_ICEBREAKER_GLS, `make gls`): the bitstream's gate-level netlist
# (synth_ice40 -abc9 with the SPRAMs, as scripts/fpga/icebreaker_bitstream.sh runs it, but with the
# simulation's UART divisor), verilated with Yosys' iCE40 cell models behind the same UART harness,
# and tessera_icebreaker_gls_regress, which runs random programs on it against fsim (ctest label gls).
option(TESSERA_BUILD_ICEBREAKER_GLS "Build the iCEBreaker bitstream's gate-level netlist simulation (slow to build)" OFF)
find_program(ICEBREAKER_YOSYS yosys)
find_path(ICEBREAKER_ICE40_CELLS ice40/cells_sim.v PATHS /usr/share/yosys /usr/local/share/yosys NO_DEFAULT_PATH)
if(TESSERA_BUILD_ICEBREAKER_GLS AND ICEBREAKER_YOSYS AND ICEBREAKER_ICE40_CELLS)
  set(ibg_dir "${CMAKE_CURRENT_BINARY_DIR}/icebreaker_gls")
  set(ibg_mdir "${ibg_dir}/verilated")
  string(JOIN " " ibg_sources ${TESSERA_BOARD_RTL_SOURCES})
  file(MAKE_DIRECTORY "${ibg_dir}")
  file(WRITE "${ibg_dir}/netlist.ys"
       "read_verilog -sv -DTESSERA_ICE40_SPRAM -I${TESSERA_GENERATED_DIR}/${TESSERA_ICEBREAKER_CONFIG} ${ibg_sources}\n"
       "chparam -set ClksPerBit 4 tessera_icebreaker_top\n"
       "synth_ice40 -abc9 -top tessera_icebreaker_top\n"
       "write_verilog -noattr ${ibg_dir}/netlist.v\n")
  add_custom_command(
    OUTPUT "${ibg_dir}/netlist.v"
    COMMAND "${ICEBREAKER_YOSYS}" -q -l "${ibg_dir}/yosys.log" -s "${ibg_dir}/netlist.ys"
    DEPENDS ${TESSERA_BOARD_RTL_SOURCES} "${ib_svh}"
    COMMENT "Synthesizing the iCEBreaker board top to its iCE40 gate-level netlist (Yosys)"
    VERBATIM)
  # The netlist keeps the board top's ports, so the harness is icebreaker-sim's own.
  tessera_verilate(OUT_DIR "${ibg_dir}" PREFIX ${ib_prefix}
                   FLAGS --cc -O1 --x-assign unique --x-initial unique -Wno-fatal -Wno-lint -Wno-style
                         --top-module tessera_icebreaker_top -DNO_ICE40_DEFAULT_ASSIGNMENTS
                   SOURCES "${ICEBREAKER_ICE40_CELLS}/ice40/cells_sim.v" "${ibg_dir}/netlist.v"
                   LOG "${ibg_dir}/verilator.log" COMMENT "Verilating the iCEBreaker gate-level netlist")
  add_library(tessera_icebreaker_gls_model STATIC "${ibg_dir}/${ib_prefix}__fast.cpp" "${ibg_dir}/${ib_prefix}__slow.cpp")
  set_target_properties(tessera_icebreaker_gls_model PROPERTIES COMPILE_OPTIONS "${TESSERA_GENERATED_MODEL_OPTIONS};-O1")
  target_include_directories(tessera_icebreaker_gls_model SYSTEM PRIVATE "${ibg_mdir}")
  target_compile_definitions(tessera_icebreaker_gls_model PRIVATE ${VL_DEFINES})
  target_link_libraries(tessera_icebreaker_gls_model PUBLIC tessera_verilated)
  # The harness compiled again against the netlist's model, over the same driver.
  add_executable(tessera_icebreaker_gls_regress board/rtl_board_model.cpp "${CMAKE_SOURCE_DIR}/tests/icebreaker/gls_regress.cpp")
  target_include_directories(tessera_icebreaker_gls_regress PRIVATE board)
  target_include_directories(tessera_icebreaker_gls_regress SYSTEM PRIVATE "${ibg_dir}" "${ibg_mdir}")
  # rtl_board_model.cpp's properties are the directory's (icebreaker-sim's model): the netlist's
  # model header comes first through a target of its own.
  add_custom_target(tessera_icebreaker_gls_verilated DEPENDS "${ibg_dir}/${ib_prefix}__stamp.h")
  add_dependencies(tessera_icebreaker_gls_regress tessera_icebreaker_gls_verilated)
  target_compile_definitions(tessera_icebreaker_gls_regress PRIVATE ${VL_DEFINES})
  target_link_libraries(tessera_icebreaker_gls_regress PRIVATE tessera_icebreaker_gls_model tessera_icebreaker_harness
                                                               tessera_regress tessera_verilated)
endif()
