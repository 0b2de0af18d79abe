# configs/chargpt-fortunes.yaml (a 4-layer character GPT) end to end on a
# slice of Debian's fortunes: mx-pack text, then mx-train (2 epochs of the
# configured network on windows of 32 characters, batches of 8): perplexity
# falls, validation runs, the checkpoint is written; mx-predict --generate
# samples from it on a context as long as the training windows.
#   cmake -DBIN=<build>/cmd -DSOURCE=... -DWORK_DIR=... -P train_chargpt.cmake
set(FORTUNES /usr/share/games/fortunes)
include(${CMAKE_CURRENT_LIST_DIR}/run_program.cmake)

if(NOT EXISTS ${FORTUNES}/goedel)
  message(FATAL_ERROR "Debian's fortunes are missing: install the fortunes package (scripts/setup.sh)")
endif()
set(W ${WORK_DIR})
file(REMOVE_RECURSE ${W})
file(MAKE_DIRECTORY ${W}/data)

run(0 out ${BIN}/mx-pack text ${FORTUNES}/goedel ${FORTUNES}/magic ${FORTUNES}/pets
    -o ${W}/data/fortunes --record-separator % --max-vocab 96 --val-ratio 0.1)
run(0 out ${BIN}/mx-train ${SOURCE}/configs/chargpt-fortunes.yaml --run-dir ${W}/run
    data.train.path_rec=${W}/data/fortunes_train.rec data.val.path_rec=${W}/data/fortunes_val.rec
    data.train.seq_len=32 data.val.seq_len=32 train.epochs=2 train.batch_size=8)
expect("${out}" "epoch 2/2: train-perplexity [0-9.]+ train-accuracy [0-9.]+ val-perplexity [0-9.]+")
file(STRINGS ${W}/run/metrics.jsonl lines)
list(GET lines 0 first)
list(GET lines 1 second)
string(JSON p1 GET "${first}" train perplexity)
string(JSON p2 GET "${second}" train perplexity)
string(JSON v2 GET "${second}" val perplexity)
# 96 characters: a model that learned nothing has a perplexity near 96.
if(NOT p2 LESS p1 OR NOT v2 LESS 40)
  message(FATAL_ERROR "the language model did not learn: train perplexity ${p1} -> ${p2}, "
                      "validation ${v2}")
endif()
expect("${out}" "predict with: mx-predict --model [^\n]*model-0002 --generate 200")

# Generation past the training windows (32): the model sees the last 32
# characters at each step; the same seed gives the same text.
run(0 a ${BIN}/mx-predict -m ${W}/run --generate 80 --prompt "The " --seed 7 --temperature 0.8)
run(0 b ${BIN}/mx-predict -m ${W}/run --generate 80 --prompt "The " --seed 7 --temperature 0.8)
run(0 c ${BIN}/mx-predict -m ${W}/run --generate 80 --prompt "The " --seed 8 --top-k 5)
if(NOT a STREQUAL b OR a STREQUAL c)
  message(FATAL_ERROR "generation is not a function of the seed:\n${a}\n${b}\n${c}")
endif()
expect("${a}" "^The ")
string(LENGTH "${a}" length)
if(length LESS 80)
  message(FATAL_ERROR "80 generated characters expected after the prompt, got:\n${a}")
endif()
# A shorter context gives other text; a context must be positive.
run(0 d ${BIN}/mx-predict -m ${W}/run --generate 80 --prompt "The " --seed 7 --temperature 0.8
    --context 8)
if(a STREQUAL d)
  message(FATAL_ERROR "--context 8 did not change what the model sees:\n${a}\n${d}")
endif()
run(2 out ${BIN}/mx-predict -m ${W}/run --generate 5 --context -1)
expect("${out}" "--context takes a number of tokens >= 1")

# The checkpoint's graph is MXNet's operators: the attention layers are there
# as the interleaved attention operators.
file(READ ${W}/run/model-symbol.json symbol)
expect("${symbol}" "_contrib_interleaved_matmul_selfatt_qk")
expect("${symbol}" "_contrib_interleaved_matmul_selfatt_valatt")
foreach(f model-symbol.json model-0002.params model-0002.states)
  if(NOT EXISTS ${W}/run/${f})
    message(FATAL_ERROR "the run directory lacks ${f}")
  endif()
endforeach()
