#!/usr/bin/env bash
# mx-train jobs across "hosts" made of network namespaces (label mpi).
#
# usage: multihost.sh SCENARIO SERVER TRAIN CLOSE
#   SERVER, TRAIN, CLOSE: the mx-serve-ps, mx-train and params_close programs
#   SCENARIO, each in the current directory:
#     sync           dist_sync on 2 hosts (a server on host 2, workers on both)
#                    ends with the parameters and metrics of the same job on
#                    one host
#     async          dist_async on 2 hosts trains the problem
#     three          2 servers and 3 workers on 3 hosts, keys split over the
#                    servers: the one-host job's parameters and metrics
#     resume         servers on hosts 2 and 3; SIGTERM to the worker on host
#                    2 stops the job with a checkpoint; --resume across the
#                    hosts ends with the uninterrupted one-host job's result
#     cut            host 2's link goes down mid-run
#     cut-same-name  the same with hosts that share this machine's host name
#     kill-host      every process of host 2 is killed mid-run
#     stop-server    the server (host 2) is stopped with SIGSTOP mid-run
#   A fault must end the whole job within 30 s, non-zero, with a message
#   naming the rank, its role and its host, and leave no process on any host.
# Environment: MPIRUN (default mpirun). Needs root for the namespaces;
# without it prints a SKIPPED line and exits 77.
set -euo pipefail

[ $# -eq 4 ] || {
  sed -n '/^# usage:/,/^# Environment/p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
scenario=$1
server=$2
train=$3
close=$4
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
hosts_sh=$here/netns_hosts.sh
mpirun=${MPIRUN:-mpirun}
started=$(date +%s)

say() { echo "[multihost +$(($(date +%s) - started))s] $*"; }
fail() {
  say "FAILED: $*"
  exit 1
}

"$hosts_sh" check
hosts=$PWD/hosts
cleanup() { "$hosts_sh" down "$hosts"; }
trap cleanup EXIT
trap 'exit 143' INT TERM
rm -rf runs ./*.out

# N hosts (and --same-name), set up as docs/distributed.md recommends.
same_name=0
h=()  # h[I]: host I as mpirun names it (-H)
hosts_up() {
  [ "${2:-}" = --same-name ] && same_name=1
  "$hosts_sh" up "$hosts" "$@"
  "$hosts_sh" sysctl "$hosts" "$root/scripts/mpi/sysctl.conf"
  export MX_NETNS_HOSTS=$hosts
  local i
  for i in $(seq 1 "$1"); do h[i]=$("$hosts_sh" name "$hosts" "$i"); done
  say "hosts (name address, mpirun's name): $(awk '{ printf "%s %s %s; ", $3, $2, $5 }' "$hosts/hosts")"
}

# mpirun inside host 1, launching into the others through the agent; the
# documented multi-host command line.
# shellcheck disable=SC2054 # the commas belong to mpirun's arguments
across=("$hosts_sh" run "$hosts" 1 "$mpirun" --tune "$root/scripts/mpi/mca-params.conf"
  --timeout 60 --oversubscribe --map-by node
  --mca plm_rsh_agent "$here/netns_agent.sh" --mca plm_rsh_no_tree_spawn 1
  --mca btl tcp,self --mca btl_tcp_if_include 192.0.2.0/24 --mca oob_tcp_if_include 192.0.2.0/24)
# The same job on this machine alone.
one=("$mpirun" --oversubscribe --timeout 60)

# run EXPECT NAME CMD...: runs CMD (output in NAME.out, shown), checks its
# exit status (a number or "nonzero").
run() {
  local expect=$1 name=$2 rc=0
  shift 2
  say "\$ $*"
  timeout 90 "$@" >"$name.out" 2>&1 || rc=$?
  cat "$name.out"
  say "exit status $rc"
  if [ "$expect" = nonzero ]; then
    [ $rc -ne 0 ] || fail "expected a non-zero exit status"
  else
    [ $rc -eq "$expect" ] || fail "expected exit status $expect, got $rc"
  fi
}

# Rows "label,x0..x7": the label is the pair of features with the largest
# sum, by a margin of at least 0.3 (a fixed generator: every run the same).
make_rows() {
  awk -v n="$1" 'BEGIN {
    s = 12345
    while (made < n) {
      for (j = 0; j < 8; j++) { s = (s * 48271) % 2147483647; x[j] = s % 2001 - 1000 }
      label = -1
      for (c = 0; c < 3; c++) {
        wins = 1
        for (d = 0; d < 3; d++)
          if (c != d && x[2*c] + x[2*c+1] - x[2*d] - x[2*d+1] < 300) wins = 0
        if (wins) label = c
      }
      if (label < 0) continue
      line = label
      for (j = 0; j < 8; j++) line = line sprintf(",%.3f", x[j] / 1000)
      print line
      made++
    }
  }'
}

# An MLP on data.csv (as tests/kvstore/dist_train.cmake's).
write_config() {
  cat >dist.yaml <<EOF
network:
  layers:
    - {op: FullyConnected, name: fc1, num_hidden: 16}
    - {op: Activation, name: relu1, act_type: relu}
    - {op: FullyConnected, name: fc2, num_hidden: 3}
    - {op: SoftmaxOutput, name: softmax}
data:
  train: {type: csv, data_csv: data.csv, data_shape: [8], label_column: 0, shuffle: false}
  val: {type: csv, data_csv: data.csv, data_shape: [8], label_column: 0}
optimizer: {type: sgd, learning_rate: 0.2, momentum: 0.9}
initializer: {type: xavier}
train:
  epochs: 2
  batch_size: 8
  seed: 5
  log_interval: 1000
  keep_checkpoints: 0
EOF
}

# The role table of NAME.out: every host of HOSTS... has a worker, and no
# server shares a host with every worker.
check_spread() {
  local name=$1
  shift
  awk -v want="$*" '
    $4 == "worker" { workers[$2] = 1 }
    $4 == "server" { servers[$2] = 1 }
    END {
      n = split(want, hosts, " ")
      for (i = 1; i <= n; i++)
        if (!(hosts[i] in workers)) { print "no worker on " hosts[i]; exit 1 }
      for (s in servers) {
        alone = 0
        for (w in workers) if (w != s) alone = 1
        if (!alone) { print "server host " s " has every worker"; exit 1 }
      }
    }' "$name.out" || fail "the ranks are not spread over the hosts as intended"
}

# Runs A and B ended alike: epoch E's parameters byte for byte (the servers
# sum in worker order whatever the transport) and the same metrics.
same_result() {
  local a=$1 b=$2 epoch
  epoch=$(printf %04d "$3")
  if ! cmp "$a/model-$epoch.params" "$b/model-$epoch.params"; then
    "$close" "$a/model-$epoch.params" "$b/model-$epoch.params" 0 || true
    fail "$a and $b end with different parameters"
  fi
  local strip='s/"samples_per_sec":[^,]*,//; s/"seconds":[^,]*,//'
  diff <(sed "$strip" "$a/metrics.jsonl") <(sed "$strip" "$b/metrics.jsonl") ||
    fail "$a and $b have different metrics"
  say "$a and $b: identical parameters and metrics after epoch $3"
}

# The pid of PROGRAM (its process name) in host I.
pid_in_host() {
  local pid
  for pid in $(ip netns pids "$("$hosts_sh" ns "$hosts" "$1")"); do
    if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ]; then
      echo "$pid"
      return 0
    fi
  done
  fail "no $2 in host $1"
}

# A fault: starts a long dist_sync job (server on host 2, workers on hosts 1
# and 2; heartbeats every 0.5 s, time-out 3 s), runs FAULT once it trains,
# and checks that the job ends within 30 s, non-zero, with output matching
# PATTERN and without NOT_PATTERN, and that no process is left on any host.
fault() {
  local fault=$1 pattern=$2 not_pattern=${3:-}
  cat >synth.yaml <<'EOF'
network:
  layers:
    - {op: FullyConnected, name: fc1, num_hidden: 16}
    - {op: SoftmaxOutput, name: softmax}
data:
  train: {type: synthetic, data_shape: [8], num_classes: 3, num_batches: 10000000}
train: {epochs: 1, batch_size: 8, log_interval: 20}
kvstore: {type: dist_sync, heartbeat_interval: 0.5, heartbeat_timeout: 3}
EOF
  say "\$ ${across[*]} -H ${h[2]} -np 1 $server : -H ${h[1]},${h[2]} -np 2 $train synth.yaml"
  timeout 90 "${across[@]}" -H "${h[2]}" -np 1 "$server" : -H "${h[1]},${h[2]}" -np 2 \
    "$train" synth.yaml --run-dir runs/fault >fault.out 2>&1 &
  local job=$! i=0
  until grep -q "batch [0-9]" fault.out; do
    i=$((i + 1))
    if [ $i -ge 300 ] || ! kill -0 $job 2>/dev/null; then
      cat fault.out
      fail "the job did not start training"
    fi
    sleep 0.1
  done
  [ "$same_name" = 1 ] || check_spread fault mxh1 mxh2
  say "training; the fault: $fault"
  local t0 rc=0
  t0=$(date +%s%N)
  eval "$fault"
  local deadline=$((t0 + 30000000000))
  while kill -0 $job 2>/dev/null && [ "$(date +%s%N)" -lt $deadline ]; do sleep 0.1; done
  if kill -0 $job 2>/dev/null; then
    grep -v "batch [0-9]" fault.out
    fail "the job was still running 30 s after the fault"
  fi
  wait $job || rc=$?
  local ended=$((($(date +%s%N) - t0) / 1000000))
  grep -v "batch [0-9]" fault.out
  say "the job ended $ended ms after the fault, exit status $rc"
  [ $rc -ne 0 ] || fail "expected a non-zero exit status"
  grep -Eq "$pattern" fault.out || fail "the output does not match '$pattern'"
  if [ -n "$not_pattern" ] && grep -Eq "$not_pattern" fault.out; then
    fail "the output matches '$not_pattern'"
  fi
  local left
  while left=$("$hosts_sh" pids "$hosts") && [ -n "$left" ] && [ "$(date +%s%N)" -lt $deadline ]; do
    sleep 0.1
  done
  if [ -n "$left" ]; then
    ps -o pid,args -p "$(echo "$left" | paste -sd,)" || true
    fail "processes were left on the hosts 30 s after the fault"
  fi
  say "nothing left on any host $((($(date +%s%N) - t0) / 1000000)) ms after the fault"
}

case $scenario in
  sync)
    hosts_up 2
    make_rows 96 >data.csv
    write_config
    run 0 hosts "${across[@]}" -H "${h[2]}" -np 1 "$server" : -H "${h[1]},${h[2]}" -np 2 \
      "$train" dist.yaml kvstore=dist_sync --run-dir runs/hosts
    check_spread hosts mxh1 mxh2
    run 0 one "${one[@]}" -np 1 "$server" : -np 2 "$train" dist.yaml kvstore=dist_sync \
      --run-dir runs/one
    same_result runs/hosts runs/one 2
    ;;
  async)
    hosts_up 2
    make_rows 240 >data.csv
    write_config
    # Each push is a step of its own: half dist_sync's rate.
    run 0 hosts "${across[@]}" -H "${h[2]}" -np 1 "$server" : -H "${h[1]},${h[2]}" -np 2 \
      "$train" dist.yaml kvstore=dist_async optimizer.learning_rate=0.1 train.epochs=6 \
      --run-dir runs/async
    check_spread hosts mxh1 mxh2
    grep -q "dist_async" hosts.out || fail "not a dist_async job"
    acc=$(tail -1 runs/async/metrics.jsonl | sed 's/.*"val":{"accuracy":\([0-9.]*\).*/\1/')
    say "dist_async across 2 hosts: val accuracy $acc"
    awk -v a="$acc" 'BEGIN { exit !(a >= 0.95) }' || fail "val accuracy $acc < 0.95"
    ;;
  three)
    hosts_up 3
    make_rows 96 >data.csv
    write_config
    # fc1's weight (128 elements) and more are split over both servers.
    split=(kvstore.bigarray_bound=64 kvstore=dist_sync)
    run 0 hosts "${across[@]}" -H "${h[2]},${h[3]}" -np 2 "$server" \
      : -H "${h[1]},${h[2]},${h[3]}" -np 3 "$train" dist.yaml "${split[@]}" --run-dir runs/hosts
    check_spread hosts mxh1 mxh2 mxh3
    run 0 one "${one[@]}" -np 2 "$server" : -np 3 "$train" dist.yaml "${split[@]}" \
      --run-dir runs/one
    same_result runs/hosts runs/one 2
    ;;
  resume)
    hosts_up 3
    make_rows 96 >data.csv
    write_config
    on_hosts=(-H "${h[2]},${h[3]}" -np 2 "$server" : -H "${h[1]},${h[2]}" -np 2 "$train")
    # SIGTERM to the worker on host 2 once an epoch is done: both workers
    # stop after the same batch, with a checkpoint of the servers' states.
    (
      i=0
      while [ ! -s runs/int/metrics.jsonl ] && [ $i -lt 600 ]; do
        sleep 0.1
        i=$((i + 1))
      done
      kill -TERM "$(pid_in_host 2 mx-train)"
    ) &
    run 130 int "${across[@]}" "${on_hosts[@]}" dist.yaml kvstore=dist_sync train.epochs=100000 \
      train.keep_checkpoints=2 --run-dir runs/int
    check_spread int mxh1 mxh2
    stop=$(grep -Eo "interrupted in epoch [0-9]+ after batch [0-9]+" int.out) ||
      fail "no interrupt checkpoint"
    epoch=$(echo "$stop" | awk '{ print $4 }')
    for s in 0 1; do
      [ -f "runs/int/model-$(printf %04d $((epoch - 1))).states.server${s}of2" ] ||
        fail "the interrupt's checkpoint lacks server $s's states"
    done
    run 0 resumed "${across[@]}" "${on_hosts[@]}" --resume runs/int train.epochs="$epoch"
    grep -q "resumed from" resumed.out || fail "did not resume"
    run 0 one "${one[@]}" -np 2 "$server" : -np 2 "$train" dist.yaml kvstore=dist_sync \
      train.epochs="$epoch" --run-dir runs/one
    # The resumed run's metrics.jsonl also holds the epochs before the stop.
    cmp "runs/int/model-$(printf %04d "$epoch").params" "runs/one/model-$(printf %04d "$epoch").params" ||
      fail "the resumed run's parameters differ from the uninterrupted one's"
    say "resumed across the hosts: the uninterrupted one-host parameters after epoch $epoch"
    ;;
  cut)
    hosts_up 2
    fault "ip -n $("$hosts_sh" ns "$hosts" 2) link set mx0 down" \
      "rank 0 \(host mxh2, server 0\) has not been heard from for [0-9]+ s.*unreachable"
    ;;
  cut-same-name)
    hosts_up 2 --same-name
    name=$(hostname)
    fault "ip -n $("$hosts_sh" ns "$hosts" 2) link set mx0 down" \
      "rank 0 \(host $name, server 0\) has not been heard from for [0-9]+ s.*unreachable" \
      "has died"
    ;;
  kill-host)
    hosts_up 2
    # The host's daemon dies with its ranks: mpirun notices at once, ends
    # the job and from then on drops the ranks' output, so mx's own message
    # (rank 2 sees the server's process gone) seldom gets through. mpirun's
    # names the host as the start-up table does, which says who ran there.
    fault "ip netns pids $("$hosts_sh" ns "$hosts" 2) | xargs kill -9" \
      "Remote daemon: .* on node mxh2|rank 0 \(host mxh2, server 0\) has died"
    grep -Eq "^ +0 +mxh2 +[0-9]+ +server" fault.out || fail "the table does not show server 0 on mxh2"
    ;;
  stop-server)
    hosts_up 2
    # shellcheck disable=SC2016 # expanded when the fault happens
    fault 'kill -STOP "$(pid_in_host 2 mx-serve-ps)"' \
      "rank 0 \(host mxh2, server 0\) has not been heard from for [0-9]+ s \(heartbeat time-out 3 s\): its process [0-9]+ is stopped"
    ;;
  *)
    fail "unknown scenario '$scenario'"
    ;;
esac
say "passed"
