# The pictures, as a user makes them: a short training run leaves curves.png
# and curves.svg, mx-plot compares two runs, mx-train --graph and
# mx-plot --graph draw networks; bad inputs exit with 2.
#   cmake -DBIN=<build>/cmd -DFIXTURES=... -DCHARTS=ON|OFF -DGRAPHS=ON|OFF -DWORK_DIR=...
#         -DONNX=ON|OFF -P pictures.cmake
include(${CMAKE_CURRENT_LIST_DIR}/run_program.cmake)

set(W ${WORK_DIR})
file(REMOVE_RECURSE ${W})
file(MAKE_DIRECTORY ${W})

function(expect_png path)
  if(NOT EXISTS ${path})
    message(FATAL_ERROR "${path} was not written")
  endif()
  file(READ ${path} head LIMIT 8 HEX)
  if(NOT head STREQUAL "89504e470d0a1a0a")
    message(FATAL_ERROR "${path} is not a PNG (starts with ${head})")
  endif()
  file(SIZE ${path} size)
  if(size LESS 2000)
    message(FATAL_ERROR "${path} is only ${size} bytes")
  endif()
endfunction()

# An SVG that is well-formed XML (when xmllint is there) and names `words`.
function(expect_svg path)
  if(NOT EXISTS ${path})
    message(FATAL_ERROR "${path} was not written")
  endif()
  file(READ ${path} svg)
  expect("${svg}" "<svg")
  expect("${svg}" "</svg>")
  foreach(word ${ARGN})
    expect("${svg}" "${word}")
  endforeach()
  find_program(XMLLINT xmllint)
  if(XMLLINT)
    run(0 out ${XMLLINT} --noout ${path})
  endif()
endfunction()

file(WRITE ${W}/small.yaml "
network:
  layers:
    - {op: Convolution, name: conv1, kernel: [3, 3], num_filter: 4}
    - {op: Activation, name: relu1, act_type: relu}
    - {op: Flatten, name: flatten}
    - {op: FullyConnected, name: head_fc1, num_hidden: 16}
    - {op: Activation, name: head_relu, act_type: relu}
    - {op: FullyConnected, name: head_fc2, num_hidden: 3}
    - {op: SoftmaxOutput, name: softmax}
data:
  train: {type: synthetic, data_shape: [1, 8, 8], num_classes: 3, num_batches: 4}
  val: {type: synthetic, data_shape: [1, 8, 8], num_classes: 3, num_batches: 2, seed: 1}
optimizer: {type: sgd, learning_rate: 0.1}
lr_scheduler: {type: factor, step: 4, factor: 0.5}
train: {epochs: 3, batch_size: 8, metrics: [acc, ce]}
")

# --- Curves of a training run -------------------------------------------------
run(0 out ${BIN}/mx-train ${W}/small.yaml --run-dir ${W}/lr0.1)
run(0 out ${BIN}/mx-train ${W}/small.yaml optimizer.learning_rate=0.05 --run-dir ${W}/lr0.05)
if(CHARTS)
  expect_png(${W}/lr0.1/curves.png)
  expect_svg(${W}/lr0.1/curves.svg "<title>Training run lr0.1</title>" "validation" "learning rate"
             "best validation accuracy")
  file(GLOB leftovers ${W}/lr0.1/*.tmp.*)
  if(leftovers)
    message(FATAL_ERROR "temporary files left: ${leftovers}")
  endif()
else()
  if(EXISTS ${W}/lr0.1/curves.png)
    message(FATAL_ERROR "a build without Cairo drew curves.png")
  endif()
endif()

# --- The running training metrics between epochs ------------------------------
# Every 2 of the 4 batches: two points an epoch in intervals.jsonl, drawn in the curves.
if(EXISTS ${W}/lr0.1/intervals.jsonl)
  message(FATAL_ERROR "a run whose log interval never ended wrote intervals.jsonl")
endif()
run(0 out ${BIN}/mx-train ${W}/small.yaml train.log_interval=2 --run-dir ${W}/intervals)
file(STRINGS ${W}/intervals/intervals.jsonl points)
list(LENGTH points n)
if(NOT n EQUAL 6)
  message(FATAL_ERROR "intervals.jsonl has ${n} lines, not 6: ${points}")
endif()
list(GET points 5 last)
expect("${last}" "\"batch\":4,\"batches_per_epoch\":4,\"epoch\":3,\"log_interval\":2,\"train\":.\"accuracy\":")
file(STRINGS ${W}/intervals/metrics.jsonl epochs)
list(LENGTH epochs n)
if(NOT n EQUAL 3)
  message(FATAL_ERROR "metrics.jsonl has ${n} lines, not one per epoch")
endif()
if(CHARTS)
  expect_png(${W}/intervals/curves.png)
  file(READ ${W}/intervals/curves.svg svg)
  expect("${svg}" "opacity[:=]\"?0\\.45")  # the light line of the interval points
  file(READ ${W}/lr0.1/curves.svg svg)
  if(svg MATCHES "opacity[:=]\"?0\\.45")
    message(FATAL_ERROR "a run without interval points drew their line")
  endif()
  # A bad line is an error naming its place.
  file(COPY ${W}/intervals/metrics.jsonl DESTINATION ${W}/bad_intervals)
  file(WRITE ${W}/bad_intervals/intervals.jsonl "{\"epoch\":1,\"batch\":2}\nnot json\n")
  run(2 out ${BIN}/mx-plot ${W}/bad_intervals -o ${W}/bad.png)
  expect("${out}" "intervals.jsonl:2: not a JSON line")
endif()

# --- mx-plot: two runs on the same axes ----------------------------------------
if(CHARTS)
  run(0 out ${BIN}/mx-plot ${W}/lr0.1 ${W}/lr0.05 -o ${W}/compare.png)
  expect_png(${W}/compare.png)
  run(0 out ${BIN}/mx-plot ${W}/lr0.1 ${W}/lr0.05 --metric val.accuracy,train.cross-entropy
      -o ${W}/compare.svg)
  expect_svg(${W}/compare.svg "lr0\\.1" "lr0\\.05" "validation accuracy" "training loss")
else()
  run(1 out ${BIN}/mx-plot ${W}/lr0.1 ${W}/lr0.05 -o ${W}/compare.png)
  expect("${out}" "built without Cairo")
endif()
run(0 out ${BIN}/mx-plot ${W}/lr0.1 --list)
expect("${out}" "lr0.1: learning_rate samples_per_sec seconds train.accuracy train.cross-entropy val.accuracy")

# Bad inputs: exit code 2 and a message that says what is wrong.
run(2 out ${BIN}/mx-plot ${W}/lr0.1 --metric val.acc -o ${W}/x.png)
expect("${out}" "no run has the series 'val.acc'; the runs have: learning_rate, .*val.accuracy")
run(2 out ${BIN}/mx-plot ${W}/nothing -o ${W}/x.png)
expect("${out}" "run directory '.*nothing' does not exist")
run(2 out ${BIN}/mx-plot ${W} -o ${W}/x.png)
expect("${out}" "metrics.jsonl' is missing")
run(2 out ${BIN}/mx-plot ${W}/lr0.1 -o ${W}/x.jpg)
expect("${out}" "unknown picture format '.jpg'")
run(2 out ${BIN}/mx-plot ${W}/lr0.1)
expect("${out}" "give the picture to write with -o")
file(MAKE_DIRECTORY ${W}/cut)
file(WRITE ${W}/cut/metrics.jsonl "{\"epoch\": 1, \"train\": {\"accuracy\": 0.5}}\n{\"epoch\": 2, \"tr")
run(2 out ${BIN}/mx-plot ${W}/cut -o ${W}/x.png)
expect("${out}" "metrics.jsonl:2: the last line is cut short")
if(EXISTS ${W}/x.png OR EXISTS ${W}/x.jpg)
  message(FATAL_ERROR "a failed mx-plot left a picture")
endif()

# --- Network graphs -------------------------------------------------------------
run(0 out ${BIN}/mx-train ${W}/small.yaml --graph ${W}/net.dot --run-dir ${W}/not_a_run)
file(READ ${W}/net.dot dot)
expect("${dot}" "digraph network")
expect("${dot}" "conv1\\\\nConvolution: 3x3, 4 filters\\\\n→ 8×4×6×6")
expect("${dot}" "subgraph cluster_0 {\n *label=\"head\"")
expect("${dot}" "label=\" 8×16\"")
if(EXISTS ${W}/not_a_run)
  message(FATAL_ERROR "mx-train --graph started a run")
endif()
if(GRAPHS)
  run(0 out ${BIN}/mx-train ${W}/small.yaml --graph ${W}/net.svg)
  expect_svg(${W}/net.svg "head_fc1" "FullyConnected: 16 units")
  run(0 out ${BIN}/mx-train ${W}/small.yaml --graph ${W}/net.png)
  expect_png(${W}/net.png)
  # An MXNet symbol file and an ONNX model.
  run(0 out ${BIN}/mx-plot --graph ${FIXTURES}/graph/resblock-symbol.json --shape 1,3,32,32
      -o ${W}/resblock.svg)
  expect_svg(${W}/resblock.svg "Convolution" "1×")
  if(ONNX)
    run(0 out ${BIN}/mx-plot --graph ${FIXTURES}/onnx/lenet/model.onnx -o ${W}/onnx.svg)
    expect_svg(${W}/onnx.svg "Convolution" "1×1×28×28")
  endif()
else()
  run(1 out ${BIN}/mx-train ${W}/small.yaml --graph ${W}/net.svg)
  expect("${out}" "built without Graphviz")
endif()
run(2 out ${BIN}/mx-train ${W}/small.yaml --graph ${W}/net.pdf)
expect("${out}" "unknown picture format '.pdf'")
run(2 out ${BIN}/mx-plot --graph ${W}/missing-symbol.json -o ${W}/m.svg)
run(2 out ${BIN}/mx-plot --graph ${W}/small.yaml -o ${W}/m.svg)
expect("${out}" "is a config: draw it with mx-train .*small.yaml --graph")
run(2 out ${BIN}/mx-plot --graph ${FIXTURES}/graph/resblock-symbol.json --data-name img -o ${W}/m.svg)
expect("${out}" "has no input 'img'; its arguments: data")
