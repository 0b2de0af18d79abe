# mx-export as a user runs it: a run directory, a PREFIX-NNNN, opsets, and
# the errors for a missing shape, a bad opset and a missing checkpoint; then
# mx-predict runs the exported model and predicts what the checkpoint does.
#   cmake -DPROGRAM=<mx-export> -DFIXTURES=... -DWORK_DIR=... -P mx_export.cmake
set(RUN_TIMEOUT 120)
include(${CMAKE_CURRENT_LIST_DIR}/../cli/run_program.cmake)

set(W ${WORK_DIR})
file(REMOVE_RECURSE ${W})
file(MAKE_DIRECTORY ${W}/run)
file(COPY ${FIXTURES}/onnx/lenet/model-symbol.json ${FIXTURES}/onnx/lenet/model-0001.params
     DESTINATION ${W}/run)

# A checkpoint prefix with an explicit shape, at two opsets.
run(0 out ${PROGRAM} ${W}/run/model-0001 ${W}/a.onnx --data-shape 1,28,28)
expect("${out}" "wrote .*a.onnx \\(opset 13, input 'data' \\(1, 1, 28, 28\\)\\)")
run(0 out ${PROGRAM} ${W}/run/model-0001.params ${W}/b.onnx --opset 17 --data-shape 1,28,28)
expect("${out}" "opset 17")

# A run directory without its config: the shape must be given.
run(2 out ${PROGRAM} ${W}/run ${W}/c.onnx)
expect("${out}" "mx-export: error: --data-shape is needed")
# With the run's config, its data_shape is used.
file(WRITE ${W}/run/config.yaml "data:\n  train: {type: synthetic, data_shape: [1, 28, 28], num_classes: 10, num_batches: 1}\n")
run(0 out ${PROGRAM} ${W}/run ${W}/c.onnx)
expect("${out}" "input 'data' \\(1, 1, 28, 28\\)")

run(2 out ${PROGRAM} ${W}/run ${W}/d.onnx --opset 9)
expect("${out}" "mx-export: error: opset 9 is not supported for export \\(choose 11 to 17\\)")
if(EXISTS ${W}/d.onnx)
  message(FATAL_ERROR "a failed export left ${W}/d.onnx")
endif()
run(2 out ${PROGRAM} ${W}/none ${W}/e.onnx)
expect("${out}" "mx-export: error: ")

# mx-predict -m model.onnx: the exported LeNet predicts the test set exactly
# as its checkpoint does (same classes, same accuracy), its input shape taken
# from the ONNX file.
set(images ${FASHION}/t10k-images-idx3-ubyte.gz)
set(labels ${FASHION}/t10k-labels-idx1-ubyte.gz)
run(0 from_checkpoint ${PREDICT} -m ${W}/run/model-0001 ${images} --labels ${labels} --top-k 1)
run(0 from_onnx ${PREDICT} -m ${W}/a.onnx ${images} --labels ${labels} --top-k 1)
string(REGEX REPLACE "[^\n]*model-0001[^\n]*" "" from_checkpoint "${from_checkpoint}")
string(REGEX REPLACE "[^\n]*a\\.onnx[^\n]*" "" from_onnx "${from_onnx}")
# Progress lines (on a slow machine) carry timings: not part of the comparison.
# (with their line ends: one run may print more of them than the other).
string(REGEX REPLACE "[^\n]*examples/s[^\n]*\n?" "" from_checkpoint "${from_checkpoint}")
string(REGEX REPLACE "[^\n]*examples/s[^\n]*\n?" "" from_onnx "${from_onnx}")
expect("${from_onnx}" "accuracy")
if(NOT from_onnx STREQUAL from_checkpoint)
  message(FATAL_ERROR "mx-predict on the ONNX export differs from its checkpoint:\n"
                      "${from_onnx}\n--- checkpoint:\n${from_checkpoint}")
endif()
run(2 out ${PREDICT} -m ${W}/a.onnx ${images} --epoch 3)
expect("${out}" "--epoch is for checkpoints, not ONNX models")
file(WRITE ${W}/broken.onnx "not a model")
run(2 out ${PREDICT} -m ${W}/broken.onnx ${images})
expect("${out}" "mx-predict: error: .*broken.onnx")
