# The sources of tessera_hw, relative to hw/: one list for hw/CMakeLists.txt and for the cross
# build of tests/cross, which compiles the same library for another architecture.
set(TESSERA_HW_SOURCES
  src/config.cpp src/config_space.cpp src/area.cpp src/isa.cpp src/asm.cpp src/dram.cpp src/program.cpp src/counters.cpp src/fsim.cpp
  src/fsim_kernels.cpp src/fsim_kernels_generic.cpp src/fsim_kernels_avx2.cpp src/fsim_kernels_avx512.cpp
  src/fsim_kernels_vnni.cpp src/generate.cpp src/run_error.cpp src/dep_stream.cpp src/built_configs.cpp
  src/insn_trace.cpp src/hls_outcome.cpp)
