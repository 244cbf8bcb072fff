# Runs an example and checks its output states the facts it should: every regular expression
# in EXPECT (a ;-list) must match. Used by ctest so examples keep telling the truth.
#   cmake -DPROGRAM=... -DEXPECT="re1;re2" -P check_output.cmake
execute_process(COMMAND ${PROGRAM} ${ARGS} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} exited with ${rc}\n${out}\n${err}")
endif()
# Facts may be on either stream (KILN_DEBUG's lines go to stderr).
foreach(re IN LISTS EXPECT)
  if(NOT "${out}${err}" MATCHES "${re}")
    message(FATAL_ERROR
            "${PROGRAM}: the output does not say '${re}'\n--- output ---\n${out}\n--- stderr ---\n${err}")
  endif()
endforeach()
message(STATUS "${PROGRAM}: all ${CMAKE_ARGC} facts found")
