# int8 through ONNX as a user runs it: the small LeNet trained and quantized
# by mx-quantize, exported by mx-export as a QDQ model, which mx-predict runs
# (its int8 layers in int8) as it runs the int8 checkpoint, and which
# mx-quantize refuses as quantized already. The float32 run exports without
# QDQ.
#   cmake -DBIN=<build>/cmd -DSOURCE=... -DWORK_DIR=... -P quantize_onnx.cmake
include(${CMAKE_CURRENT_LIST_DIR}/../cli/run_program.cmake)

fashion_mnist_workspace(2000)
small_lenet_config()
run(0 out ${BIN}/mx-train ${W}/lenet.yaml --run-dir ${W}/fp32)
run(0 out ${BIN}/mx-quantize ${W}/fp32 ${W}/int8 --calibration ${W}/fm_train.rec --batches 8)

# The run directories' configs give the data shape.
run(0 out ${BIN}/mx-export ${W}/int8 ${W}/int8.onnx)
expect("${out}" "wrote .*int8.onnx \\(opset 13")
run(0 out ${BIN}/mx-export ${W}/fp32 ${W}/fp32.onnx)
run(2 out ${BIN}/mx-export ${W}/int8 ${W}/int8-11.onnx --opset 11)
expect("${out}" "the int8 layers \\('conv1', 'fc1', 'fc2'\\) need opset 13 or later")

# The ONNX model has no config: the pixel scale is given.
run(0 int8_out ${BIN}/mx-predict -m ${W}/int8 ${W}/fm_val.rec)
run(0 onnx_out ${BIN}/mx-predict -m ${W}/int8.onnx ${W}/fm_val.rec --scale 0.00390625)
run(0 fp32_out ${BIN}/mx-predict -m ${W}/fp32.onnx ${W}/fm_val.rec --scale 0.00390625)
file(STRINGS ${W}/int8.onnx qdq REGEX "QuantizeLinear")
file(STRINGS ${W}/fp32.onnx no_qdq REGEX "QuantizeLinear")
if(NOT qdq OR no_qdq)
  message(FATAL_ERROR "expected QuantizeLinear in int8.onnx only")
endif()
accuracy_of("${int8_out}" int8_acc)
expect_accuracy_near("${onnx_out}" ${int8_acc} 50 "the QDQ export against the int8 checkpoint")

run(2 out ${BIN}/mx-quantize ${W}/int8.onnx ${W}/again --calibration ${W}/fm_train.rec --scale 0.00390625)
expect("${out}" "int8.onnx is quantized already \\(3 int8 layers\\)")
