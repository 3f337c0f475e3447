# Installing Tessera: the CLI and its plugins, the libraries with their public headers, a CMake package
# (find_package(Tessera) -> Tessera::runtime, Tessera::compiler_op, Tessera::compiler_model,
# Tessera::compiler_graph, ...), a pkg-config file, and a .deb through CPack (docs/install.md).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The libraries a program links, in dependency order; each exported as Tessera::<name without tessera_>.
set(tessera_installed_libraries tessera_support tessera_host_contract tessera_host_interface tessera_hw tessera_runtime
                                tessera_compiler_op tessera_compiler_ir tessera_compiler_host tessera_compiler_model
                                tessera_compiler_graph)
foreach(lib ${tessera_installed_libraries})
  string(REGEX REPLACE "^tessera_" "" export_name "${lib}")
  set_target_properties(${lib} PROPERTIES EXPORT_NAME "${export_name}")
endforeach()
install(TARGETS ${tessera_installed_libraries} EXPORT TesseraTargets
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")

# Public headers of the installed libraries: support (the error type, formatting, file I/O), hw
# (configs, ISA, fsim), runtime (VTA's driver.h and runtime.h, Tessera's C extensions, the C++ Target
# API), the compiler's op, ir, host, model (compiled models and their C API) and graph, and the
# generated host-interface contract they include.
foreach(dir support hw runtime compiler/op compiler/ir compiler/host compiler/model compiler/graph)
  install(DIRECTORY "${PROJECT_SOURCE_DIR}/${dir}/include/" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
          FILES_MATCHING PATTERN "*.h")
endforeach()
install(DIRECTORY "${TESSERA_GENERATED_DIR}/host/tessera" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
        FILES_MATCHING PATTERN "*.h")
# The shipped configs (also built into the libraries), for tools and FPGA flows that read the JSON.
install(FILES ${TESSERA_CONFIG_FILES} DESTINATION "${CMAKE_INSTALL_DATADIR}/tessera/configs")

set(tessera_cmake_dir "${CMAKE_INSTALL_LIBDIR}/cmake/Tessera")
install(EXPORT TesseraTargets NAMESPACE Tessera:: DESTINATION "${tessera_cmake_dir}")
configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/TesseraConfig.cmake.in"
                              "${PROJECT_BINARY_DIR}/TesseraConfig.cmake" INSTALL_DESTINATION "${tessera_cmake_dir}")
write_basic_package_version_file("${PROJECT_BINARY_DIR}/TesseraConfigVersion.cmake"
                                 COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/TesseraConfig.cmake" "${PROJECT_BINARY_DIR}/TesseraConfigVersion.cmake"
        DESTINATION "${tessera_cmake_dir}")

# pkg-config: the static libraries in link order, then what they need from the system.
file(RELATIVE_PATH TESSERA_PC_UP "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
configure_file("${PROJECT_SOURCE_DIR}/cmake/tessera.pc.in" "${PROJECT_BINARY_DIR}/tessera.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/tessera.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")

# `cpack -G DEB` in the build directory (or `make package`): everything above in one package, its
# shared-library dependencies found by dpkg-shlibdeps.
set(CPACK_PACKAGE_NAME "tessera")
set(CPACK_PACKAGE_VENDOR "Tessera")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "VTA-compatible deep-learning accelerator stack: simulators, runtime, compiler, CLI")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_CONTACT "Tessera developers <tessera@localhost>")
set(CPACK_GENERATOR "DEB")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION "science")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
include(CPack)
