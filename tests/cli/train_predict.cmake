# pack -> train -> resume -> predict, run as a user runs the programs.
#   cmake -DBIN=<build>/cmd -DFIXTURES=... -DSOURCE=... -DWORK_DIR=... -P train_predict.cmake
include(${CMAKE_CURRENT_LIST_DIR}/run_program.cmake)

# Pack 2000 images (1600 train, 400 val).
fashion_mnist_workspace(2000)
small_lenet_config()

# Train 2 epochs at once.
run(0 out ${BIN}/mx-train ${W}/lenet.yaml --run-dir ${W}/full)
expect("${out}" "epoch 2/2: train-accuracy [0-9.]+ train-cross-entropy")
file(STRINGS ${W}/full/metrics.jsonl full_lines)
list(LENGTH full_lines n)
if(NOT n EQUAL 2)
  message(FATAL_ERROR "metrics.jsonl has ${n} lines, expected 2")
endif()
foreach(f model-symbol.json model-0001.params model-0002.params model-0002.states model-0002.json config.yaml)
  if(NOT EXISTS ${W}/full/${f})
    message(FATAL_ERROR "the run directory lacks ${f}")
  endif()
endforeach()

# One epoch, then resume for the second: the same metrics as the uninterrupted run.
run(0 out ${BIN}/mx-train ${W}/lenet.yaml train.epochs=1 --run-dir ${W}/split)
run(0 out ${BIN}/mx-train --resume ${W}/split train.epochs=2)
expect("${out}" "resumed from .*model-0001.params")
file(STRINGS ${W}/split/metrics.jsonl split_lines)
list(GET full_lines 1 a)
list(GET split_lines 1 b)
foreach(part train val)
  string(JSON pa GET "${a}" ${part})
  string(JSON pb GET "${b}" ${part})
  if(NOT pa STREQUAL pb)
    message(FATAL_ERROR "resumed run differs in '${part}': ${pb} vs uninterrupted ${pa}")
  endif()
endforeach()
# The saved config repeats the run.
run(0 out ${BIN}/mx-train ${W}/full/config.yaml --print-config)
expect("${out}" "epochs: 2")

# Predict: the validation .rec (accuracy), the test IDX files, and image files.
run(0 out ${BIN}/mx-predict -m ${W}/full ${W}/fm_val.rec --data-shape 1,28,28 --scale 0.00390625)
expect("${out}" "400 prediction\\(s\\); accuracy 0\\.[5-9]")
# bfloat16 inference: the accuracy within 1% of float32's where the CPU has
# bfloat16 instructions, else exit 2 saying so; an unknown precision is a usage error.
accuracy_of("${out}" fp32_permyriad)
execute_process(COMMAND ${BIN}/mx-predict -m ${W}/full ${W}/fm_val.rec --data-shape 1,28,28 --scale 0.00390625
                        --precision bf16
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT ${RUN_TIMEOUT})
if(code EQUAL 0)
  expect("${out}" "400 prediction\\(s\\); accuracy 0\\.[0-9]+")
  expect_accuracy_near("${out}" ${fp32_permyriad} 100 "bf16 against fp32")
else()
  expect("${code}:${err}" "^2:.*bf16 inference needs (a CPU with bfloat16 instructions|oneDNN)")
  message(STATUS "bf16 inference not checked: ${err}")
endif()
run(2 out ${BIN}/mx-predict -m ${W}/full ${W}/fm_val.rec --data-shape 1,28,28 --precision fp16)
expect("${out}" "--precision: 'fp16' is not a precision \\(fp32 or bf16\\)")
run(0 out ${BIN}/mx-predict -m ${W}/full/model-0002 ${FM}/t10k-images-idx3-ubyte.gz
    --labels ${FM}/t10k-labels-idx1-ubyte.gz --json --top-k 2)
expect("${out}" "\"accuracy\": 0\\.[5-9]")
run(0 out ${BIN}/mx-predict -m ${W}/full ${FIXTURES}/recordio/images/cat/c1.jpg ${FIXTURES}/recordio/images/dog/d3.png --data-shape 1,28,28
    --scale 0.00390625 --top-k 3)
expect("${out}" "c1.jpg: [0-9] \\([0-9.e-]+\\) [0-9] \\([0-9.e-]+\\) [0-9]")
run(0 out ${BIN}/mx-predict -m ${W}/full --data-shape 1,28,28 --benchmark 3 --batch-size 16)
expect("${out}" "latency at batch 1: [0-9.]+ ms")

# A network that ends without a softmax (as Gluon exports do): the same model
# with its head moved from SoftmaxOutput to the layer before it. mx-predict
# applies the softmax and says so; --raw reports the outputs as scores.
file(READ ${W}/full/model-symbol.json sym)
string(JSON head GET "${sym}" heads 0 0)
string(JSON logits GET "${sym}" nodes ${head} inputs 0 0)
string(JSON sym SET "${sym}" heads 0 0 ${logits})
file(WRITE ${W}/logits-symbol.json "${sym}")
file(COPY_FILE ${W}/full/model-0002.params ${W}/logits-0002.params)
run(0 out ${BIN}/mx-predict -m ${W}/logits-0002 ${W}/fm_val.rec --data-shape 1,28,28 --scale 0.00390625)
expect("${out}" "note: the network ends in FullyConnected '[a-z0-9_]+' without a softmax; probabilities are the softmax")
expect("${out}" "400 prediction\\(s\\); accuracy 0\\.[5-9]")
run(0 out ${BIN}/mx-predict -m ${W}/logits-0002 ${W}/fm_val.rec --data-shape 1,28,28 --scale 0.00390625 --json --top-k 10)
string(JSON p0 GET "${out}" predictions 0 top 0 probability)
string(JSON note GET "${out}" output)
expect("${note}" "softmax of its outputs")
expect("${p0}" "^(0\\.[0-9]+(e-[0-9]+)?|1\\.0|1|[0-9.]+e-[0-9]+)$")
run(0 out ${BIN}/mx-predict -m ${W}/logits-0002 ${W}/fm_val.rec --data-shape 1,28,28 --scale 0.00390625 --json --raw)
expect("${out}" "\"score\": ")
expect("${out}" "\"output\": \"scores are the raw outputs of FullyConnected")
run(0 out ${BIN}/mx-predict -m ${W}/full ${W}/fm_val.rec --data-shape 1,28,28 --scale 0.00390625 --json)
if(out MATCHES "\"output\"|note:")
  message(FATAL_ERROR "a network that ends in SoftmaxOutput needs no note:\n${out}")
endif()

# Bad input: one clear message, exit code 2, nothing written.
file(WRITE ${W}/bad.yaml "train:\n  epochs: [1\n")
run(2 out ${BIN}/mx-train ${W}/bad.yaml)
expect("${out}" "bad.yaml:3:1: ")
run(2 out ${BIN}/mx-train ${W}/lenet.yaml train.epoch=1 --run-dir ${W}/never)
expect("${out}" "unknown key 'train.epoch' \\(did you mean 'train.epochs'\\?\\)")
# --resume of a run stopped before its first checkpoint says how to start it
# again in the same directory, and that command works.
file(MAKE_DIRECTORY ${W}/stopped)
file(COPY ${W}/lenet.yaml DESTINATION ${W}/stopped)
file(RENAME ${W}/stopped/lenet.yaml ${W}/stopped/config.yaml)
run(2 out ${BIN}/mx-train --resume ${W}/stopped)
expect("${out}" "no checkpoint model-NNNN.params in it; the run stopped before its first checkpoint. Start it again with: mx-train ${W}/stopped/config.yaml --run-dir ${W}/stopped")
run(0 out ${BIN}/mx-train ${W}/stopped/config.yaml --run-dir ${W}/stopped --dry-run)

# A bad optimizer value is reported at its override, before any data is
# read (so a missing data file is not what stops the run).
run(2 out ${BIN}/mx-train ${W}/lenet.yaml optimizer.learning_rate=abc
    "data.train.path_imgrec=${W}/missing.rec" --run-dir ${W}/never)
expect("${out}" "error: command line: optimizer.learning_rate=abc: optimizer '[a-z]+': parameter 'learning_rate': 'abc' is not a number")
run(2 out ${BIN}/mx-train ${W}/lenet.yaml "data.train.path_imgrec=${W}/missing.rec" --run-dir ${W}/never)
expect("${out}" "missing.rec")
file(READ ${W}/lenet.yaml cfg)
string(REPLACE "num_hidden: 10}" "num_hidden: 5}" cfg "${cfg}")
file(WRITE ${W}/five.yaml "${cfg}")
run(2 out ${BIN}/mx-train ${W}/five.yaml --run-dir ${W}/never)
expect("${out}" "labels do not fit the output: label [0-9] .* 5 classes")
string(REPLACE "kernel: [5, 5], num_filter: 8" "kernel: [40, 40], num_filter: 8" cfg "${cfg}")
file(WRITE ${W}/big_kernel.yaml "${cfg}")
run(2 out ${BIN}/mx-train ${W}/big_kernel.yaml --run-dir ${W}/never)
expect("${out}" "conv1")
if(EXISTS ${W}/never/model-0001.params)
  message(FATAL_ERROR "a failed run wrote a checkpoint")
endif()
run(2 out ${BIN}/mx-predict -m ${W}/nothing-here ${W}/fm_val.rec --data-shape 1,28,28)
# A learning rate that blows up stops with the epoch, batch and layer.
run(1 out ${BIN}/mx-train ${W}/lenet.yaml optimizer.learning_rate=1e12 --run-dir ${W}/nan)
expect("${out}" "NaN or infinite in epoch 1, batch [0-9]+; first non-finite output: ")
