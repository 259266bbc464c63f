# The installed C++ package (component nvwgmma-dev): headers, generated
# headers, the C API headers, libNVWGMMA.so, libNVWGMMA-C.so, the plugin and
# lib/cmake/nvwgmma/NVWGMMAConfig.cmake with the exported targets.
include(CMakePackageConfigHelpers)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/nvwgmma
                  ${PROJECT_SOURCE_DIR}/include/nvwgmma-c
        DESTINATION ${NVWGMMA_INSTALL_INCLUDEDIR} COMPONENT nvwgmma-dev
        FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/nvwgmma
        DESTINATION ${NVWGMMA_INSTALL_INCLUDEDIR} COMPONENT nvwgmma-dev
        FILES_MATCHING PATTERN "*.inc"
        PATTERN "CMakeFiles" EXCLUDE)

set(_cmakedir "${NVWGMMA_INSTALL_LIBDIR}/cmake/nvwgmma")
install(EXPORT NVWGMMATargets NAMESPACE NVWGMMA::
        DESTINATION ${_cmakedir} COMPONENT nvwgmma-dev)
# In the wheel the config sits at site-packages/nvwgmma/lib/cmake/nvwgmma;
# the MLIR wheel's config at site-packages/mlir/lib/cmake/mlir.
set(NVWGMMA_CONFIG_TO_WHEEL_MLIR "../../../../mlir/lib/cmake/mlir")
set(NVWGMMA_CONFIG_TO_WHEEL_LLVM "../../../../llvm/lib/cmake/llvm")
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/NVWGMMAConfig.cmake.in
  ${PROJECT_BINARY_DIR}/NVWGMMAConfig.cmake
  INSTALL_DESTINATION ${_cmakedir}
  PATH_VARS NVWGMMA_INSTALL_INCLUDEDIR NVWGMMA_INSTALL_LIBDIR)
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/NVWGMMAConfigVersion.cmake
  VERSION 0.1.0 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/NVWGMMAConfig.cmake
              ${PROJECT_BINARY_DIR}/NVWGMMAConfigVersion.cmake
        DESTINATION ${_cmakedir} COMPONENT nvwgmma-dev)
