# ctest include file: the runtime tests that run on tsim also carry the `tsim` label (ctest -L tsim).
foreach(test IN LISTS tessera_runtime_tests_list)
  if(test MATCHES "/tsim_")
    set_tests_properties("${test}" PROPERTIES LABELS "runtime;tsim")
  endif()
endforeach()
