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

# fashion_mnist_workspace(LIMIT): a fresh WORK_DIR, named W, holding LIMIT
# Fashion-MNIST training images packed as ${W}/fm_train.rec and
# ${W}/fm_val.rec (80/20); FM names the data set's folder.
macro(fashion_mnist_workspace limit)
  set(FM /usr/share/datasets/fashion-mnist)
  require_fashion_mnist(${FM})
  set(W ${WORK_DIR})
  file(REMOVE_RECURSE ${W})
  file(MAKE_DIRECTORY ${W})
  run(0 packed ${BIN}/mx-pack pack ${FM}/train-images-idx3-ubyte.gz ${W}/fm --limit ${limit}
      --train-ratio 0.8 -q)
endmacro()

# small_lenet_config(): ${W}/lenet.yaml, the small LeNet of lenet-small.yaml.in on those files.
macro(small_lenet_config)
  set(WORK ${W})
  configure_file(${SOURCE}/tests/cli/lenet-small.yaml.in ${W}/lenet.yaml @ONLY)
endmacro()

# accuracy_of(TEXT VAR): the accuracy mx-predict printed in TEXT ("accuracy
# 0.7025"), in hundredths of a percentage point (7025), into VAR.
function(accuracy_of text var)
  if(NOT text MATCHES "accuracy 0\\.([0-9][0-9][0-9][0-9])")
    message(FATAL_ERROR "no accuracy in:\n${text}")
  endif()
  set(${var} ${CMAKE_MATCH_1} PARENT_SCOPE)
endfunction()

# expect_accuracy_near(TEXT REFERENCE MAX_GAP WHAT): the accuracy in TEXT is
# within MAX_GAP of REFERENCE, both as accuracy_of gives them (100: a point).
function(expect_accuracy_near text reference max_gap what)
  accuracy_of("${text}" got)
  math(EXPR gap "${got} - ${reference}")
  message(STATUS "${what}: accuracy 0.${got}, reference 0.${reference}")
  if(gap GREATER max_gap OR gap LESS -${max_gap})
    message(FATAL_ERROR "${what}: accuracy 0.${got} is further than ${max_gap} hundredths of a "
                        "point from 0.${reference}")
  endif()
endfunction()
