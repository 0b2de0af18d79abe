# What `cmake --install` puts under the prefix besides the programs (each
# installed by mx_program in cmd/): libmx.so, the C API headers, a CMake
# package (find_package(mx) -> mx::mx) and a pkg-config file. Every path in
# the CMake and pkg-config files is relative to the file itself, so the
# installed tree can be moved.
include(CMakePackageConfigHelpers)

set(MX_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/mx)
add_library(mx::mx ALIAS mx_shared)

install(TARGETS mx_shared EXPORT mxTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT development)
# include/mx/mxnet/ holds MXNet's header name, so a program written for
# MXNet builds with -I<prefix>/include/mx (docs/library.md).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/mx DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        COMPONENT development)
install(EXPORT mxTargets NAMESPACE mx:: DESTINATION ${MX_CMAKE_DIR} COMPONENT development)

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/mxConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/mxConfig.cmake
                              INSTALL_DESTINATION ${MX_CMAKE_DIR})
# 0.x: a minor version may change the API, so only the same minor matches.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/mxConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/mxConfig.cmake ${PROJECT_BINARY_DIR}/mxConfigVersion.cmake
        DESTINATION ${MX_CMAKE_DIR} COMPONENT development)

# pkg-config: the prefix from the .pc file's own place (${pcfiledir}).
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(MX_PC_PREFIX ${CMAKE_INSTALL_PREFIX})
  set(MX_PC_LIBDIR ${CMAKE_INSTALL_FULL_LIBDIR})
  set(MX_PC_INCLUDEDIR ${CMAKE_INSTALL_FULL_INCLUDEDIR})
else()
  file(RELATIVE_PATH _up /root/${CMAKE_INSTALL_LIBDIR}/pkgconfig /root)
  string(REGEX REPLACE "/$" "" _up "${_up}")
  set(MX_PC_PREFIX "\${pcfiledir}/${_up}")
  set(MX_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
  set(MX_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/mx.pc.in ${PROJECT_BINARY_DIR}/mx.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/mx.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
        COMPONENT development)
