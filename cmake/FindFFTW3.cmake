# FFTW3 in double and single precision with its threads libraries (Debian: libfftw3-dev).
find_path(FFTW3_INCLUDE_DIR fftw3.h)
foreach(lib fftw3 fftw3f fftw3_threads fftw3f_threads)
  find_library(FFTW3_${lib}_LIBRARY ${lib})
  list(APPEND FFTW3_LIBS FFTW3_${lib}_LIBRARY)
endforeach()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(FFTW3 REQUIRED_VARS FFTW3_INCLUDE_DIR ${FFTW3_LIBS})
if(FFTW3_FOUND AND NOT TARGET FFTW3::fftw3)
  add_library(FFTW3::fftw3 INTERFACE IMPORTED)
  set_target_properties(FFTW3::fftw3 PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${FFTW3_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES
      "${FFTW3_fftw3_threads_LIBRARY};${FFTW3_fftw3f_threads_LIBRARY};${FFTW3_fftw3_LIBRARY};${FFTW3_fftw3f_LIBRARY}")
endif()
