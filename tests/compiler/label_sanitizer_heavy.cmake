# ctest include file: the ResNet-18 layer suite on the simulators other than fsim also carries the label sanitizer-heavy (see the Makefile's test-sanitize).
foreach(test IN LISTS tessera_compiler_tests_TESTS)
  if(test MATCHES "ResNet18\\.EveryLayerMatchesTheReference/" AND NOT test MATCHES "/fsim_")
    set_tests_properties("${test}" PROPERTIES LABELS "compiler;sanitizer-heavy")
  endif()
endforeach()
