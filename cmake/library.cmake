# The libraries built from ringfuse_objects:
# - ringfuse_shared (libringfuse.so) and ringfuse_static (libringfuse.a): what is installed;
#   their users see include/ringfuse/ only. ringfuse::ringfuse is the shared one.
# - ringfuse_programs: the static library for the daemon and the tools, which build on the public
#   headers plus base/ and their own code (scripts/check_includes checks they include nothing
#   else); the source root is on their include path for those.
# - ringfuse_internal: the static library plus the internal headers (protocol/, transport/) and
#   what they need, for the tests, which may reach inside.
configure_file(${PROJECT_SOURCE_DIR}/include/ringfuse/version.h.in
               ${PROJECT_BINARY_DIR}/include/ringfuse/version.h @ONLY)

foreach(kind IN ITEMS static shared)
  string(TOUPPER ${kind} type)
  add_library(ringfuse_${kind} ${type} $<TARGET_OBJECTS:ringfuse_objects>)
  set_target_properties(ringfuse_${kind} PROPERTIES OUTPUT_NAME ringfuse)
  target_include_directories(ringfuse_${kind} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(ringfuse_${kind} PUBLIC cxx_std_20)
  target_link_libraries(ringfuse_${kind}
    PUBLIC ${ringfuse_public_dependencies} PRIVATE ${ringfuse_private_dependencies})
endforeach()
set_target_properties(ringfuse_static PROPERTIES EXPORT_NAME ringfuse_static)
# Before 1.0 every minor version may change the ABI, so the soname carries it (libringfuse.so.0.1).
set_target_properties(ringfuse_shared PROPERTIES
  EXPORT_NAME ringfuse
  VERSION ${PROJECT_VERSION}
  SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
add_library(ringfuse::ringfuse ALIAS ringfuse_shared)
add_library(ringfuse::ringfuse_static ALIAS ringfuse_static)

add_library(ringfuse_internal INTERFACE)
target_include_directories(ringfuse_internal INTERFACE ${PROJECT_SOURCE_DIR})
target_link_libraries(ringfuse_internal INTERFACE ringfuse_static ${ringfuse_private_dependencies})

add_library(ringfuse_programs INTERFACE)
target_include_directories(ringfuse_programs INTERFACE ${PROJECT_SOURCE_DIR})
target_link_libraries(ringfuse_programs INTERFACE ringfuse_static Threads::Threads)
