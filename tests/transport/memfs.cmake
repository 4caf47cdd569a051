# MemFs, the in-memory filesystem the transport's end-to-end tests mount, and its unit tests
# (driven through a Dispatcher; no kernel). Included by a CMakeLists.txt; paths are relative to
# this file so that it works from any including directory.
add_library(ringfuse_memfs STATIC ${CMAKE_CURRENT_LIST_DIR}/memfs.cc)
target_link_libraries(ringfuse_memfs
  PUBLIC ringfuse_internal absl::synchronization
  PRIVATE ringfuse_warnings)

add_executable(memfs_tests ${CMAKE_CURRENT_LIST_DIR}/memfs_test.cc)
target_link_libraries(memfs_tests PRIVATE ringfuse_memfs ringfuse_test_main ringfuse_warnings)
gtest_discover_tests(memfs_tests
  DISCOVERY_TIMEOUT 60 PROPERTIES SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]" LABELS tsan)
