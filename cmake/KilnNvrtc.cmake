# kiln_nvrtc_target(<name> [IMPORTED]): an INTERFACE target for NVRTC alone.
#
# CUDA::nvrtc carries a dependency on the driver library (libcuda). kiln must start on machines
# without a driver, so NVRTC's library file is linked on its own. The build makes this target as
# kiln_nvrtc; the installed kilnConfig.cmake makes it again as kiln::nvrtc from the CUDA toolkit
# the consuming project finds, so the exported package holds no path of the build machine.
# Needs find_package(CUDAToolkit) first.
function(kiln_nvrtc_target name)
  get_target_property(library CUDA::nvrtc IMPORTED_LOCATION)
  add_library(${name} INTERFACE ${ARGN})
  target_link_libraries(${name} INTERFACE ${library})
  target_include_directories(${name} INTERFACE ${CUDAToolkit_INCLUDE_DIRS})
endfunction()
