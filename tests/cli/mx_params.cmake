# mx-params run as a user runs it: real files, real exit codes.
#   cmake -DPROGRAM=... -DFIXTURES=... -DWORK_DIR=... -P mx_params.cmake

function(expect_run expected_code stdout_regex stderr_regex)
  execute_process(COMMAND ${PROGRAM} ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out
                  ERROR_VARIABLE err TIMEOUT 60)
  if(NOT code EQUAL expected_code)
    message(FATAL_ERROR "mx-params ${ARGN}: exit code ${code}, expected ${expected_code}\n"
                        "stdout: ${out}\nstderr: ${err}")
  endif()
  if(NOT out MATCHES "${stdout_regex}")
    message(FATAL_ERROR "mx-params ${ARGN}: stdout does not match '${stdout_regex}':\n${out}")
  endif()
  if(NOT err MATCHES "${stderr_regex}")
    message(FATAL_ERROR "mx-params ${ARGN}: stderr does not match '${stderr_regex}':\n${err}")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

# A checkpoint written by MXNet 1.9.1.
expect_run(0 "arg:fc1_weight +float32 +\\(4, 3\\).*aux:bn_moving_var.*total elements: 24" ""
           ${FIXTURES}/params/checkpoint-0001.params)
expect_run(0 "\"name\": \"arg:f16\", \"dtype\": \"float16\", \"shape\": \\[2, 2, 2\\]" ""
           --json ${FIXTURES}/params/dtypes.params)

# Bad input: exit code 2 and one line naming the file and the byte offset.
file(WRITE ${WORK_DIR}/not-params.params "this is not a params file at all")
expect_run(2 "" "^mx-params: error: .*not-params.params: byte 0: not an MXNet .params file"
           ${WORK_DIR}/not-params.params)
# The first 1000 bytes of a real file: a truncated download.
execute_process(COMMAND head -c 1000 ${FIXTURES}/params/large.params
                OUTPUT_FILE ${WORK_DIR}/truncated.params)
expect_run(2 "" "truncated.params: byte [0-9]+: .*needs [0-9]+ bytes, but only [0-9]+ are left"
           ${WORK_DIR}/truncated.params)
expect_run(2 "" "no-such.params" ${WORK_DIR}/no-such.params)
expect_run(2 "" "" --no-such-option ${FIXTURES}/params/list.params)
