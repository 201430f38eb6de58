# `cmake --install` gives find_package(nxrt) two components:
#  - nxrt_plugin_sdk, for EP authors: nxrt::plugin_api, the ABI and SDK
#    headers (`cmake --install <build> --component nxrt_plugin_sdk` installs
#    just that);
#  - nxrt_runtime, for applications: nxrt::runtime (libnxrt and its C++ API),
#    the cpu plugin (and the cuda one where built) beside libnxrt, where the
#    host looks for plugins, and the nxrt command.
# find_package(nxrt COMPONENTS runtime) fails where the runtime is not installed.
include(CMakePackageConfigHelpers)
set(NXRT_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/nxrt)
install(EXPORT nxrtTargets NAMESPACE nxrt:: DESTINATION ${NXRT_PACKAGE_DIR}
        COMPONENT nxrt_plugin_sdk)
install(EXPORT nxrtRuntimeTargets NAMESPACE nxrt:: DESTINATION ${NXRT_PACKAGE_DIR}
        COMPONENT nxrt_runtime)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/nxrtConfig.cmake.in
  ${PROJECT_BINARY_DIR}/nxrtConfig.cmake
  INSTALL_DESTINATION ${NXRT_PACKAGE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/nxrtConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/nxrtConfig.cmake ${PROJECT_BINARY_DIR}/nxrtConfigVersion.cmake
        DESTINATION ${NXRT_PACKAGE_DIR} COMPONENT nxrt_plugin_sdk)
