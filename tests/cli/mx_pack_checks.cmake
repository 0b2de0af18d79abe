# What the mx-pack scripts (mx_pack.cmake, mx_pack_text.cmake) share: run
# mx-pack (${PROGRAM}) in ${WORK_DIR} and check its exit code and output,
# and compare files byte for byte.

function(expect_run expected_code stdout_regex stderr_regex)
  execute_process(COMMAND ${PROGRAM} ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out
                  ERROR_VARIABLE err TIMEOUT 120 WORKING_DIRECTORY ${WORK_DIR})
  if(NOT code EQUAL expected_code)
    message(FATAL_ERROR "mx-pack ${ARGN}: exit code ${code}, expected ${expected_code}\n"
                        "stdout: ${out}\nstderr: ${err}")
  endif()
  if(NOT out MATCHES "${stdout_regex}")
    message(FATAL_ERROR "mx-pack ${ARGN}: stdout does not match '${stdout_regex}':\n${out}")
  endif()
  if(NOT err MATCHES "${stderr_regex}")
    message(FATAL_ERROR "mx-pack ${ARGN}: stderr does not match '${stderr_regex}':\n${err}")
  endif()
endfunction()

function(expect_same_file ours theirs)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${ours} ${theirs}
                  RESULT_VARIABLE differ)
  if(differ)
    message(FATAL_ERROR "${ours} differs from ${theirs}")
  endif()
endfunction()
