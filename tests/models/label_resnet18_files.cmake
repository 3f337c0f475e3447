# ctest include file: the QDQ file whole on the SystemC and HLS simulators is `make test-full`'s (label full); `make test` runs it on fsim and tsim, and the layer suite on every simulator (tests/compiler).
foreach(test IN LISTS tessera_model_tests_TESTS)
  if(test MATCHES "Resnet18OnTarget\\.QdqFileRunsBitExactWithTheHostReference/(hls|hls_sc|rtl_sc)( |$)")  # names end in "  # GetParam() = ..."
    set_tests_properties("${test}" PROPERTIES LABELS "slow;full")
  endif()
endforeach()
