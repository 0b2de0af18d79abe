# Runs one mpirun command and checks how it ended.
#   -DCOMMAND="mpirun@@...": the command, arguments separated by "@@"
#   -DEXPECT=0|2|nonzero:   the exit status it must have
#   -DMATCH="regex@@...":   what its output (stdout and stderr) must contain
#   -DLIMIT=seconds:        the job must end by itself within this time
string(REPLACE "@@" ";" COMMAND "${COMMAND}")
string(REPLACE "@@" ";" MATCH "${MATCH}")
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                TIMEOUT ${LIMIT})
message("${out}${err}")
message("exit status: ${rc}")
if(rc MATCHES "timeout|Process terminated")
  message(FATAL_ERROR "the job did not end within ${LIMIT} s")
endif()
if(EXPECT STREQUAL "nonzero")
  if(rc EQUAL 0 OR NOT rc MATCHES "^[0-9]+$")
    message(FATAL_ERROR "expected a non-zero exit status, got '${rc}'")
  endif()
elseif(NOT rc STREQUAL EXPECT)
  message(FATAL_ERROR "expected exit status ${EXPECT}, got '${rc}'")
endif()
foreach(pattern IN LISTS MATCH)
  if(NOT "${out}${err}" MATCHES "${pattern}")
    message(FATAL_ERROR "the output does not match '${pattern}'")
  endif()
endforeach()
