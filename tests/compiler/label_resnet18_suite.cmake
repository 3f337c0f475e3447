# ctest include file: the ResNet-18 layer suite's labels beyond "compiler". On the simulators other than fsim it is sanitizer-heavy (see the Makefile's test-sanitize); there `make test` runs it on `default` only and `make test-full` on the other configs (label full).
foreach(test IN LISTS tessera_compiler_tests_TESTS)
  if(test MATCHES "ResNet18\\.EveryLayerMatchesTheReference/" AND NOT test MATCHES "/fsim_")
    if(test MATCHES "_default( |$)")  # discovered names end in "  # GetParam() = ..."
      set_tests_properties("${test}" PROPERTIES LABELS "compiler;sanitizer-heavy" COST 45)  # COST: tests/mutation/CMakeLists.txt
    else()
      set_tests_properties("${test}" PROPERTIES LABELS "compiler;sanitizer-heavy;full")
    endif()
  endif()
endforeach()
