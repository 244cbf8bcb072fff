# ctest's install_consumer: installs the built kiln into a fresh prefix, then configures, builds
# and runs tests/install/ against it with only CMAKE_PREFIX_PATH, as another project would
# (a small consumer and examples/embedding.cpp). Then
# configures the same project with add_subdirectory(kiln) (configure only: building would
# compile all of kiln again).
# Inputs (-D): KILN_BINARY_DIR KILN_SOURCE_DIR WORK_DIR GENERATOR CXX_COMPILER CUDA_ROOT.

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${ARGN}\n${out}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
run_step("cmake --install" ${CMAKE_COMMAND} --install ${KILN_BINARY_DIR} --prefix ${prefix})
foreach(file include/kiln/kiln.hpp include/kiln/npy.hpp include/kiln/timeit.hpp)
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "cmake --install did not write ${prefix}/${file}")
  endif()
endforeach()
# The library folder is lib, lib64 or lib/<multiarch>, per GNUInstallDirs.
file(GLOB_RECURSE config ${prefix}/kilnConfig.cmake)
if(NOT config)
  message(FATAL_ERROR "cmake --install wrote no kilnConfig.cmake under ${prefix}")
endif()
get_filename_component(package_dir ${config} DIRECTORY)
foreach(file kilnConfigVersion.cmake kilnTargets.cmake FindFFTW3.cmake ../../libkiln.a
             ../../pkgconfig/kiln.pc)
  if(NOT EXISTS ${package_dir}/${file})
    message(FATAL_ERROR "cmake --install did not write ${package_dir}/${file}")
  endif()
endforeach()

set(project_dir ${KILN_SOURCE_DIR}/tests/install)
set(common -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=Release
           -DCUDAToolkit_ROOT=${CUDA_ROOT} -DKILN_EXAMPLES_DIR=${KILN_SOURCE_DIR}/examples)
run_step("configuring the consumer" ${CMAKE_COMMAND} -S ${project_dir} -B ${WORK_DIR}/build
         ${common} -DCMAKE_PREFIX_PATH=${prefix})
if(NOT step_output MATCHES "kiln package: ${package_dir}")
  message(FATAL_ERROR "the consumer did not use the installed package:\n${step_output}")
endif()
run_step("building the consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run_step("running the consumer" ${WORK_DIR}/build/consumer)
message(STATUS "${step_output}")
if(NOT step_output MATCHES "sum 100, ShapeError caught")
  message(FATAL_ERROR "unexpected consumer output:\n${step_output}")
endif()
run_step("running the embedding example built outside" ${WORK_DIR}/build/embedding_outside)
if(NOT step_output MATCHES "wrapped without a copy: x.data[(][)] == samples.data[(][)]: true")
  message(FATAL_ERROR "unexpected output of the embedding example:\n${step_output}")
endif()

# Without CMake: the link line pkg-config gives (README), for the same consumer.
find_program(PKG_CONFIG pkg-config)
if(PKG_CONFIG)
  set(ENV{PKG_CONFIG_PATH} ${package_dir}/../../pkgconfig)
  run_step("pkg-config" ${PKG_CONFIG} --cflags --libs kiln)
  string(STRIP "${step_output}" flags)
  separate_arguments(flags UNIX_COMMAND "${flags}")
  run_step("building the consumer with pkg-config's flags" ${CXX_COMPILER}
           ${project_dir}/main.cpp -o ${WORK_DIR}/consumer_pc ${flags})
  run_step("running the consumer built with pkg-config" ${WORK_DIR}/consumer_pc)
  if(NOT step_output MATCHES "sum 100, ShapeError caught")
    message(FATAL_ERROR "unexpected output of the pkg-config build:\n${step_output}")
  endif()
endif()

run_step("configuring with add_subdirectory(kiln)" ${CMAKE_COMMAND} -S ${project_dir}
         -B ${WORK_DIR}/subdir ${common} -DKILN_SOURCE_DIR=${KILN_SOURCE_DIR})
message(STATUS "installed kiln built and ran an outside project and the embedding example; "
               "add_subdirectory configures")
