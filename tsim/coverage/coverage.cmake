# tsim-cov: the RTL verilated with Verilator's line, toggle and user (cover property) coverage, as
# its own plugin so that tsim keeps its speed; tsim's harness and run protocol unchanged.
set(TESSERA_TSIM_COV_CONFIGS "default" CACHE STRING
    "Shipped configs the RTL is verilated for with coverage (the tsim-cov target; empty: none)")
if(NOT TESSERA_TSIM_COV_CONFIGS)
  message(STATUS "tsim-cov: not built (TESSERA_TSIM_COV_CONFIGS is empty)")
else()

# Verilator's run-time library again, with coverage compiled in (and the FST writer the harness
# refers to, though this model traces nothing).
set(COV_DEFINES VM_COVERAGE=1 VM_SC=0 VM_TRACE=0 VM_TRACE_FST=0 VM_TRACE_VCD=0)
add_library(tessera_verilated_cov STATIC
  "${VL_INCLUDE}/verilated.cpp" "${VL_INCLUDE}/verilated_threads.cpp" "${VL_INCLUDE}/verilated_cov.cpp"
  "${VL_INCLUDE}/verilated_fst_c.cpp")
set_target_properties(tessera_verilated_cov PROPERTIES COMPILE_OPTIONS "-O2;-w;-fno-sanitize=undefined"
                      POSITION_INDEPENDENT_CODE ON)
target_include_directories(tessera_verilated_cov SYSTEM PUBLIC "${VL_INCLUDE}" "${VL_INCLUDE}/vltstd")
target_compile_definitions(tessera_verilated_cov PRIVATE ${COV_DEFINES})
target_link_libraries(tessera_verilated_cov PUBLIC Threads::Threads ZLIB::ZLIB atomic)

# The same flags as tsim's model but no waveform support, and coverage of every line, every bit's
# toggles and every cover property (rtl/, docs/verification.md).
set(COV_VERILATOR_FLAGS --cc -O3 --assert --x-assign fast --x-initial fast -Wall --top-module tessera_top
    --coverage-line --coverage-toggle --coverage-user ${TESSERA_TSIM_VERILATOR_FLAGS})

set(cov_decls "")
set(cov_entries "")
set(cov_sources "")
set(cov_libs "")
set(cov_includes "")
foreach(cfg IN LISTS TESSERA_TSIM_COV_CONFIGS)
  if(NOT EXISTS "${CMAKE_SOURCE_DIR}/hw/configs/${cfg}.json")
    message(FATAL_ERROR "TESSERA_TSIM_COV_CONFIGS: '${cfg}' is not a shipped config (hw/configs/${cfg}.json)")
  endif()
  string(MAKE_C_IDENTIFIER "${cfg}" cfg_id)
  set(prefix "Vtessera_top_cov_${cfg_id}")
  set(out "${CMAKE_CURRENT_BINARY_DIR}/coverage/${cfg}")
  set(mdir "${out}/verilated")
  set(svh "${TESSERA_GENERATED_DIR}/${cfg}/tessera_config.svh")
  tessera_verilate(OUT_DIR "${out}" PREFIX ${prefix}
                   FLAGS ${COV_VERILATOR_FLAGS} "-I${TESSERA_GENERATED_DIR}/${cfg}" "-I${TESSERA_RTL_DIR}"
                   SOURCES ${TESSERA_RTL_SOURCES} DEPENDS ${TESSERA_RTL_INCLUDES} "${svh}"
                   COMMENT "Verilating tessera_top with coverage for config ${cfg}")
  # Coverage code is mostly counter increments: -O1 compiles it several times faster than -O2 for
  # little speed (it runs a regression, not a network). Its slow half (construction, the
  # registration of every coverage point) runs once per model and took most of the compile: -O0.
  add_library(tessera_tsim_cov_rtl_${cfg_id} STATIC "${out}/${prefix}__fast.cpp" "${out}/${prefix}__slow.cpp")
  set_target_properties(tessera_tsim_cov_rtl_${cfg_id} PROPERTIES
                        COMPILE_OPTIONS "${TESSERA_GENERATED_MODEL_OPTIONS};-O1"
                        POSITION_INDEPENDENT_CODE ON)
  set_source_files_properties("${out}/${prefix}__slow.cpp" PROPERTIES COMPILE_OPTIONS -O0)
  target_include_directories(tessera_tsim_cov_rtl_${cfg_id} SYSTEM PRIVATE "${mdir}")
  target_compile_definitions(tessera_tsim_cov_rtl_${cfg_id} PRIVATE ${COV_DEFINES})
  target_link_libraries(tessera_tsim_cov_rtl_${cfg_id} PUBLIC tessera_verilated_cov)
  add_dependencies(tessera_tsim_cov_rtl_${cfg_id} tessera_generated_headers)

  set(COV_CONFIG "${cfg}")
  set(COV_ID "${cfg_id}")
  set(COV_PREFIX "${prefix}")
  configure_file(coverage/model.cpp.in "${out}/model_${cfg_id}.cpp" @ONLY)
  set_source_files_properties("${out}/model_${cfg_id}.cpp" PROPERTIES OBJECT_DEPENDS "${out}/${prefix}__stamp.h"
                              COMPILE_DEFINITIONS "${COV_DEFINES}")
  list(APPEND cov_sources "${out}/model_${cfg_id}.cpp")
  list(APPEND cov_libs tessera_tsim_cov_rtl_${cfg_id})
  list(APPEND cov_includes "${out}" "${mdir}")
  string(APPEND cov_decls
         "std::unique_ptr<Model> createCoverageModel_${cfg_id}(Bench& bench, int busBytes, const std::string& coverageDir);\n")
  string(APPEND cov_entries "    {\"${cfg}\", &createCoverageModel_${cfg_id}},\n")
endforeach()
set(COV_DECLARATIONS "${cov_decls}")
set(COV_ENTRIES "${cov_entries}")
configure_file(coverage/registry.cpp.in "${CMAKE_CURRENT_BINARY_DIR}/coverage/registry.cpp" @ONLY)

# The per-process totals every coverage model (tsim-cov's, icebreaker-sim-cov's) adds to.
add_library(tessera_coverage_totals STATIC coverage/coverage_totals.cpp)
set_target_properties(tessera_coverage_totals PROPERTIES POSITION_INDEPENDENT_CODE ON)
target_include_directories(tessera_coverage_totals PUBLIC coverage)
target_link_libraries(tessera_coverage_totals PRIVATE tessera_support)

add_library(tessera_tsim_cov STATIC
  src/simulator.cpp src/options.cpp src/axi_memory.cpp
  "${CMAKE_CURRENT_BINARY_DIR}/coverage/registry.cpp" ${cov_sources})
set_target_properties(tessera_tsim_cov PROPERTIES POSITION_INDEPENDENT_CODE ON)
target_include_directories(tessera_tsim_cov PUBLIC include PRIVATE src coverage)
target_include_directories(tessera_tsim_cov SYSTEM PRIVATE ${cov_includes})
target_link_libraries(tessera_tsim_cov PUBLIC tessera_hw PRIVATE ${cov_libs} tessera_coverage_totals tessera_verilated_cov)
add_dependencies(tessera_tsim_cov tessera_generated_headers)

# Listed by name only (as a board is): it cannot run without its coverage directory, so the
# runtime suites, which run on every listed target with no options, leave it out.
tessera_add_target_plugin(tsim-cov DEVICE_TARGETS tsim-cov SOURCES coverage/target_plugin.cpp
                          LIBRARIES tessera_tsim_cov)
endif()
