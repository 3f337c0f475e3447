# ctest include file: the SystemC testbench's own tests carry `tsim` and their model's label.
foreach(test IN LISTS tessera_rtl_sc_tests_list)
  set_tests_properties("${test}" PROPERTIES LABELS "tsim;rtl-sc")
endforeach()
foreach(test IN LISTS tessera_hls_sc_tests_list)
  set_tests_properties("${test}" PROPERTIES LABELS "tsim;hls-sc")
endforeach()
