# What the end-to-end scripts share: run a program and check its exit code,
# match its output, and make sure the Fashion-MNIST files are there.
#   include(${CMAKE_CURRENT_LIST_DIR}/../cli/run_program.cmake)

# run(EXPECTED_CODE OUT_VAR COMMAND...): stdout and stderr together in OUT_VAR.
# RUN_TIMEOUT (seconds, default 600) bounds every command.
if(NOT DEFINED RUN_TIMEOUT)
  set(RUN_TIMEOUT 600)
endif()
function(run expected_code out_var)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err
                  TIMEOUT ${RUN_TIMEOUT})
  if(NOT code EQUAL expected_code)
    message(FATAL_ERROR "${ARGN}\nexit code ${code}, expected ${expected_code}\nstdout: ${out}\nstderr: ${err}")
  endif()
  set(${out_var} "${out}${err}" PARENT_SCOPE)
endfunction()

function(expect text regex)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "expected output matching '${regex}', got:\n${text}")
  endif()
endfunction()

function(require_fashion_mnist dir)
  if(NOT EXISTS ${dir}/train-images-idx3-ubyte.gz)
    message(FATAL_ERROR "Fashion-MNIST is missing: install Debian's dataset-fashion-mnist (scripts/setup.sh)")
  endif()
endfunction()
