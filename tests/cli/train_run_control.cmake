# mx-train as a user sees it: plain progress lines in a log and a bar redrawn
# in place on a terminal (a pseudo-terminal made by script(1)); early stopping
# and the time budget, each with its checkpoint and reason; the summary's
# mx-predict command, run as printed; and a typo in the data section
# reported at its line before any data is read.
#   cmake -DBIN=<build>/cmd -DWORK_DIR=... -P train_run_control.cmake
include(${CMAKE_CURRENT_LIST_DIR}/run_program.cmake)

# 480 training images in batches of 20: 24 batches an epoch.
fashion_mnist_workspace(600)
set(net "network:
  layers:
    - {op: Flatten, name: flatten}
    - {op: FullyConnected, name: fc1, num_hidden: 10}
    - {op: SoftmaxOutput, name: softmax}
data:
  train: {type: record, path_imgrec: \"TRAIN\", data_shape: [1, 28, 28], scale: 0.00390625}
  val: {type: record, path_imgrec: \"${W}/fm_val.rec\", data_shape: [1, 28, 28], scale: 0.00390625}
optimizer: {type: sgd, learning_rate: 0.05}
train: {epochs: 3, batch_size: 20, seed: 1, log_interval: 5}
")
string(REPLACE "TRAIN" "${W}/fm_train.rec" text "${net}")
file(WRITE ${W}/net.yaml "${text}")

# Not a terminal: plain lines, no carriage returns. No improvement beats
# min_delta 10, so the run stops after epoch 2 (patience 1).
run(0 out ${BIN}/mx-train ${W}/net.yaml --run-dir ${W}/early
    "train.early_stop={metric: val.accuracy, patience: 1, min_delta: 10}")
expect("${out}" "epoch 1/3 batch 5/24 [0-9.]+ samples/s ETA [0-9]+:[0-9][0-9] run [0-9]+:[0-9][0-9] accuracy")
string(FIND "${out}" "\r" cr)
if(NOT cr EQUAL -1)
  message(FATAL_ERROR "a carriage return in output that is not a terminal:\n${out}")
endif()
expect("${out}" "early stop: val-accuracy has not improved by more than 10 for 1 epoch [^\n]*; stopped after epoch 2/3; checkpoint [^\n]*early/model-0002.params")
expect("${out}" "best epoch [12] \\(by val-accuracy\\): train-accuracy [0-9.]+ train-cross-entropy [0-9.]+ val-accuracy")
expect("${out}" "curves: [^\n]*early/curves.png")
if(EXISTS ${W}/early/model-0003.params)
  message(FATAL_ERROR "the early-stopped run trained its third epoch")
endif()
# The printed mx-predict command works as printed.
string(REGEX MATCH "predict with: (mx-predict [^\n]*)" _ "${out}")
set(predict "${CMAKE_MATCH_1}")
expect("${predict}" "^mx-predict --model [^ ]*early/model-000[12] [^ ]*fm_val.rec$")
separate_arguments(predict_args UNIX_COMMAND "${predict}")
list(POP_FRONT predict_args)
run(0 out ${BIN}/mx-predict ${predict_args})
expect("${out}" "120 prediction\\(s\\); accuracy 0\\.[0-9]+")

# The time budget: stops after the first batch with a checkpoint; --resume
# with a larger budget finishes the run.
run(0 out ${BIN}/mx-train ${W}/net.yaml --run-dir ${W}/budget train.max_time=0.000001s)
expect("${out}" "train.max_time \\(0:00\\) used up in epoch 1 after batch 1; checkpoint [^\n]*budget/model-0000.params; continue with: mx-train --resume [^\n]*budget/model-0000")
run(0 out ${BIN}/mx-train --resume ${W}/budget train.max_time=1h)
expect("${out}" "resumed from [^\n]*model-0000.params \\(epoch 0, batch 1\\)")
expect("${out}" "epoch 3/3:")
run(2 out ${BIN}/mx-train ${W}/net.yaml train.max_time=soon)
expect("${out}" "command line: train.max_time=soon: train.max_time 'soon' is not a time")

# A terminal: one line per epoch redrawn in place with a bar; TERM=dumb and
# MX_NO_PROGRESS_BAR give the plain lines.
find_program(SCRIPT script)
if(SCRIPT)
  run(0 out env TERM=xterm COLUMNS=100 ${SCRIPT} -q -e -c "${BIN}/mx-train ${W}/net.yaml --run-dir ${W}/tty train.epochs=1" /dev/null)
  expect("${out}" "\repoch 1/1 \\[[#.]+\\] [0-9]+/24 [0-9.]+ samples/s ETA [0-9:]+ run [0-9:]+ accuracy")
  expect("${out}" "\repoch 1/1 \\[#+\\] 24/24 ")
  run(0 out env TERM=dumb ${SCRIPT} -q -e -c "${BIN}/mx-train ${W}/net.yaml --run-dir ${W}/dumb train.epochs=1" /dev/null)
  expect("${out}" "epoch 1/1 batch 5/24 ")
  string(FIND "${out}" "\033[K" esc)
  if(NOT esc EQUAL -1)
    message(FATAL_ERROR "TERM=dumb got the redrawn bar:\n${out}")
  endif()
  run(0 out env TERM=xterm MX_NO_PROGRESS_BAR=1 ${SCRIPT} -q -e -c "${BIN}/mx-train ${W}/net.yaml --run-dir ${W}/off train.epochs=1" /dev/null)
  expect("${out}" "epoch 1/1 batch 5/24 ")
  string(FIND "${out}" "\033[K" esc)
  if(NOT esc EQUAL -1)
    message(FATAL_ERROR "MX_NO_PROGRESS_BAR got the redrawn bar:\n${out}")
  endif()
endif()

# A typo in the validation section is reported at its line even when the
# training data cannot be read: the values are checked before any data is.
string(REPLACE "TRAIN" "${W}/missing.rec" text "${net}")
string(REPLACE "scale: 0.00390625}\noptimizer" "scal: 0.00390625}\noptimizer" text "${text}")
file(WRITE ${W}/typo.yaml "${text}")
run(2 out ${BIN}/mx-train ${W}/typo.yaml --run-dir ${W}/typo)
expect("${out}" "typo.yaml:8:[0-9]+: data.val ImageRecordIter: unknown parameter 'scal' \\(did you mean 'scale'\\?\\)")
run(2 out ${BIN}/mx-train ${W}/net.yaml --run-dir ${W}/typo2 initializer.type=xavier initializer.magnitud=3)
expect("${out}" "command line: initializer.magnitud=3: ")
