# `cmake --install` gives EP authors find_package(nxrt) -> nxrt::plugin_api.
include(CMakePackageConfigHelpers)
install(EXPORT nxrtTargets NAMESPACE nxrt:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/nxrt)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/nxrtConfig.cmake.in
  ${PROJECT_BINARY_DIR}/nxrtConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/nxrt)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/nxrtConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/nxrtConfig.cmake ${PROJECT_BINARY_DIR}/nxrtConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/nxrt)
