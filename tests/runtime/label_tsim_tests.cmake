# ctest include file: the runtime tests that run on tsim also carry the `tsim` label (ctest -L tsim), those on rtl-sc `rtl-sc`.
foreach(test IN LISTS tessera_runtime_tests_list)
  if(test MATCHES "/tsim_")
    set_tests_properties("${test}" PROPERTIES LABELS "runtime;tsim")
  elseif(test MATCHES "/rtl_sc_" OR test MATCHES "RtlSc")
    set_tests_properties("${test}" PROPERTIES LABELS "runtime;rtl-sc")
  endif()
endforeach()
