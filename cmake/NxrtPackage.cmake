# `cmake --install` gives EP authors find_package(nxrt) -> nxrt::plugin_api:
# the ABI and SDK headers plus this package, as the nxrt_plugin_sdk component
# (`cmake --install <build> --component nxrt_plugin_sdk` installs just that).
include(CMakePackageConfigHelpers)
set(NXRT_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/nxrt)
install(EXPORT nxrtTargets NAMESPACE nxrt:: DESTINATION ${NXRT_PACKAGE_DIR}
        COMPONENT nxrt_plugin_sdk)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/nxrtConfig.cmake.in
  ${PROJECT_BINARY_DIR}/nxrtConfig.cmake
  INSTALL_DESTINATION ${NXRT_PACKAGE_DIR})
# The plugin API is header-only C, so the package fits any architecture.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/nxrtConfigVersion.cmake
  COMPATIBILITY SameMajorVersion ARCH_INDEPENDENT)
install(FILES ${PROJECT_BINARY_DIR}/nxrtConfig.cmake ${PROJECT_BINARY_DIR}/nxrtConfigVersion.cmake
        DESTINATION ${NXRT_PACKAGE_DIR} COMPONENT nxrt_plugin_sdk)
