# train.loss_scale as a user runs it, in float32 (loss scaling does not
# depend on the type; float16 is refused on the CPU): a static power-of-two
# scale trains the very parameters of an unscaled run; a dynamic scale
# started far too high (1e38) overflows, skips steps, backs off and still
# trains; a resumed loss-scaled run ends with the parameters of an
# uninterrupted one; and the config's refusals.
#   cmake -DBIN=<build>/cmd -DSOURCE=... -DWORK_DIR=... -P train_loss_scale.cmake
include(${CMAKE_CURRENT_LIST_DIR}/run_program.cmake)

fashion_mnist_workspace(2000)
small_lenet_config()

function(same_file a b what)
  file(SHA256 ${a} ha)
  file(SHA256 ${b} hb)
  if(NOT ha STREQUAL hb)
    message(FATAL_ERROR "${what}: ${a} and ${b} differ")
  endif()
endfunction()

# Scaling by 1024 and dividing again is exact in float32 when nothing
# overflows: the parameters are byte for byte those of the unscaled run.
run(0 out ${BIN}/mx-train ${W}/lenet.yaml --run-dir ${W}/plain)
run(0 out ${BIN}/mx-train ${W}/lenet.yaml train.loss_scale=1024 --run-dir ${W}/static)
expect("${out}" "epoch 2/2: [^\n]* loss-scale 1024 skipped 0")
same_file(${W}/plain/model-0002.params ${W}/static/model-0002.params "a static scale of 1024")
run(0 out ${BIN}/mx-train ${W}/lenet.yaml train.loss_scale=dynamic --run-dir ${W}/dynamic)
same_file(${W}/plain/model-0002.params ${W}/dynamic/model-0002.params
          "a dynamic scale that never overflows")

# An injected overflow: the first steps' gradients are infinite at 1e38.
set(overflow "train.loss_scale={type: dynamic, init: 1e38, growth_interval: 7}")
run(0 out ${BIN}/mx-train ${W}/lenet.yaml ${overflow} train.epochs=3 --run-dir ${W}/overflow)
expect("${out}" "epoch 1/3 batch 10/32 [^\n]* loss-scale [0-9.e+]+ skipped [1-9]")
file(STRINGS ${W}/overflow/metrics.jsonl lines)
list(GET lines 0 first)
string(JSON skipped GET "${first}" skipped_steps)
string(JSON scale GET "${first}" loss_scale)
if(skipped LESS 1 OR NOT scale MATCHES "e\\+3[0-7]$")
  message(FATAL_ERROR "no overflow skipped and backed off in epoch 1: ${first}")
endif()
string(JSON accuracy GET "${first}" val accuracy)
list(GET lines 2 last)
string(JSON last_accuracy GET "${last}" val accuracy)
message(STATUS "overflow run: ${skipped} skipped steps in epoch 1, scale ${scale}, "
               "val accuracy ${accuracy} then ${last_accuracy}")
if(last_accuracy LESS 0.55)
  message(FATAL_ERROR "the overflowing run did not train: val accuracy ${last_accuracy}")
endif()
file(STRINGS ${W}/overflow/intervals.jsonl intervals)
list(GET intervals 0 interval)
string(JSON skipped_then GET "${interval}" skipped_steps)
if(skipped_then LESS 1)
  message(FATAL_ERROR "intervals.jsonl shows no skipped steps: ${interval}")
endif()

# Resume after epoch 2 (the scaler in the middle of a growth interval):
# the same parameters, optimizer state and scaler state as the run above.
run(0 out ${BIN}/mx-train ${W}/lenet.yaml ${overflow} train.epochs=2 --run-dir ${W}/split)
file(READ ${W}/split/model-0002.json state)
string(JSON saved_scale GET "${state}" loss_scale scale)
string(JSON saved_skipped GET "${state}" loss_scale skipped_steps)
string(JSON saved_good GET "${state}" loss_scale good_steps)
message(STATUS "checkpoint's scaler: scale ${saved_scale}, ${saved_skipped} skipped, "
               "${saved_good} good steps")
run(0 out ${BIN}/mx-train --resume ${W}/split train.epochs=3)
expect("${out}" "resumed from [^\n]*model-0002.params")
foreach(f model-0003.params model-0003.states)
  same_file(${W}/overflow/${f} ${W}/split/${f} "after resuming")
endforeach()
file(STRINGS ${W}/split/metrics.jsonl split_lines)
list(GET split_lines 2 split_last)
string(JSON a GET "${last}" skipped_steps)
string(JSON b GET "${split_last}" skipped_steps)
string(JSON sa GET "${last}" loss_scale)
string(JSON sb GET "${split_last}" loss_scale)
if(NOT a EQUAL b OR NOT sa STREQUAL sb)
  message(FATAL_ERROR "the resumed run's scaler differs: ${split_last} vs ${last}")
endif()
# Without the scaler's state the resumed run would start at 1e38 again.
if(saved_scale STREQUAL "1e+38")
  message(FATAL_ERROR "the checkpoint's scale never backed off: ${state}")
endif()

# The checkpoint stays MXNet's: only arg: and aux: arrays, no scale input.
run(0 out ${BIN}/mx-params ${W}/split/model-0003.params)
if(out MATCHES "__loss_scale__")
  message(FATAL_ERROR "the checkpoint holds the loss scale input:\n${out}")
endif()

# Refusals, exit 2, naming the file and the key.
run(2 out ${BIN}/mx-train ${W}/lenet.yaml train.loss_scale=0 --run-dir ${W}/bad)
expect("${out}" "command line: train.loss_scale=0: train.loss_scale must be a positive finite number")
run(2 out ${BIN}/mx-train ${W}/lenet.yaml "train.loss_scale={type: dynamic, factor: 0.5}"
    --run-dir ${W}/bad)
expect("${out}" "train.loss_scale.factor must be a finite number above 1")
run(2 out ${BIN}/mx-train ${W}/lenet.yaml "train.loss_scale={type: dynamic, window: 5}"
    --run-dir ${W}/bad)
expect("${out}" "unknown key 'train.loss_scale.window'")
run(2 out ${BIN}/mx-train ${W}/lenet.yaml kvstore=dist_sync train.loss_scale=dynamic
    --run-dir ${W}/bad)
expect("${out}" "train.loss_scale dynamic is not available with a dist kvstore")
