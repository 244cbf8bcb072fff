# `cmake --install` rules: the public headers, libkiln and the libraries of the layers below it,
# kiln-cache (when tools/ defines it) and a CMake package, so another project writes
#   find_package(kiln CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE kiln::kiln)
# Included at the end of CMakeLists.txt, after every target it may install exists.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
set(KILN_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/kiln DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.hpp")
install(TARGETS ${KILN_LIBRARIES} EXPORT kilnTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET kiln-cache)
  install(TARGETS kiln-cache RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# pkg-config's kiln.pc for builds without CMake: the layers' static libraries, top layer first
# (a static link resolves each against those after it), then what they use. Written at install
# time, where the prefix is known.
set(KILN_PC_LIBS "")
foreach(lib ${KILN_LIBRARIES})
  string(PREPEND KILN_PC_LIBS "-l${lib} ")
endforeach()
get_target_property(KILN_PC_EIGEN Eigen3::Eigen INTERFACE_INCLUDE_DIRECTORIES)
list(GET CUDAToolkit_INCLUDE_DIRS 0 KILN_PC_CUDA_INCLUDE)
set(KILN_PC_CUDA_LIB ${CUDAToolkit_LIBRARY_DIR})
set(KILN_PC_PREFIX "@CMAKE_INSTALL_PREFIX@")  # filled in by the install step below
configure_file(${CMAKE_CURRENT_LIST_DIR}/kiln.pc.in ${PROJECT_BINARY_DIR}/kiln.pc.in.configured
               @ONLY)
install(CODE "
  configure_file(${PROJECT_BINARY_DIR}/kiln.pc.in.configured ${PROJECT_BINARY_DIR}/kiln.pc @ONLY)
")
install(FILES ${PROJECT_BINARY_DIR}/kiln.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(EXPORT kilnTargets NAMESPACE kiln:: DESTINATION ${KILN_PACKAGE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/kilnConfig.cmake.in
  ${PROJECT_BINARY_DIR}/kilnConfig.cmake INSTALL_DESTINATION ${KILN_PACKAGE_DIR})
# Before 1.0 a minor version may change the API, so only the same major.minor is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kilnConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/kilnConfig.cmake ${PROJECT_BINARY_DIR}/kilnConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/FindFFTW3.cmake
        DESTINATION ${KILN_PACKAGE_DIR})
