# mx-train with train.pretrained=model.onnx: a checkpoint exported with
# mx-export starts training with the ONNX initializers, matched by name, as
# the checkpoint's .params file does. With a learning rate of 0 the first
# checkpoint of both runs is the pretrained weights, so the two must be
# byte-identical (and differ from a run that starts from the initializer).
#   cmake -DTRAIN=<mx-train> -DEXPORT=<mx-export> -DFIXTURES=... -DWORK_DIR=... -P train_pretrained.cmake
set(RUN_TIMEOUT 300)
include(${CMAKE_CURRENT_LIST_DIR}/../cli/run_program.cmake)

function(same_file expected a b)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${a} ${b} RESULT_VARIABLE differ)
  if(expected AND differ)
    message(FATAL_ERROR "${a} and ${b} differ")
  elseif(NOT expected AND NOT differ)
    message(FATAL_ERROR "${a} and ${b} are identical")
  endif()
endfunction()

set(W ${WORK_DIR})
set(LENET ${FIXTURES}/onnx/lenet)
file(REMOVE_RECURSE ${W})
file(MAKE_DIRECTORY ${W})
run(0 out ${EXPORT} ${LENET}/model-0001 ${W}/lenet.onnx --data-shape 1,28,28)

file(WRITE ${W}/finetune.yaml
  "symbol: ${LENET}/model-symbol.json\n"
  "data:\n  train: {type: synthetic, data_shape: [1, 28, 28], num_classes: 10, num_batches: 2}\n"
  "optimizer: {type: sgd, learning_rate: 0}\n"
  "train: {epochs: 1, batch_size: 4, seed: 5}\n")

run(0 out ${TRAIN} ${W}/finetune.yaml train.pretrained=${W}/lenet.onnx --run-dir ${W}/from_onnx)
expect("${out}" "pretrained weights from [^\n]*lenet.onnx:\npretrained weights: 8 loaded, 0 skipped, 0 left initialized")
run(0 out ${TRAIN} ${W}/finetune.yaml train.pretrained=${LENET}/model-0001.params --run-dir ${W}/from_params)
expect("${out}" "pretrained weights: 8 loaded, 0 skipped, 0 left initialized")
run(0 out ${TRAIN} ${W}/finetune.yaml --run-dir ${W}/from_scratch)
same_file(TRUE ${W}/from_onnx/model-0001.params ${W}/from_params/model-0001.params)
same_file(FALSE ${W}/from_onnx/model-0001.params ${W}/from_scratch/model-0001.params)

# Another network's ONNX weights: names it lacks and shapes that differ are
# reported, the rest keeps its initial values.
run(0 out ${TRAIN} ${W}/finetune.yaml train.pretrained=${FIXTURES}/onnx/mlp/model.onnx --run-dir ${W}/from_mlp)
expect("${out}" "pretrained weights: [0-9]+ loaded, [1-9][0-9]* skipped, [1-9][0-9]* left initialized")
expect("${out}" "left initialized conv1_weight")

# Bad input: exit code 2 and the file named, no checkpoint.
file(WRITE ${W}/broken.onnx "not a model")
run(2 out ${TRAIN} ${W}/finetune.yaml train.pretrained=${W}/broken.onnx --run-dir ${W}/never)
expect("${out}" "mx-train: error: .*broken.onnx")
run(2 out ${TRAIN} ${W}/finetune.yaml train.pretrained=${W}/absent.onnx --run-dir ${W}/never)
expect("${out}" "absent.onnx does not exist")
if(EXISTS ${W}/never/model-0001.params)
  message(FATAL_ERROR "a failed run wrote a checkpoint")
endif()
