# Mixed precision as a user runs it: train the small LeNet in bfloat16
# (--precision), predict from its checkpoint in float32, the same with a
# BatchNorm layer (bfloat16 data, float32 statistics), and the refusals:
# a CPU without bfloat16 instructions (oneDNN capped below AVX512-BF16 with
# ONEDNN_MAX_CPU_ISA) and an unknown precision, both exit 2.
#   cmake -DBIN=<build>/cmd -DSOURCE=... -DWORK_DIR=... -P train_bfloat16.cmake
include(${CMAKE_CURRENT_LIST_DIR}/run_program.cmake)

fashion_mnist_workspace(2000)
small_lenet_config()

# An unknown precision names where it came from.
run(2 out ${BIN}/mx-train ${W}/lenet.yaml --precision half --run-dir ${W}/bad)
expect("${out}" "command line: train.precision=half: train.precision must be float32, bfloat16 or float16, not 'half'")
# A CPU without bfloat16 instructions: refused before anything is read.
execute_process(COMMAND ${CMAKE_COMMAND} -E env ONEDNN_MAX_CPU_ISA=AVX512_CORE
                        ${BIN}/mx-train ${W}/lenet.yaml train.precision=bfloat16 --run-dir ${W}/old
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT ${RUN_TIMEOUT})
expect("${code}:${err}" "^2:.*train.precision bfloat16 needs a CPU with bfloat16 instructions: this CPU lacks avx512_bf16")

execute_process(COMMAND ${BIN}/mx-train ${W}/lenet.yaml --precision bfloat16 --run-dir ${W}/bf16
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT ${RUN_TIMEOUT})
if(NOT code EQUAL 0)
  # This CPU has no bfloat16 instructions: the refusal is all there is to check.
  expect("${code}:${err}" "^2:.*lacks avx512_bf16")
  message(STATUS "bfloat16 training not checked: ${err}")
  return()
endif()
expect("${out}${err}" "epoch 2/2: train-accuracy [0-9.]+ train-cross-entropy")
# The checkpoint is float32 (mx-params lists the dtypes) and its symbol has no casts.
file(READ ${W}/bf16/model-symbol.json symbol)
if(symbol MATCHES "amp_cast")
  message(FATAL_ERROR "the checkpoint's symbol holds the AMP casts")
endif()
run(0 out ${BIN}/mx-params ${W}/bf16/model-0002.params)
if(out MATCHES " bfloat16 ")
  message(FATAL_ERROR "the checkpoint holds bfloat16 arrays:\n${out}")
endif()
# It predicts in float32 as well as it validated.
run(0 out ${BIN}/mx-predict -m ${W}/bf16 ${W}/fm_val.rec --data-shape 1,28,28 --scale 0.00390625)
expect("${out}" "400 prediction\\(s\\); accuracy 0\\.[5-9]")
# And resumes.
run(0 out ${BIN}/mx-train --resume ${W}/bf16 train.epochs=3)
expect("${out}" "resumed from .*model-0002.params")

# With BatchNorm after the convolution: it normalizes bfloat16 data, and its
# moving statistics reach the checkpoint in float32.
file(READ ${W}/lenet.yaml lenet)
string(REPLACE "- {op: Activation, name: tanh1, act_type: tanh}"
               "- {op: BatchNorm, name: bn1, fix_gamma: false}\n    - {op: Activation, name: relu0, act_type: relu}"
               lenet_bn "${lenet}")
file(WRITE ${W}/lenet-bn.yaml "${lenet_bn}")
run(0 out ${BIN}/mx-train ${W}/lenet-bn.yaml --precision bfloat16 train.epochs=1 --run-dir ${W}/bf16-bn)
run(0 out ${BIN}/mx-params ${W}/bf16-bn/model-0001.params)
expect("${out}" "aux:bn1_moving_var +float32")
if(out MATCHES " bfloat16 ")
  message(FATAL_ERROR "the checkpoint holds bfloat16 arrays:\n${out}")
endif()
run(0 out ${BIN}/mx-predict -m ${W}/bf16-bn ${W}/fm_val.rec --data-shape 1,28,28 --scale 0.00390625)
expect("${out}" "400 prediction\\(s\\); accuracy 0\\.[5-9]")
