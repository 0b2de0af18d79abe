# Training and prediction on GPUs, run as a user runs the programs.
#   cmake -DBIN=<build>/cmd -DSOURCE=... -DWORK_DIR=... -DMODE=<mode> -P train_gpu.cmake
# MODE errors (label cli): a GPU that does not exist is a config error (exit 2)
#   naming the place, on any machine.
# MODE short (label gpu): LeNet on 2000 Fashion-MNIST images on gpu:0 reaches
#   the CPU's accuracy, resumes to the uninterrupted run's metrics, predicts
#   as the CPU does; on two GPUs with the device KVStore when there are two.
# MODE full (labels gpu, slow): configs/lenet-fashion-mnist.yaml on gpu:0, >= 91%.
# Without a GPU the gpu modes print "SKIPPED: ..." (ctest SKIP_REGULAR_EXPRESSION).
set(FM /usr/share/datasets/fashion-mnist)
include(${CMAKE_CURRENT_LIST_DIR}/run_program.cmake)

set(W ${WORK_DIR})
file(REMOVE_RECURSE ${W})
file(MAKE_DIRECTORY ${W})
set(NO_GPU "asked for, but (this build of mx has no CUDA support|no GPU found)")

# A config whose data is never read: the devices are checked first.
file(WRITE ${W}/tiny.yaml "network:\n  layers:\n    - {op: FullyConnected, name: fc, num_hidden: 2}\n"
     "    - {op: SoftmaxOutput, name: softmax}\n"
     "data:\n  train: {type: mnist, image: ${FM}/train-images-idx3-ubyte.gz,"
     " label: ${FM}/train-labels-idx1-ubyte.gz}\n"
     "train: {epochs: 1, batch_size: 10, devices: [gpu:0]}\n")

if(MODE STREQUAL "errors")
  set(ANY_GPU_ERROR "gpu:99 asked for, but (this build of mx has no CUDA support|no GPU found|only [0-9]+ GPU)")
  run(2 out ${BIN}/mx-train ${W}/tiny.yaml "train.devices=[gpu:99]")
  expect("${out}" "mx-train: error: command line: train.devices=\\[gpu:99\\]: ${ANY_GPU_ERROR}")
  run(2 out ${BIN}/mx-train ${W}/tiny.yaml "train.devices=[cpu, gpu:99]")
  expect("${out}" "${ANY_GPU_ERROR}")
  run(2 out ${BIN}/mx-predict -m ${W}/none --device gpu:99 ${W}/tiny.yaml)
  expect("${out}" "mx-predict: error: --device: ${ANY_GPU_ERROR}")
  # The config file's own line is named.
  execute_process(COMMAND ${BIN}/mx-train ${W}/tiny.yaml --run-dir ${W}/probe RESULT_VARIABLE code OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(code EQUAL 2)
    expect("${err}" "tiny.yaml:[0-9]+:[0-9]+: gpu:0 ${NO_GPU}")
  endif()
  return()
endif()

# Is there a GPU? (the check comes before any data is read)
execute_process(COMMAND ${BIN}/mx-train ${W}/tiny.yaml --run-dir ${W}/probe RESULT_VARIABLE code
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(code EQUAL 2 AND err MATCHES "${NO_GPU}")
  message("SKIPPED: no GPU here (${err})")
  return()
endif()
require_fashion_mnist(${FM})

# Last line of a run's metrics.jsonl: VAR_train and VAR_val accuracy.
function(final_accuracy run_dir var)
  file(STRINGS ${run_dir}/metrics.jsonl lines)
  list(GET lines -1 last)
  string(JSON t GET "${last}" train accuracy)
  set(${var}_train ${t} PARENT_SCOPE)
  string(JSON v ERROR_VARIABLE none GET "${last}" val accuracy)
  set(${var}_val ${v} PARENT_SCOPE)
  set(${var}_line "${last}" PARENT_SCOPE)
endfunction()
function(expect_close a b tolerance what)
  math(EXPR ok "0")  # cmake has no float arithmetic: compare in thousandths
  string(REGEX REPLACE "^0?\\.([0-9][0-9][0-9]).*" "\\1" ma "${a}0000")
  string(REGEX REPLACE "^0?\\.([0-9][0-9][0-9]).*" "\\1" mb "${b}0000")
  math(EXPR diff "${ma} - ${mb}")
  if(diff LESS 0)
    math(EXPR diff "-${diff}")
  endif()
  if(diff GREATER ${tolerance})
    message(FATAL_ERROR "${what}: ${a} vs ${b} (more than 0.${tolerance} apart, in thousandths)")
  endif()
endfunction()

if(MODE STREQUAL "full")
  run(0 out ${BIN}/mx-train ${SOURCE}/configs/lenet-fashion-mnist.yaml "train.devices=[gpu:0]"
      --run-dir ${W}/lenet)
  final_accuracy(${W}/lenet acc)
  string(REGEX REPLACE "^0?\\.([0-9][0-9]).*" "\\1" pct "${acc_val}00")
  if(pct LESS 91)
    message(FATAL_ERROR "LeNet on gpu:0: validation accuracy ${acc_val} after 10 epochs, below 0.91")
  endif()
  message("LeNet on gpu:0: validation accuracy ${acc_val}")
  return()
endif()

# MODE short
run(0 out ${BIN}/mx-pack pack ${FM}/train-images-idx3-ubyte.gz ${W}/fm --limit 2000 --train-ratio 0.8 -q)
set(WORK ${W})
configure_file(${SOURCE}/tests/cli/lenet-small.yaml.in ${W}/lenet.yaml @ONLY)

run(0 out ${BIN}/mx-train ${W}/lenet.yaml --run-dir ${W}/cpu)
run(0 out ${BIN}/mx-train ${W}/lenet.yaml "train.devices=[gpu:0]" --run-dir ${W}/gpu)
final_accuracy(${W}/cpu cpu)
final_accuracy(${W}/gpu gpu)
expect_close(${gpu_val} ${cpu_val} 30 "validation accuracy on gpu:0 and on the CPU")
# The checkpoint files have the CPU run's layout (names, shapes, cpu device).
file(SIZE ${W}/cpu/model-0002.params cpu_size)
file(SIZE ${W}/gpu/model-0002.params gpu_size)
if(NOT cpu_size EQUAL gpu_size)
  message(FATAL_ERROR "model-0002.params: ${gpu_size} bytes from gpu:0, ${cpu_size} from the CPU")
endif()

# Resume on the GPU: the second epoch's metrics are the uninterrupted run's
# (to rounding: GPU reductions may order sums differently between runs).
run(0 out ${BIN}/mx-train ${W}/lenet.yaml "train.devices=[gpu:0]" train.epochs=1 --run-dir ${W}/split)
run(0 out ${BIN}/mx-train --resume ${W}/split train.epochs=2)
expect("${out}" "resumed from .*model-0001.params")
final_accuracy(${W}/split split)
expect_close(${split_val} ${gpu_val} 2 "validation accuracy after resuming on gpu:0")
expect_close(${split_train} ${gpu_train} 2 "training accuracy after resuming on gpu:0")

# Predict on gpu:0: the CPU's predictions of the same model.
run(0 cpu_out ${BIN}/mx-predict -m ${W}/gpu ${W}/fm_val.rec --data-shape 1,28,28 --scale 0.00390625)
run(0 gpu_out ${BIN}/mx-predict -m ${W}/gpu ${W}/fm_val.rec --data-shape 1,28,28 --scale 0.00390625
    --device gpu:0)
string(REGEX MATCH "accuracy (0\\.[0-9]+)" m "${cpu_out}")
set(cpu_pred ${CMAKE_MATCH_1})
string(REGEX MATCH "accuracy (0\\.[0-9]+)" m "${gpu_out}")
set(gpu_pred ${CMAKE_MATCH_1})
expect_close(${gpu_pred} ${cpu_pred} 3 "mx-predict accuracy on gpu:0 and on the CPU")

# Two GPUs with the device KVStore (NCCL), when there are two.
execute_process(COMMAND ${BIN}/mx-train ${W}/lenet.yaml "train.devices=[gpu:0, gpu:1]"
                        kvstore=device --run-dir ${W}/two
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(code EQUAL 2 AND err MATCHES "gpu:1 asked for, but only 1 GPU")
  message("two-GPU part skipped: one GPU here")
elseif(NOT code EQUAL 0)
  message(FATAL_ERROR "two GPUs with kvstore device: exit code ${code}\n${out}${err}")
else()
  final_accuracy(${W}/two two)
  expect_close(${two_val} ${gpu_val} 30 "validation accuracy on two GPUs and on one")
endif()
