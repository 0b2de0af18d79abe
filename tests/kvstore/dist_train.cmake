# mx-train under mpirun with mx-serve-ps (label mpi): one scenario per test.
#   -DSCENARIO=equal|batchnorm|unequal|resume|interrupt|compress|tcp|pack|kill|async|errors
#   -DMPIRUN=... -DSERVER=mx-serve-ps -DTRAIN=mx-train -DCLOSE=params_close
# Data: a CSV of 3 classes (the label is the largest of three feature pairs'
# sums), generated here with a fixed LCG so every run sees the same rows.
cmake_minimum_required(VERSION 3.20)
set(mpirun ${MPIRUN} --oversubscribe --timeout 60)

# Writes ROWS rows "label,x0..x7" to PATH; rows are listed in ORDER (indices).
function(write_rows path rows)
  set(text "")
  foreach(row IN LISTS rows)
    string(APPEND text "${row}\n")
  endforeach()
  file(WRITE ${path} "${text}")
endfunction()

# COUNT rows whose winning pair beats the others by at least 0.3, so that a
# small MLP separates them fully in a few epochs.
function(make_rows count out)
  set(state 12345)
  set(rows "")
  set(made 0)
  while(made LESS count)
    set(values "")
    set(x "")
    foreach(j RANGE 0 7)
      math(EXPR state "(${state} * 1103515245 + 12345) % 2147483648")
      math(EXPR v "(${state} / 65536) % 2001 - 1000")
      list(APPEND x ${v})
      # v / 1000 as a decimal
      if(v LESS 0)
        math(EXPR a "-${v}")
        set(sign "-")
      else()
        set(a ${v})
        set(sign "")
      endif()
      math(EXPR whole "${a} / 1000")
      math(EXPR frac "${a} % 1000 + 1000")
      string(SUBSTRING "${frac}" 1 3 frac)
      list(APPEND values "${sign}${whole}.${frac}")
    endforeach()
    set(sums "")
    foreach(p 0 2 4)
      math(EXPR q "${p} + 1")
      list(GET x ${p} a)
      list(GET x ${q} b)
      math(EXPR sum "${a} + ${b}")
      list(APPEND sums ${sum})
    endforeach()
    set(label -1)
    foreach(c 0 1 2)
      list(GET sums ${c} mine)
      set(wins TRUE)
      foreach(d 0 1 2)
        list(GET sums ${d} other)
        math(EXPR margin "${mine} - ${other}")
        if(NOT c EQUAL d AND margin LESS 300)
          set(wins FALSE)
        endif()
      endforeach()
      if(wins)
        set(label ${c})
      endif()
    endforeach()
    if(NOT label EQUAL -1)
      string(REPLACE ";" "," values "${values}")
      list(APPEND rows "${label},${values}")
      math(EXPR made "${made} + 1")
    endif()
  endwhile()
  set(${out} "${rows}" PARENT_SCOPE)
endfunction()

function(write_config path csv extra)
  file(WRITE ${path} "# an MLP on generated CSV data (no BatchNorm/Dropout)
network:
  layers:
    - {op: FullyConnected, name: fc1, num_hidden: 16}
    - {op: Activation, name: relu1, act_type: relu}
    - {op: FullyConnected, name: fc2, num_hidden: 3}
    - {op: SoftmaxOutput, name: softmax}
data:
  train: {type: csv, data_csv: ${csv}, data_shape: [8], label_column: 0, shuffle: false}
  val: {type: csv, data_csv: ${csv}, data_shape: [8], label_column: 0}
optimizer: {type: sgd, learning_rate: 0.2, momentum: 0.9}
initializer: {type: xavier}
train:
  epochs: 2
  batch_size: 8
  seed: 5
  log_interval: 1000
  keep_checkpoints: 0
${extra}")
endfunction()

function(run)
  cmake_parse_arguments(R "" "EXPECT;MATCH" "COMMAND" ${ARGN})
  execute_process(COMMAND ${R_COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  TIMEOUT 90)
  message("$ ${R_COMMAND}\n${out}${err}exit status: ${rc}")
  set(run_output "${out}${err}" PARENT_SCOPE)
  if(NOT DEFINED R_EXPECT)
    set(R_EXPECT 0)
  endif()
  if(R_EXPECT STREQUAL "nonzero")
    if(rc EQUAL 0 OR NOT rc MATCHES "^[0-9]+$")
      message(FATAL_ERROR "expected a non-zero exit status, got '${rc}'")
    endif()
  elseif(NOT rc STREQUAL R_EXPECT)
    message(FATAL_ERROR "expected exit status ${R_EXPECT}, got '${rc}'")
  endif()
  if(DEFINED R_MATCH AND NOT "${out}${err}" MATCHES "${R_MATCH}")
    message(FATAL_ERROR "the output does not match '${R_MATCH}'")
  endif()
endfunction()

# The last epoch's val accuracy in RUN/metrics.jsonl, in thousandths.
function(val_acc run out)
  file(STRINGS ${run}/metrics.jsonl lines)
  list(GET lines -1 last)
  string(JSON acc GET "${last}" val accuracy)
  math(EXPR permille "0")
  string(REGEX MATCH "^([0-9])\\.?([0-9]?[0-9]?[0-9]?)" m "${acc}0000")
  set(digits "${CMAKE_MATCH_2}000")
  string(SUBSTRING "${digits}" 0 3 digits)
  math(EXPR permille "${CMAKE_MATCH_1} * 1000 + 1${digits} - 1000")
  set(${out} ${permille} PARENT_SCOPE)
endfunction()

set(dist ${mpirun} -np 1 ${SERVER} : -np 2 ${TRAIN})
file(REMOVE_RECURSE runs)

if(SCENARIO STREQUAL "equal")
  # 2 workers with batch 8 against one process with batch 16 whose batch k
  # holds both workers' batch k (worker w reads rows [48w, 48w + 48)).
  make_rows(96 rows)
  write_rows(data.csv "${rows}")
  set(mixed "")
  foreach(k RANGE 0 5)
    foreach(w 0 1)
      math(EXPR first "48 * ${w} + 8 * ${k}")
      math(EXPR last "${first} + 7")
      foreach(i RANGE ${first} ${last})
        list(GET rows ${i} row)
        list(APPEND mixed "${row}")
      endforeach()
    endforeach()
  endforeach()
  write_rows(mixed.csv "${mixed}")
  write_config(dist.yaml data.csv "")
  write_config(single.yaml mixed.csv "")
  run(COMMAND ${dist} dist.yaml kvstore=dist_sync --run-dir runs/dist
      MATCH "epoch 2/2:.*val-accuracy")
  run(COMMAND ${TRAIN} single.yaml train.batch_size=16 --run-dir runs/single)
  # Float sums in another order: 1e-5 absolute on weights of size ~1.
  run(COMMAND ${CLOSE} runs/dist/model-0002.params runs/single/model-0002.params 1e-5)
  # Two devices in one process (the local kvstore sums their gradients), and
  # 2 workers with 2 devices each (level 1, then level 2), resumed after
  # epoch 1: the same parameters.
  run(COMMAND ${TRAIN} single.yaml train.batch_size=16 "train.devices=[cpu:0, cpu:1]"
              train.epochs=1 --run-dir runs/devices)
  run(COMMAND ${TRAIN} --resume runs/devices train.epochs=2)
  run(COMMAND ${CLOSE} runs/devices/model-0002.params runs/single/model-0002.params 1e-5)
  run(COMMAND ${dist} dist.yaml kvstore=dist_sync "train.devices=[cpu:0, cpu:1]"
              --run-dir runs/dist_devices)
  run(COMMAND ${CLOSE} runs/dist_devices/model-0002.params runs/single/model-0002.params 1e-5)
  # The workers' validation shards add up to the whole set.
  val_acc(runs/dist dist_acc)
  val_acc(runs/single single_acc)
  if(NOT dist_acc EQUAL single_acc)
    message(FATAL_ERROR "val accuracy ${dist_acc} (2 workers) != ${single_acc} (one process)")
  endif()
elseif(SCENARIO STREQUAL "batchnorm")
  # BatchNorm on the data itself: its moving statistics depend only on the
  # batches a worker sees, not on the weights. After an epoch of 2 workers
  # (worker w reads rows [48w, 48w + 48)) the checkpoint holds the mean of
  # what each shard alone gives one process.
  make_rows(96 rows)
  write_rows(data.csv "${rows}")
  list(SUBLIST rows 0 48 first)
  list(SUBLIST rows 48 48 second)
  write_rows(shard0.csv "${first}")
  write_rows(shard1.csv "${second}")
  foreach(name data shard0 shard1)
    write_config(${name}.yaml ${name}.csv "")
    file(READ ${name}.yaml text)
    string(REPLACE "  layers:\n" "  layers:\n    - {op: BatchNorm, name: bn, momentum: 0.5}\n" text "${text}")
    file(WRITE ${name}.yaml "${text}")
  endforeach()
  run(COMMAND ${dist} data.yaml kvstore=dist_sync train.epochs=1 --run-dir runs/dist)
  run(COMMAND ${TRAIN} shard0.yaml train.epochs=1 --run-dir runs/shard0)
  run(COMMAND ${TRAIN} shard1.yaml train.epochs=1 --run-dir runs/shard1)
  run(COMMAND ${CLOSE} runs/dist/model-0001.params runs/shard0/model-0001.params 1e-5
              runs/shard1/model-0001.params)
  # ... which is neither worker's own.
  run(COMMAND ${CLOSE} runs/dist/model-0001.params runs/shard0/model-0001.params 1e-3
              runs/shard0/model-0001.params EXPECT 1)
elseif(SCENARIO STREQUAL "unequal")
  # 97 rows: shards of 48 and 49, 6 and 7 batches; both train 6.
  make_rows(97 rows)
  write_rows(data.csv "${rows}")
  write_config(dist.yaml data.csv "")
  run(COMMAND ${dist} dist.yaml kvstore=dist_sync --run-dir runs/dist MATCH "epoch 2/2:")
elseif(SCENARIO STREQUAL "resume")
  # 3 epochs in one go against 1 epoch, then --resume for the others (the
  # servers' momentum comes back from the checkpoint).
  make_rows(96 rows)
  write_rows(data.csv "${rows}")
  write_config(dist.yaml data.csv "")
  run(COMMAND ${dist} dist.yaml kvstore=dist_sync train.epochs=3 --run-dir runs/whole)
  run(COMMAND ${dist} dist.yaml kvstore=dist_sync train.epochs=1 --run-dir runs/parts)
  if(NOT EXISTS ${CMAKE_CURRENT_BINARY_DIR}/runs/parts/model-0001.states.server0of1)
    message(FATAL_ERROR "the checkpoint has no server optimizer states")
  endif()
  run(COMMAND ${dist} --resume runs/parts train.epochs=3 train.keep_checkpoints=1
      MATCH "resumed from")
  # The same sums in the same order: equal up to 1e-6.
  run(COMMAND ${CLOSE} runs/whole/model-0003.params runs/parts/model-0003.params 1e-6)
  # keep_checkpoints prunes the servers' states with their checkpoint.
  file(GLOB left RELATIVE ${CMAKE_CURRENT_BINARY_DIR}/runs/parts
       ${CMAKE_CURRENT_BINARY_DIR}/runs/parts/model-000*)
  list(SORT left)
  message("left after pruning: ${left}")
  if(NOT left STREQUAL "model-0003.json;model-0003.params;model-0003.states.server0of1;model-0003.states.server0of1.json")
    message(FATAL_ERROR "keep_checkpoints=1 should leave only epoch 3's files")
  endif()
elseif(SCENARIO STREQUAL "compress")
  # 2-bit gradient compression trains this problem (its algorithm against a
  # reference is mpi_kvstore_compress). Threshold 0.05: gradients here are
  # around 0.01-0.1 per sample sum, so codes are mostly 0 and the residual
  # carries the rest to later steps.
  make_rows(240 rows)
  write_rows(data.csv "${rows}")
  write_config(dist.yaml data.csv "kvstore:
  type: dist_sync
  gradient_compression: {type: 2bit, threshold: 0.05}
")
  run(COMMAND ${dist} dist.yaml train.epochs=10 --run-dir runs/compressed MATCH "epoch 10/10:")
  # The codes change the updates: not the uncompressed run's parameters.
  run(COMMAND ${dist} dist.yaml train.epochs=10 kvstore.gradient_compression.type=none
              --run-dir runs/plain)
  run(COMMAND ${CLOSE} runs/compressed/model-0010.params runs/plain/model-0010.params 1e-3
      EXPECT 1)
  val_acc(runs/compressed acc)
  message("val accuracy with 2-bit compression: ${acc} (thousandths)")
  if(acc LESS 900)
    message(FATAL_ERROR "2-bit compressed training reached only ${acc} thousandths")
  endif()
elseif(SCENARIO STREQUAL "narrow")
  # Gradients pushed in bfloat16 and float16 (kvstore.gradient_dtype): the
  # servers widen and sum them in float32; training reaches the float32
  # run's accuracy, with parameters near its own but not equal to them.
  make_rows(240 rows)
  write_rows(data.csv "${rows}")
  write_config(dist.yaml data.csv "kvstore:
  type: dist_sync
")
  run(COMMAND ${dist} dist.yaml train.epochs=10 --run-dir runs/plain)
  foreach(dtype bfloat16 float16)
    run(COMMAND ${dist} dist.yaml train.epochs=10 kvstore.gradient_dtype=${dtype}
                --run-dir runs/${dtype} MATCH "epoch 10/10:")
    run(COMMAND ${CLOSE} runs/${dtype}/model-0010.params runs/plain/model-0010.params 1e-7
        EXPECT 1)
    run(COMMAND ${CLOSE} runs/${dtype}/model-0010.params runs/plain/model-0010.params 1e-2)
    val_acc(runs/${dtype} acc)
    message("val accuracy with ${dtype} gradients: ${acc} (thousandths)")
    if(acc LESS 900)
      message(FATAL_ERROR "training with ${dtype} gradients reached only ${acc} thousandths")
    endif()
  endforeach()
elseif(SCENARIO STREQUAL "tcp")
  # The 1 server + 2 workers run over TCP (loopback), not shared memory:
  # the same parameters as over shared memory.
  make_rows(96 rows)
  write_rows(data.csv "${rows}")
  write_config(dist.yaml data.csv "")
  run(COMMAND ${mpirun} --mca btl tcp,self -np 1 ${SERVER} : -np 2 ${TRAIN} dist.yaml
              kvstore=dist_sync --run-dir runs/tcp MATCH "epoch 2/2:.*val-accuracy")
  run(COMMAND ${dist} dist.yaml kvstore=dist_sync --run-dir runs/shm)
  run(COMMAND ${CLOSE} runs/tcp/model-0002.params runs/shm/model-0002.params 1e-6)
elseif(SCENARIO STREQUAL "pack")
  # The trainer pushes the small keys together (packed, the default) or each
  # alone (kvstore.pack_threshold=0): the same parameters, byte for byte, in
  # dist_sync. (dist_async trains packed by default in the "async" scenario.)
  make_rows(96 rows)
  write_rows(data.csv "${rows}")
  write_config(dist.yaml data.csv "")
  run(COMMAND ${dist} dist.yaml kvstore=dist_sync --run-dir runs/packed)
  run(COMMAND ${dist} dist.yaml kvstore.type=dist_sync kvstore.pack_threshold=0
              --run-dir runs/alone)
  foreach(epoch 0001 0002)
    run(COMMAND ${CMAKE_COMMAND} -E compare_files runs/packed/model-${epoch}.params
                runs/alone/model-${epoch}.params)
  endforeach()
elseif(SCENARIO STREQUAL "interrupt")
  # SIGTERM to worker 1 alone, once epoch 1 is logged: both workers stop
  # after the same batch (or dist_sync would wait for the missing push),
  # worker 0 checkpoints with the server's states, every rank exits and
  # mpirun returns the workers' 130. Resuming to the end of that epoch
  # equals a run that was not interrupted.
  make_rows(96 rows)
  write_rows(data.csv "${rows}")
  write_config(dist.yaml data.csv "")
  file(WRITE term_rank_2.sh "if [ \"$OMPI_COMM_WORLD_RANK\" = 2 ]; then
  (i=0; while [ ! -s runs/int/metrics.jsonl ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
   kill -TERM $$) &
fi
exec \"$@\"
")
  run(COMMAND ${mpirun} -np 1 ${SERVER} : -np 2 sh term_rank_2.sh ${TRAIN} dist.yaml
              kvstore=dist_sync train.epochs=100000 train.keep_checkpoints=2 --run-dir runs/int
      EXPECT 130 MATCH "interrupted in epoch [0-9]+ after batch [0-9]+")
  string(REGEX MATCH "interrupted in epoch ([0-9]+) after batch ([0-9]+)" m "${run_output}")
  set(epoch ${CMAKE_MATCH_1})
  math(EXPR stopped "${epoch} - 1")
  foreach(n stopped epoch)
    string(LENGTH "${${n}}" digits)
    while(digits LESS 4)
      set(${n} "0${${n}}")
      math(EXPR digits "${digits} + 1")
    endwhile()
  endforeach()
  if(NOT EXISTS ${CMAKE_CURRENT_BINARY_DIR}/runs/int/model-${stopped}.states.server0of1)
    message(FATAL_ERROR "the interrupt's checkpoint has no server optimizer states")
  endif()
  run(COMMAND ${dist} --resume runs/int train.epochs=${CMAKE_MATCH_1} MATCH "resumed from")
  run(COMMAND ${dist} dist.yaml kvstore=dist_sync train.epochs=${CMAKE_MATCH_1} --run-dir runs/ref)
  run(COMMAND ${CLOSE} runs/ref/model-${epoch}.params runs/int/model-${epoch}.params 1e-6)
  # Ctrl-C to mpirun: it passes SIGTERM to every rank after
  # odls_base_sigkill_timeout seconds and SIGKILL as long after that, and
  # stops passing on their output. Epochs of 300 batches keep worker 0 from
  # filling the output pipe meanwhile. 10 s for a batch and the checkpoint:
  # with 3 s a machine loaded 3 times over (a test run beside other jobs)
  # was SIGKILLed before writing it.
  foreach(i RANGE 1 50)
    list(APPEND repeated ${rows})
  endforeach()
  write_rows(big.csv "${repeated}")
  write_config(big.yaml big.csv "")
  file(WRITE ctrl_c.sh "${MPIRUN} --oversubscribe --timeout 60 --mca odls_base_sigkill_timeout 10 \
  -np 1 ${SERVER} : -np 2 ${TRAIN} big.yaml kvstore=dist_sync train.epochs=1000 --run-dir runs/c &
job=$!
i=0; while [ ! -s runs/c/metrics.jsonl ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
kill -INT $job
wait $job
")
  run(COMMAND sh ctrl_c.sh EXPECT nonzero)
  file(READ runs/c/train.log log)
  if(NOT log MATCHES "interrupted in epoch ([0-9]+) after batch")
    message(FATAL_ERROR "Ctrl-C: no interrupt checkpoint in train.log")
  endif()
  math(EXPR stopped "${CMAKE_MATCH_1} - 1")
  string(LENGTH "${stopped}" digits)
  while(digits LESS 4)
    set(stopped "0${stopped}")
    math(EXPR digits "${digits} + 1")
  endwhile()
  if(NOT EXISTS ${CMAKE_CURRENT_BINARY_DIR}/runs/c/model-${stopped}.states.server0of1)
    message(FATAL_ERROR "Ctrl-C: the checkpoint has no server optimizer states")
  endif()
elseif(SCENARIO STREQUAL "kill")
  # Worker 1 (rank 2) is killed while training a long synthetic epoch.
  file(WRITE synth.yaml "network:
  layers:
    - {op: FullyConnected, name: fc1, num_hidden: 16}
    - {op: SoftmaxOutput, name: softmax}
data:
  train: {type: synthetic, data_shape: [8], num_classes: 3, num_batches: 10000000}
train: {epochs: 1, batch_size: 8, log_interval: 1000000}
kvstore: {type: dist_sync, heartbeat_interval: 0.5, heartbeat_timeout: 4}
")
  file(WRITE kill_rank_2.sh
       "if [ \"$OMPI_COMM_WORLD_RANK\" = 2 ]; then (sleep 3; kill -9 $$) & fi\nexec \"$@\"\n")
  run(COMMAND ${mpirun} -np 1 ${SERVER} : -np 2 sh kill_rank_2.sh ${TRAIN} synth.yaml
              --run-dir runs/killed
      EXPECT nonzero
      MATCH "rank 2 \\(host [^,]+, worker 1\\) has died|process rank 2 .*signal 9")
elseif(SCENARIO STREQUAL "async")
  # dist_async reaches the synchronous run's accuracy within 1% (10 permille;
  # one sample of the 240 is 4.2).
  make_rows(240 rows)
  write_rows(data.csv "${rows}")
  write_config(dist.yaml data.csv "")
  # Each async push is a step of its own: half the rate keeps the step per
  # sample the same.
  run(COMMAND ${dist} dist.yaml kvstore=dist_sync train.epochs=10 --run-dir runs/sync)
  run(COMMAND ${dist} dist.yaml kvstore=dist_async train.epochs=10 optimizer.learning_rate=0.1
              --run-dir runs/async)
  val_acc(runs/sync sync_acc)
  val_acc(runs/async async_acc)
  math(EXPR gap "${sync_acc} - ${async_acc}")
  message("val accuracy: sync ${sync_acc}, async ${async_acc} (thousandths)")
  if(gap GREATER 10)
    message(FATAL_ERROR "dist_async is ${gap} thousandths below dist_sync")
  endif()
elseif(SCENARIO STREQUAL "errors")
  # Start-up problems end every rank with exit status 2; a worker's error
  # after start-up ends the job with its message.
  make_rows(32 rows)
  write_rows(data.csv "${rows}")
  write_config(dist.yaml data.csv "")
  run(COMMAND ${mpirun} -np 2 ${TRAIN} dist.yaml kvstore=dist_sync EXPECT 2 MATCH "needs servers")
  run(COMMAND ${mpirun} -np 1 ${SERVER} : -np 1 ${TRAIN} dist.yaml kvstore=dist_sync
              : -np 1 ${TRAIN} dist.yaml kvstore=dist_sync train.seed=9
      EXPECT 2 MATCH "configs differ")
  run(COMMAND ${dist} dist.yaml kvstore=dist_sync data.train.data_csv=missing.csv
      EXPECT 2 MATCH "error: worker [01]: [^\n]*missing.csv")
else()
  message(FATAL_ERROR "unknown SCENARIO '${SCENARIO}'")
endif()
