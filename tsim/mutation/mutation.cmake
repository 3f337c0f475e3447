# tsim-mut: the RTL with mutations planted by Yosys' mutate pass (tsim/mutation/plant.sh), verilated
# once per config with every mutation in it, one selected per simulator by the target option
# mutant=N; tsim's harness and run protocol unchanged. The mutation testing of the regression
# (tests/mutation, `make mutate`) runs on it. The default build leaves it out: the target
# tessera_plugin_tsim-mut builds it.
set(TESSERA_TSIM_MUT_CONFIGS "default" CACHE STRING
    "Shipped configs the RTL is planted with mutations for (the tsim-mut target; empty: none)")
set(TESSERA_MUTATION_SEED "1" CACHE STRING "Seed of Yosys' sampling of the mutations tsim-mut plants")
find_program(MUT_YOSYS yosys)
if(NOT TESSERA_TSIM_MUT_CONFIGS)
  message(STATUS "tsim-mut: not built (TESSERA_TSIM_MUT_CONFIGS is empty)")
elseif(NOT MUT_YOSYS)
  message(STATUS "tsim-mut: not built (needs Yosys; scripts/install-deps.sh installs it)")
else()

# A netlist of Yosys' simple cells, not the RTL: lint does not apply to it (as for gls).
set(MUT_VERILATOR_FLAGS --cc -O3 --x-assign fast --x-initial fast -Wno-fatal -Wno-lint -Wno-style
    -Wno-UNOPTFLAT -Wno-MULTIDRIVEN --top-module tessera_top)
set(MUT_DEFINES VM_COVERAGE=0 VM_SC=0 VM_TRACE=0 VM_TRACE_FST=0 VM_TRACE_VCD=0)
set(MUT_SAMPLE "${CMAKE_CURRENT_SOURCE_DIR}/mutation/sample.tsv")
set(MUT_PLANT "${CMAKE_CURRENT_SOURCE_DIR}/mutation/plant.sh")
# One Yosys run at a time (gls/ may have declared the pool already).
get_property(mut_pools GLOBAL PROPERTY JOB_POOLS)
if(NOT "tessera_yosys=1" IN_LIST mut_pools)
  set_property(GLOBAL APPEND PROPERTY JOB_POOLS tessera_yosys=1)
endif()

set(mut_decls "")
set(mut_entries "")
set(mut_sources "")
set(mut_libs "")
set(mut_includes "")
foreach(cfg IN LISTS TESSERA_TSIM_MUT_CONFIGS)
  if(NOT EXISTS "${CMAKE_SOURCE_DIR}/hw/configs/${cfg}.json")
    message(FATAL_ERROR "TESSERA_TSIM_MUT_CONFIGS: '${cfg}' is not a shipped config (hw/configs/${cfg}.json)")
  endif()
  string(MAKE_C_IDENTIFIER "${cfg}" cfg_id)
  set(prefix "Vtessera_top_mut_${cfg_id}")
  set(out "${CMAKE_CURRENT_BINARY_DIR}/mutation/${cfg}")
  set(mdir "${out}/verilated")
  set(svh "${TESSERA_GENERATED_DIR}/${cfg}/tessera_config.svh")
  add_custom_command(
    OUTPUT "${out}/mutants.v" "${out}/mutants.tsv" "${out}/mutant_count.h"
    COMMAND bash "${MUT_PLANT}" --yosys "${MUT_YOSYS}" --include "${TESSERA_GENERATED_DIR}/${cfg}"
            --sample "${MUT_SAMPLE}" --seed "${TESSERA_MUTATION_SEED}" --out "${out}" ${TESSERA_RTL_SOURCES}
    DEPENDS ${TESSERA_RTL_SOURCES} ${TESSERA_RTL_INCLUDES} "${svh}" "${MUT_SAMPLE}" "${MUT_PLANT}"
    COMMENT "Planting mutations in tessera_top for config ${cfg} (Yosys mutate)"
    JOB_POOL tessera_yosys
    VERBATIM)
  tessera_verilate(OUT_DIR "${out}" PREFIX ${prefix} FLAGS ${MUT_VERILATOR_FLAGS} SOURCES "${out}/mutants.v"
                   LOG "${out}/verilator.log" COMMENT "Verilating the mutant netlist of config ${cfg}")
  # Compile time over speed (a netlist, and most mutants die in the first program): -O1.
  add_library(tessera_tsim_mut_rtl_${cfg_id} STATIC EXCLUDE_FROM_ALL "${out}/${prefix}__fast.cpp" "${out}/${prefix}__slow.cpp")
  set_target_properties(tessera_tsim_mut_rtl_${cfg_id} PROPERTIES
                        COMPILE_OPTIONS "${TESSERA_GENERATED_MODEL_OPTIONS};-O1"
                        POSITION_INDEPENDENT_CODE ON)
  target_include_directories(tessera_tsim_mut_rtl_${cfg_id} SYSTEM PRIVATE "${mdir}")
  target_compile_definitions(tessera_tsim_mut_rtl_${cfg_id} PRIVATE ${MUT_DEFINES})
  target_link_libraries(tessera_tsim_mut_rtl_${cfg_id} PUBLIC tessera_verilated)

  set(MUT_CONFIG "${cfg}")
  set(MUT_ID "${cfg_id}")
  set(MUT_PREFIX "${prefix}")
  configure_file(mutation/model.cpp.in "${out}/model_${cfg_id}.cpp" @ONLY)
  set_source_files_properties("${out}/model_${cfg_id}.cpp" PROPERTIES
                              OBJECT_DEPENDS "${out}/${prefix}__stamp.h;${out}/mutant_count.h"
                              COMPILE_DEFINITIONS "${MUT_DEFINES}" INCLUDE_DIRECTORIES "${out}")
  list(APPEND mut_sources "${out}/model_${cfg_id}.cpp")
  list(APPEND mut_libs tessera_tsim_mut_rtl_${cfg_id})
  list(APPEND mut_includes "${mdir}")
  string(APPEND mut_decls
         "int mutantCount_${cfg_id}();\n"
         "std::unique_ptr<Model> createMutantModel_${cfg_id}(Bench& bench, int busBytes, int mutant);\n")
  string(APPEND mut_entries "    {\"${cfg}\", &mutantCount_${cfg_id}, &createMutantModel_${cfg_id}},\n")
endforeach()
set(MUT_DECLARATIONS "${mut_decls}")
set(MUT_ENTRIES "${mut_entries}")
configure_file(mutation/registry.cpp.in "${CMAKE_CURRENT_BINARY_DIR}/mutation/registry.cpp" @ONLY)

add_library(tessera_tsim_mut STATIC EXCLUDE_FROM_ALL
  src/simulator.cpp src/options.cpp src/axi_memory.cpp
  "${CMAKE_CURRENT_BINARY_DIR}/mutation/registry.cpp" ${mut_sources})
set_target_properties(tessera_tsim_mut PROPERTIES POSITION_INDEPENDENT_CODE ON)
target_include_directories(tessera_tsim_mut PUBLIC include PRIVATE src)
target_include_directories(tessera_tsim_mut SYSTEM PRIVATE ${mut_includes})
target_link_libraries(tessera_tsim_mut PUBLIC tessera_hw PRIVATE ${mut_libs} tessera_verilated)
add_dependencies(tessera_tsim_mut tessera_generated_headers)

# Listed by name only (as tsim-cov is): it cannot run without its mutant option, so the runtime
# suites, which run on every listed target with no options, leave it out. Built on request (make
# mutate, and ctest's mutation tests through their fixture): the planting and the netlist's compile
# are minutes the default build and suite leave out.
tessera_add_target_plugin(tsim-mut ON_REQUEST DEVICE_TARGETS tsim-mut SOURCES mutation/target_plugin.cpp
                          LIBRARIES tessera_tsim_mut)
endif()
