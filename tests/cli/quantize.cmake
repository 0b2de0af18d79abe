# int8 as a user runs it: train the small LeNet, quantize it with
# mx-quantize on its training images, predict with the int8 checkpoint on
# the held-out images (the accuracy of float32 within a point), and the
# refusals: an OUT that is not empty, a layer --exclude does not know, a bad
# --mode, calibration images of the wrong shape, a model quantized already,
# and an int8 mark without calibrated ranges. All exit 2.
#   cmake -DBIN=<build>/cmd -DSOURCE=... -DWORK_DIR=... -P quantize.cmake
include(${CMAKE_CURRENT_LIST_DIR}/run_program.cmake)

fashion_mnist_workspace(2000)
small_lenet_config()
run(0 out ${BIN}/mx-train ${W}/lenet.yaml --run-dir ${W}/fp32)

run(0 report ${BIN}/mx-quantize ${W}/fp32 ${W}/int8 --calibration ${W}/fm_train.rec --batches 8)
expect("${report}" "mse calibration, 8 batches, 256 examples")
expect("${report}" "conv1 +Convolution +int8 +\\[0, 0\\.[0-9]+\\] +\\[-")
expect("${report}" "fc1 +FullyConnected +int8 ")
expect("${report}" "same top-1 class for [0-9.]+% of 256 examples")
foreach(f model-symbol.json model-0000.params config.yaml quantize-report.json)
  if(NOT EXISTS ${W}/int8/${f})
    message(FATAL_ERROR "mx-quantize did not write ${f}")
  endif()
endforeach()
file(READ ${W}/int8/model-symbol.json symbol)
expect("${symbol}" "\"__quantize__\": \"int8\"")

# The int8 checkpoint predicts as well as the float32 one, within a point.
run(0 fp32_out ${BIN}/mx-predict -m ${W}/fp32 ${W}/fm_val.rec)
run(0 int8_out ${BIN}/mx-predict -m ${W}/int8 ${W}/fm_val.rec)
accuracy_of("${fp32_out}" fp32_acc)
expect_accuracy_near("${int8_out}" ${fp32_acc} 100 "int8 against float32 on 400 held-out images")

# Without VNNI instructions (oneDNN capped below them): a warning, and
# answers within two points of float32's (oneDNN then keeps 7 bits of each
# weight, so that its 16-bit intermediate sums cannot saturate).
execute_process(COMMAND ${CMAKE_COMMAND} -E env ONEDNN_MAX_CPU_ISA=AVX512_CORE
                        ${BIN}/mx-predict -m ${W}/int8 ${W}/fm_val.rec
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT ${RUN_TIMEOUT})
expect("${code}:${err}" "^0:.*3 int8 layers: oneDNN has no VNNI instructions here")
expect_accuracy_near("${out}" ${fp32_acc} 200 "int8 without VNNI against float32")

# Entropy calibration, one layer excluded.
run(0 report ${BIN}/mx-quantize ${W}/fp32 ${W}/int8-kl --calibration ${W}/fm_train.rec
    --mode entropy --exclude fc2 --json)
expect("${report}" "\"calibration\": \"entropy\"")
expect("${report}" "\"note\": \"excluded\"")

# Naive calibration (MXNet's): each value's whole range, the data's [0, 1)
# included; the int8 checkpoint predicts as well.
run(0 report ${BIN}/mx-quantize ${W}/fp32 ${W}/int8-naive --calibration ${W}/fm_train.rec
    --mode naive --batches 8)
expect("${report}" "conv1 +Convolution +int8 +\\[0, 0\\.99[0-9]*\\] +\\[-")
run(0 naive_out ${BIN}/mx-predict -m ${W}/int8-naive ${W}/fm_val.rec)
expect_accuracy_near("${naive_out}" ${fp32_acc} 100 "int8 (naive) against float32 on 400 held-out images")

# Refusals.
run(2 out ${BIN}/mx-quantize ${W}/fp32 ${W}/int8 --calibration ${W}/fm_train.rec)
expect("${out}" "int8 exists and is not an empty directory")
run(2 out ${BIN}/mx-quantize ${W}/fp32 ${W}/x1 --calibration ${W}/fm_train.rec --exclude conv9)
expect("${out}" "--exclude: the model has no layer 'conv9' \\(did you mean 'conv1'\\?\\)")
run(2 out ${BIN}/mx-quantize ${W}/fp32 ${W}/x2 --calibration ${W}/fm_train.rec --mode kl)
expect("${out}" "--mode: 'kl' is not a calibration mode \\(naive, entropy or mse\\)")
run(2 out ${BIN}/mx-quantize ${W}/fp32 ${W}/x3 --calibration ${W}/fm_train.rec --data-shape 1,20,20)
expect("${out}" "calibration data .*fm_train.rec")
run(2 out ${BIN}/mx-quantize ${W}/int8 ${W}/x4 --calibration ${W}/fm_train.rec)
expect("${out}" "is quantized already \\(3 int8 layers\\)")
foreach(x x1 x2 x3 x4)
  if(EXISTS ${W}/${x})
    message(FATAL_ERROR "a refused mx-quantize left ${W}/${x} behind")
  endif()
endforeach()
# An int8 mark whose input has no calibrated range.
string(REGEX REPLACE "\"__min_calib_range__\": \"[^\"]*\",?" "" stripped "${symbol}")
string(REGEX REPLACE "\"__max_calib_range__\": \"[^\"]*\",?" "" stripped "${stripped}")
file(MAKE_DIRECTORY ${W}/bare)
file(WRITE ${W}/bare/model-symbol.json "${stripped}")
file(COPY ${W}/int8/model-0000.params ${W}/int8/config.yaml DESTINATION ${W}/bare)
run(2 out ${BIN}/mx-predict -m ${W}/bare ${W}/fm_val.rec)
expect("${out}" "model-symbol.json: layer 'conv1' is marked int8 but its input 'data' has no calibrated range")

# A residual network: the report's top-1 agreement is that of the written
# model as mx-predict runs it (int8 values between int8 layers, the residual
# stream included), on the same calibration examples.
file(READ ${W}/lenet.yaml lenet_text)
string(REPLACE "    - {op: Activation, name: tanh1, act_type: tanh}"
"    - {op: Activation, name: relu0, act_type: relu}
    - {op: Convolution, name: conv2, kernel: [3, 3], pad: [1, 1], num_filter: 8}
    - {op: BatchNorm, name: bn2, fix_gamma: false}
    - {op: elemwise_add, name: add2, inputs: [bn2, relu0]}
    - {op: Activation, name: relu2, act_type: relu}
    - {op: Convolution, name: conv3, kernel: [3, 3], pad: [1, 1], num_filter: 8}
    - {op: BatchNorm, name: bn3, fix_gamma: false}
    - {op: elemwise_add, name: add3, inputs: [bn3, relu2]}
    - {op: Activation, name: tanh1, act_type: relu}" resnet_text "${lenet_text}")
string(REPLACE "kernel: [5, 5], num_filter: 8}" "kernel: [3, 3], pad: [1, 1], num_filter: 8}"
       resnet_text "${resnet_text}")
string(REPLACE "epochs: 2" "epochs: 1" resnet_text "${resnet_text}")
file(WRITE ${W}/resnet.yaml "${resnet_text}")
run(0 out ${BIN}/mx-train ${W}/resnet.yaml --run-dir ${W}/res-fp32)
run(0 out ${BIN}/mx-quantize ${W}/res-fp32 ${W}/res-int8 --calibration ${W}/fm_train.rec
    --batches 8)
file(READ ${W}/res-int8/quantize-report.json report)
string(JSON examples GET "${report}" examples)
string(JSON reported GET "${report}" top1_agreeing)
run(0 fp32_json ${BIN}/mx-predict -m ${W}/res-fp32 ${W}/fm_train.rec --json)
run(0 int8_json ${BIN}/mx-predict -m ${W}/res-int8 ${W}/fm_train.rec --json)
set(agree 0)
math(EXPR last "${examples} - 1")
foreach(i RANGE ${last})
  string(JSON a GET "${fp32_json}" predictions ${i} top 0 class)
  string(JSON b GET "${int8_json}" predictions ${i} top 0 class)
  if(a EQUAL b)
    math(EXPR agree "${agree} + 1")
  endif()
endforeach()
message(STATUS "residual network: ${reported} of ${examples} agree in the report, ${agree} "
               "with mx-predict")
if(NOT agree EQUAL reported)
  message(FATAL_ERROR "mx-quantize reports ${reported} of ${examples} calibration examples "
                      "agreeing with float32, mx-predict with the written model ${agree}")
endif()
