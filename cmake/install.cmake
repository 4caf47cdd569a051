# `cmake --install`: the public headers, libringfuse.a and libringfuse.so, a CMake package
# (find_package(ringfuse): ringfuse::ringfuse, ringfuse::ringfuse_static), ringfuse.pc and the
# programs. Every path is relative to the prefix, so `--prefix` at install time works.
include(CMakePackageConfigHelpers)

set(ringfuse_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/ringfuse)

install(DIRECTORY include/ringfuse DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
install(FILES ${PROJECT_BINARY_DIR}/include/ringfuse/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ringfuse)
install(TARGETS ringfuse_shared ringfuse_static EXPORT ringfuseTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT ringfuseTargets NAMESPACE ringfuse:: DESTINATION ${ringfuse_cmake_dir})

configure_package_config_file(cmake/ringfuseConfig.cmake.in
  ${PROJECT_BINARY_DIR}/ringfuseConfig.cmake INSTALL_DESTINATION ${ringfuse_cmake_dir})
# Before 1.0 only the same minor version is compatible (see the README's stability promise).
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ringfuseConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ringfuseConfig.cmake
              ${PROJECT_BINARY_DIR}/ringfuseConfigVersion.cmake
        DESTINATION ${ringfuse_cmake_dir})

# pkg-config finds the prefix from where the .pc file lies (${pcfiledir}).
file(RELATIVE_PATH ringfuse_pc_to_prefix
     /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(cmake/ringfuse.pc.in ${PROJECT_BINARY_DIR}/ringfuse.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/ringfuse.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(TARGETS ringfused ringfuse-ctl ringfuse-trace ringfuse-bench ringfuse-latency ringfuse-selfcheck
                ringfuse-conform
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
