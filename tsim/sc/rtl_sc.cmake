# rtl-sc build: verilates the RTL with --sc per config (own prefix and directory) and lists the SystemC testbench sources.
# Included by tsim/CMakeLists.txt when SystemC is found; the caller adds rtl_sc_sources, rtl_sc_includes and
# rtl_sc_libs to tessera_tsim.
set(rtl_sc_sources "${CMAKE_CURRENT_SOURCE_DIR}/sc/testbench.cpp" "${CMAKE_CURRENT_SOURCE_DIR}/sc/sc_model.cpp")
set(rtl_sc_includes "")
set(rtl_sc_libs "")
# No tracing in the SystemC models: rtl-sc is for co-simulation and timing; waveforms come from tsim.
set(VERILATOR_SC_FLAGS --sc -O3 --assert --x-assign fast --x-initial fast -Wall --top-module tessera_top
    ${TESSERA_TSIM_VERILATOR_FLAGS})

# One config: a macro so the lists above grow in the caller's scope.
macro(tessera_rtl_sc_model cfg cfg_id)
  set(sc_prefix "Vtessera_top_sc_${cfg_id}")
  set(sc_out "${CMAKE_CURRENT_BINARY_DIR}/${cfg}/sc")
  set(sc_mdir "${sc_out}/verilated")
  tessera_verilate(OUT_DIR "${sc_out}" PREFIX ${sc_prefix}
                   FLAGS ${VERILATOR_SC_FLAGS} "-I${TESSERA_GENERATED_DIR}/${cfg}" "-I${TESSERA_RTL_DIR}"
                   SOURCES ${TESSERA_RTL_SOURCES}
                   DEPENDS ${TESSERA_RTL_INCLUDES} "${TESSERA_GENERATED_DIR}/${cfg}/tessera_config.svh"
                   COMMENT "Verilating tessera_top to SystemC for config ${cfg}")
  # Generated code: Verilator's and SystemC's flags, not the project's warnings (as for tsim's models).
  add_library(tessera_rtl_sc_${cfg_id} STATIC "${sc_out}/${sc_prefix}__fast.cpp" "${sc_out}/${sc_prefix}__slow.cpp")
  set_target_properties(tessera_rtl_sc_${cfg_id} PROPERTIES COMPILE_OPTIONS "${TESSERA_GENERATED_MODEL_OPTIONS}")
  set_source_files_properties("${sc_out}/${sc_prefix}__fast.cpp" PROPERTIES COMPILE_OPTIONS "${TESSERA_TSIM_OPT}")
  set_source_files_properties("${sc_out}/${sc_prefix}__slow.cpp" PROPERTIES COMPILE_OPTIONS "-O1")
  target_include_directories(tessera_rtl_sc_${cfg_id} SYSTEM PRIVATE "${sc_mdir}" "${VL_INCLUDE}" "${VL_INCLUDE}/vltstd"
                             "${SYSTEMC_INCLUDE_DIR}")
  target_compile_definitions(tessera_rtl_sc_${cfg_id} PRIVATE ${VL_SC_DEFINES})
  add_dependencies(tessera_rtl_sc_${cfg_id} tessera_generated_headers)

  # The adapter instantiated for this model (project code).
  set(TSIM_CONFIG "${cfg}")
  set(TSIM_CONFIG_ID "${cfg_id}")
  set(TSIM_SC_PREFIX "${sc_prefix}")
  configure_file("${CMAKE_CURRENT_SOURCE_DIR}/sc/model_sc.cpp.in" "${sc_out}/model_sc_${cfg_id}.cpp" @ONLY)
  set_source_files_properties("${sc_out}/model_sc_${cfg_id}.cpp" PROPERTIES OBJECT_DEPENDS "${sc_out}/${sc_prefix}__stamp.h")
  list(APPEND rtl_sc_sources "${sc_out}/model_sc_${cfg_id}.cpp")
  list(APPEND rtl_sc_includes "${sc_out}" "${sc_mdir}")
  list(APPEND rtl_sc_libs tessera_rtl_sc_${cfg_id})
endmacro()
