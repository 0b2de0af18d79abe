# Ctrl-C in the middle of an epoch, then --resume: the checkpoint records the
# epoch and the batches done, and the resumed run skips exactly those batches,
# so it ends with the very parameters of an uninterrupted run.
#   cmake -DBIN=<build>/cmd -DINTERRUPT=<interrupt_after> -DWORK_DIR=... -P train_interrupt.cmake
include(${CMAKE_CURRENT_LIST_DIR}/run_program.cmake)

# 480 training images in batches of 4: 120 batches an epoch. No Dropout, so
# every step depends only on the parameters and the batch.
fashion_mnist_workspace(600)
file(WRITE ${W}/net.yaml "network:
  layers:
    - {op: Convolution, name: conv1, kernel: [5, 5], num_filter: 4}
    - {op: Activation, name: tanh1, act_type: tanh}
    - {op: Pooling, name: pool1, pool_type: max, kernel: [2, 2], stride: [2, 2]}
    - {op: Flatten, name: flatten}
    - {op: FullyConnected, name: fc1, num_hidden: 10}
    - {op: SoftmaxOutput, name: softmax}
data:
  train: {type: record, path_imgrec: \"${W}/fm_train.rec\", data_shape: [1, 28, 28], scale: 0.00390625, shuffle: true}
  val: {type: record, path_imgrec: \"${W}/fm_val.rec\", data_shape: [1, 28, 28], scale: 0.00390625}
optimizer: {type: sgd, learning_rate: 0.05, momentum: 0.9}
initializer: {type: xavier}
train:
  epochs: 3
  batch_size: 4
  seed: 11
  log_interval: 1
")

run(0 out ${BIN}/mx-train ${W}/net.yaml --run-dir ${W}/full)

# Interrupt in the second epoch (a checkpoint in epoch 1 would be right by
# accident if the epoch were never recorded). The one-page stderr pipe of
# interrupt_after holds some 45 progress lines, so the signal lands well
# before batch 120 (progress lines are some 90 bytes).
run(130 out ${INTERRUPT} "epoch 2/3 batch 3/" ${BIN}/mx-train ${W}/net.yaml --run-dir ${W}/split)
expect("${out}" "interrupted in epoch 2 after batch [0-9]+; checkpoint [^\n]*model-0001.params")
string(REGEX MATCH "interrupted in epoch 2 after batch ([0-9]+)" _ "${out}")
set(done ${CMAKE_MATCH_1})
if(done LESS 3 OR done GREATER_EQUAL 120)
  message(FATAL_ERROR "interrupted after batch ${done}, not in the middle of epoch 2")
endif()
file(READ ${W}/split/model-0001.json state)
string(JSON epoch GET "${state}" epoch)
string(JSON batches GET "${state}" batches_done)
if(NOT epoch EQUAL 1 OR NOT batches EQUAL done)
  message(FATAL_ERROR "the interrupt checkpoint says epoch ${epoch}, batches_done ${batches}; "
                      "expected epoch 1 (completed), batches_done ${done}:\n${state}")
endif()
if(EXISTS ${W}/split/model-0002.params)
  message(FATAL_ERROR "an interrupted epoch wrote its end-of-epoch checkpoint")
endif()

# Resume from the checkpoint file itself (train_predict resumes from a run
# directory).
run(0 out ${BIN}/mx-train --resume ${W}/split/model-0001.params)
expect("${out}" "resumed from [^\n]*model-0001.params \\(epoch 1, batch ${done}\\)")
expect("${out}" "epoch 3/3: ")

# The same parameters and optimizer state as the run that was never stopped,
# and the same validation results for the epochs after the interrupt.
foreach(f model-0002.params model-0003.params model-0003.states)
  file(SHA256 ${W}/full/${f} a)
  file(SHA256 ${W}/split/${f} b)
  if(NOT a STREQUAL b)
    message(FATAL_ERROR "after resuming, ${f} differs from the uninterrupted run's")
  endif()
endforeach()
file(STRINGS ${W}/full/metrics.jsonl full_lines)
file(STRINGS ${W}/split/metrics.jsonl split_lines)
list(LENGTH split_lines n)
if(NOT n EQUAL 3)
  message(FATAL_ERROR "metrics.jsonl of the resumed run has ${n} lines, expected 3")
endif()
foreach(i 1 2)
  list(GET full_lines ${i} a)
  list(GET split_lines ${i} b)
  string(JSON va GET "${a}" val)
  string(JSON vb GET "${b}" val)
  string(JSON ea GET "${a}" epoch)
  string(JSON eb GET "${b}" epoch)
  if(NOT va STREQUAL vb OR NOT ea EQUAL eb)
    message(FATAL_ERROR "epoch ${eb} after resuming: ${vb}; uninterrupted epoch ${ea}: ${va}")
  endif()
endforeach()
