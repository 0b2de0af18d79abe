# The Fashion-MNIST LeNet config trains on gpu:0 to the CPU's accuracy: two
# epochs on each device (same seed), final validation accuracies within 1.5
# points. Without a GPU it prints one line, which ctest reports as skipped.
#   cmake -DBIN=<build>/cmd -DGPU_COUNT=<gpu_count> -DCONFIGS=<source>/configs -DWORK_DIR=... -P train_gpu.cmake
set(FM /usr/share/datasets/fashion-mnist)
include(${CMAKE_CURRENT_LIST_DIR}/run_program.cmake)
set(RUN_TIMEOUT 900)

run(0 count ${GPU_COUNT})
if(count MATCHES "^0 ")
  string(REGEX REPLACE "^0 GPU\\(s\\) \\((CUDA build: [a-z]+)\\).*" "\\1" build "${count}")
  message("no GPU found (${build}): LeNet GPU training test skipped")
  return()
endif()
require_fashion_mnist(${FM})
set(W ${WORK_DIR})
file(REMOVE_RECURSE ${W})
file(MAKE_DIRECTORY ${W})

foreach(device cpu gpu:0)
  string(REPLACE ":" "" dir ${device})
  run(0 out ${BIN}/mx-train ${CONFIGS}/lenet-fashion-mnist.yaml train.epochs=2
      "train.devices=[${device}]" --run-dir ${W}/${dir})
  expect("${out}" "epoch 2/2: train-accuracy")
  file(STRINGS ${W}/${dir}/metrics.jsonl lines)
  list(GET lines -1 last)
  string(JSON acc_${dir} GET "${last}" val accuracy)
endforeach()
message("validation accuracy after 2 epochs: cpu ${acc_cpu}, gpu:0 ${acc_gpu0}")
# In basis points (cmake's math is integer only).
function(basis_points value out_var)
  if(NOT value MATCHES "^([01])(\\.([0-9]*))?")
    message(FATAL_ERROR "not an accuracy: ${value}")
  endif()
  string(SUBSTRING "${CMAKE_MATCH_3}0000" 0 4 frac)
  math(EXPR bp "${CMAKE_MATCH_1} * 10000 + 1${frac} - 10000")
  set(${out_var} ${bp} PARENT_SCOPE)
endfunction()
basis_points(${acc_cpu} cpu_bp)
basis_points(${acc_gpu0} gpu_bp)
math(EXPR diff "${gpu_bp} - ${cpu_bp}")
if(diff GREATER 150 OR diff LESS -150)
  message(FATAL_ERROR "gpu:0 reached ${acc_gpu0}, the CPU ${acc_cpu}: more than 1.5 points apart")
endif()
