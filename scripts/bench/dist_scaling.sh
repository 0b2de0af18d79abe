#!/usr/bin/env bash
# The MXNet paper's scaling experiment, in small: an EMULATION on one
# machine. Network namespaces play the hosts (tests/kvstore/netns_hosts.sh:
# addresses from 192.0.2.0/24 on one bridge), each host's link shaped with
# `tc ... tbf` to a rate (each way); every rate is measured before it is used
# (scripts/bench/tcp_rate.py, one TCP connection host 1 -> host 2). All
# hosts share this machine's CPU cores: worker (and DDP rank) i is pinned to
# core i mod cores (all its threads) and computes on one thread
# (MX_NUM_THREADS=1, torch.set_num_threads(1)); --pin none leaves them
# unpinned; servers are not pinned. On a machine with fewer cores than
# workers the workers share cores, which a real cluster would not: the
# per-worker throughput then measures CPU sharing as well as the network.
#
# usage: scripts/bench/dist_scaling.sh [throughput|convergence|all] [OPTIONS]
#   throughput    the --model (synthetic data, --batches steps)
#                 with 1, 2, 4 workers on hosts 1..W and the servers on hosts
#                 of their own (1 server up to 2 workers, 2 for more; keys of
#                 100,000 elements and more split over the servers), in
#                 dist_sync with overlap (the default), without
#                 (kvstore.overlap=false) and with 2-bit compression; PyTorch
#                 DDP (gloo) with 2 and more ranks on the same worker hosts
#                 and links; both against one worker alone (no kvstore, no
#                 process group) pinned the same way. Prints a table;
#                 OUT/throughput.tsv
#   convergence   Fashion-MNIST LeNet (configs/lenet-fashion-mnist.yaml on one
#                 device, --epochs epochs) in dist_sync with 1, 2, 4 workers
#                 over the --conv-link link: run directories OUT/1-worker,
#                 OUT/2-workers, ... (with
#                 wallclock.tsv: each epoch's end in seconds since the launch)
#   all           both (default)
# Options:
#   --model M       the throughput runs' network: lenet (default; batch 64
#                   per worker, scripts/bench/lenet_synthetic_yaml.sh) or
#                   resnet18 (configs/resnet18-cifar.yaml on synthetic
#                   3x32x32 images, batch 32 per worker); DDP trains the same
#                   (scripts/bench/ddp_train.py)
#   --bin DIR       mx-train and mx-serve-ps (default build/cmd, or $MX_BIN)
#   --python PY     a python with torch for the DDP peer (default python3, or
#                   $MX_TORCH_PYTHON); "none" leaves the peer out
#   --workers LIST  default "1 2 4"
#   --links LIST    tc rates, default "1gbit 10gbit" ("none": the bare veth)
#   --batches N     steps per throughput run (default 150)
#   --rounds R      throughput rounds (default 2)
#   --epochs E      convergence epochs (default 3)
#   --conv-link R   the convergence runs' link (default 1gbit)
#   --pin cores|none  cores (default): worker i's process, all its threads,
#                   on core i mod cores; none: no pinning, the kernel places
#                   every thread (each worker still computes on one thread)
#   --out DIR       keep the results there (default: a temporary folder,
#                   removed at the end)
# Needs root (network namespaces, tc); without it prints SKIPPED and exits
# 77. Every namespace, link, qdisc and process it makes is removed at the
# end, however it ends.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
what=all
case ${1:-} in throughput | convergence | all) what=$1 && shift ;; esac
bin=${MX_BIN:-$root/build/cmd}
python=${MX_TORCH_PYTHON:-python3}
workers_list="1 2 4"
links="1gbit 10gbit"
batches=150
rounds=2
epochs=3
conv_link=1gbit
pinning=cores
model=lenet
out=
while [ $# -gt 0 ]; do
  case $1 in
    --bin) bin=$2 ;;
    --python) python=$2 ;;
    --workers) workers_list=$2 ;;
    --links) links=$2 ;;
    --batches) batches=$2 ;;
    --rounds) rounds=$2 ;;
    --epochs) epochs=$2 ;;
    --conv-link) conv_link=$2 ;;
    --pin) pinning=$2 ;;
    --model) model=$2 ;;
    --out) out=$2 ;;
    *)
      sed -n '/^# usage:/,/^# end, however/p' "$0" | sed 's/^# \{0,1\}//' >&2
      exit 2
      ;;
  esac
  shift 2
done
case $pinning in cores | none) ;; *) echo "dist_scaling.sh: --pin cores or none, not '$pinning'" >&2 && exit 2 ;; esac
case $model in lenet | resnet18) ;; *) echo "dist_scaling.sh: --model lenet or resnet18, not '$model'" >&2 && exit 2 ;; esac
for program in mx-train mx-serve-ps; do
  [ -x "$bin/$program" ] || { echo "dist_scaling.sh: no $bin/$program (--bin DIR)" >&2; exit 2; }
done
bin=$(cd "$bin" && pwd)
hosts_sh=$root/tests/kvstore/netns_hosts.sh
"$hosts_sh" check
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

work=$(mktemp -d)
keep_out=1
if [ -z "$out" ]; then out=$work/out && keep_out=0; fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
hosts=$work/hosts
cleanup() {
  local pid
  for pid in $(jobs -p); do kill "$pid" 2>/dev/null || true; done
  "$hosts_sh" down "$hosts"
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 143' INT TERM

say() { echo "[dist_scaling $(date +%T)] $*" >&2; }
cores=$(nproc)
# pin I: sets the array pfx to the command prefix that pins worker I
# (0-based) to core I mod cores, all of the process's threads (its
# communication threads included); empty with --pin none.
pfx=()
pin() { if [ "$pinning" = cores ]; then pfx=(taskset -c $(($1 % cores))); else pfx=(); fi; }
servers_for() { if [ "$1" -le 2 ]; then echo 1; else echo 2; fi; }
max_workers=0 max_servers=0
for w in $workers_list; do
  if [ "$w" -gt "$max_workers" ]; then max_workers=$w; fi
  s=$(servers_for "$w")
  if [ "$s" -gt "$max_servers" ]; then max_servers=$s; fi
done
nhosts=$((max_workers + max_servers))
if [ $nhosts -lt 2 ]; then nhosts=2; fi # the rate is measured between hosts 1 and 2
"$hosts_sh" up "$hosts" $nhosts
"$hosts_sh" sysctl "$hosts" "$root/scripts/mpi/sysctl.conf"
export MX_NETNS_HOSTS=$hosts
name() { "$hosts_sh" name "$hosts" "$1"; }
ns() { "$hosts_sh" ns "$hosts" "$1"; }
# in_host I CMD...: CMD in host I; waited for in the background, so that
# Ctrl-C or SIGTERM reaches the traps at once (the clean-up ends CMD).
in_host() {
  local i=$1 && shift
  "$hosts_sh" run "$hosts" "$i" "$@" &
  wait $!
}
say "$nhosts hosts: $(awk '{ printf "%s %s; ", $3, $2 }' "$hosts/hosts")$cores cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

# Shape every link to RATE and measure what one TCP connection achieves.
achieved=
set_link() {
  local rate=$1 burst=4mb # 256kb held 10gbit to about 7.9 Gb/s
  case $rate in *kbit | *mbit | 1gbit) burst=256kb ;; esac
  "$hosts_sh" shape "$hosts" "$rate" $burst
  in_host 2 timeout 60 python3 "$root/scripts/bench/tcp_rate.py" recv 5201 >"$work/rate" &
  local receiver=$!
  in_host 1 timeout 60 python3 "$root/scripts/bench/tcp_rate.py" send 192.0.2.2 5201 300
  wait $receiver
  achieved=$(sed -n 's/.*: \([0-9.]*\) Gb\/s/\1/p' "$work/rate")
  say "link $rate (tbf burst $burst): $(cat "$work/rate")"
}

# Bytes host I's link carried (sent + received) so far.
link_bytes() {
  local ns_i && ns_i=$(ns "$1")
  # shellcheck disable=SC2016 # expanded by the inner shell, inside the namespace
  ip netns exec "$ns_i" sh -c 'echo $(( $(cat /sys/class/net/mx0/statistics/tx_bytes) + $(cat /sys/class/net/mx0/statistics/rx_bytes) ))'
}

# The throughput runs' network: a config and its overrides, the batch per worker.
# shellcheck source=scripts/bench/lenet_synthetic_yaml.sh
source "$root/scripts/bench/lenet_synthetic_yaml.sh"
if [ "$model" = lenet ]; then
  write_lenet_yaml "$work/lenet.yaml" "$batches"
  model_config=$work/lenet.yaml model_args=() batch=64
else
  model_config=$root/configs/resnet18-cifar.yaml batch=32
  model_args=("data.train.num_batches=$batches" train.epochs=1 train.checkpoint_every=0 train.log_interval=100000)
fi

# mpirun inside host 1, launching into the others (docs/distributed.md,
# "Trying it on one machine"); servers on hosts after the workers'.
mpirun_across() {
  in_host 1 timeout 600 mpirun --tune "$root/scripts/mpi/mca-params.conf" --timeout 540 \
    --oversubscribe --bind-to none --mca plm_rsh_agent "$root/tests/kvstore/netns_agent.sh" \
    --mca plm_rsh_no_tree_spawn 1 --mca btl tcp,self --mca btl_tcp_if_include 192.0.2.0/24 \
    --mca oob_tcp_if_include 192.0.2.0/24 -x MX_NUM_THREADS=1 "$@"
}
# mx_job W RUN_DIR CONFIG OVERRIDES...: W workers and their servers.
mx_job() {
  local w=$1 run=$2 config=$3 s i
  shift 3
  s=$(servers_for "$w")
  local args=()
  for i in $(seq 1 "$s"); do
    args+=(-H "$(name $((max_workers + i)))" -np 1 "$bin/mx-serve-ps" :)
  done
  for i in $(seq 1 "$w"); do
    pin $((i - 1))
    args+=(-H "$(name "$i")" -np 1 "${pfx[@]}" "$bin/mx-train" "$config"
      kvstore.type=dist_sync kvstore.bigarray_bound=100000 "$@" --run-dir "$run")
    [ "$i" = "$w" ] || args+=(:)
  done
  mpirun_across "${args[@]}"
}
step_ms() { # the run directory's epoch seconds per batch, in ms
  sed -n 's/.*"seconds":\([0-9.e+-]*\).*/\1/p' "$1/metrics.jsonl" | awk -v b="$batches" '{ printf "%.2f", $1 * 1000 / b }'
}

port=29500
throughput() {
  local tsv=$out/throughput.tsv
  printf 'round\tlink\tachieved_gbps\tworkers\tservers\tsystem\tmode\tms_per_step\tsamples_per_s_per_worker\tscaling_efficiency\thost1_MB_per_step\tserver1_MB_per_step\tload\n' >"$tsv"
  local r link w mode run ms before after sbefore safter mb smb alone_mx alone_pt eff tput
  for r in $(seq "$rounds"); do
    # One worker alone, pinned to core 0, one thread: the reference.
    pin 0
    in_host 1 env MX_NUM_THREADS=1 "${pfx[@]}" "$bin/mx-train" "$model_config" "${model_args[@]}" --run-dir "$work/alone$r" >/dev/null 2>&1
    ms=$(step_ms "$work/alone$r")
    alone_mx=$(awk -v m="$ms" -v b="$batch" 'BEGIN { printf "%.1f", b * 1000 / m }')
    printf '%s\t-\t-\t1\t0\tmx\talone\t%s\t%s\t1.00\t0\t-\t%s\n' "$r" "$ms" "$alone_mx" "$(cut -d' ' -f1 /proc/loadavg)" >>"$tsv"
    say "mx alone: $ms ms/step"
    if [ "$python" != none ]; then
      in_host 1 "${pfx[@]}" "$python" "$root/scripts/bench/ddp_train.py" --model "$model" --batches "$batches" >"$work/pt_alone"
      ms=$(sed -n 's/.* \([0-9.]*\) ms\/step.*/\1/p' "$work/pt_alone")
      alone_pt=$(awk -v m="$ms" -v b="$batch" 'BEGIN { printf "%.1f", b * 1000 / m }')
      printf '%s\t-\t-\t1\t0\tpytorch\talone\t%s\t%s\t1.00\t0\t-\t%s\n' "$r" "$ms" "$alone_pt" "$(cut -d' ' -f1 /proc/loadavg)" >>"$tsv"
      say "pytorch alone: $(cat "$work/pt_alone")"
    fi
    for link in $links; do
      set_link "$link"
      for w in $workers_list; do
        for mode in overlap no-overlap 2bit; do
          run=$work/r$r-$link-w$w-$mode
          local extra=()
          [ $mode = no-overlap ] && extra=(kvstore.overlap=false)
          [ $mode = 2bit ] && extra=(kvstore.gradient_compression.type=2bit kvstore.gradient_compression.threshold=0.5)
          before=$(link_bytes 1)
          sbefore=$(link_bytes $((max_workers + 1)))
          mx_job "$w" "$run" "$model_config" "${model_args[@]}" "${extra[@]}" >"$run.out" 2>&1 ||
            { cat "$run.out" >&2; say "FAILED: mx $w workers $mode over $link"; exit 1; }
          after=$(link_bytes 1)
          safter=$(link_bytes $((max_workers + 1)))
          ms=$(step_ms "$run")
          tput=$(awk -v m="$ms" -v b="$batch" 'BEGIN { printf "%.1f", b * 1000 / m }')
          eff=$(awk -v t="$tput" -v a="$alone_mx" 'BEGIN { printf "%.2f", t / a }')
          mb=$(awk -v b=$((after - before)) -v n="$batches" 'BEGIN { printf "%.2f", b / n / 1e6 }')
          smb=$(awk -v b=$((safter - sbefore)) -v n="$batches" 'BEGIN { printf "%.2f", b / n / 1e6 }')
          printf '%s\t%s\t%s\t%s\t%s\tmx\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$link" "$achieved" "$w" "$(servers_for "$w")" \
            "$mode" "$ms" "$tput" "$eff" "$mb" "$smb" "$(cut -d' ' -f1 /proc/loadavg)" >>"$tsv"
          say "mx $w worker(s), $(servers_for "$w") server(s), $mode, $link: $ms ms/step, efficiency $eff, link MB/step: worker 0's host $mb, server 0's host $smb"
        done
        # DDP of one rank is the alone run: from 2 ranks on.
        if [ "$python" = none ] || [ "$w" = 1 ]; then continue; fi
        local i pids=()
        port=$((port + 1))
        before=$(link_bytes 1)
        for i in $(seq 1 "$w"); do
          pin $((i - 1))
          in_host "$i" env GLOO_SOCKET_IFNAME=mx0 timeout 300 "${pfx[@]}" "$python" \
            "$root/scripts/bench/ddp_train.py" --model "$model" --rank $((i - 1)) --world "$w" \
            --master 192.0.2.1:$port --batches "$batches" >"$work/ddp$i" 2>&1 &
          pids+=($!)
        done
        local rc=0
        for i in "${pids[@]}"; do wait "$i" || rc=$?; done
        if ! grep -q ' ms/step' "$work/ddp1"; then
          cat "$work"/ddp* >&2
          say "FAILED: DDP $w workers over $link"
          exit 1
        fi
        # A rank that fails after rank 0 has printed the time is reported, not fatal.
        if [ $rc != 0 ]; then say "warning: a DDP rank exited with status $rc after the run: $(grep -h -m1 -i 'terminate\|error' "$work"/ddp* | head -1)"; fi
        after=$(link_bytes 1)
        ms=$(sed -n 's/.* \([0-9.]*\) ms\/step.*/\1/p' "$work/ddp1")
        tput=$(awk -v m="$ms" -v b="$batch" 'BEGIN { printf "%.1f", b * 1000 / m }')
        eff=$(awk -v t="$tput" -v a="$alone_pt" 'BEGIN { printf "%.2f", t / a }')
        mb=$(awk -v b=$((after - before)) -v n="$batches" 'BEGIN { printf "%.2f", b / n / 1e6 }')
        printf '%s\t%s\t%s\t%s\t0\tpytorch-ddp\tgloo\t%s\t%s\t%s\t%s\t-\t%s\n' "$r" "$link" "$achieved" "$w" \
          "$ms" "$tput" "$eff" "$mb" "$(cut -d' ' -f1 /proc/loadavg)" >>"$tsv"
        say "pytorch DDP $w worker(s), $link: $ms ms/step, efficiency $eff, host 1 link $mb MB/step"
      done
    done
  done
  column -t -s $'\t' "$tsv"
}

convergence() {
  set_link "$conv_link"
  local w run start watcher runs=()
  for w in $workers_list; do
    run=$out/$w-worker
    if [ "$w" != 1 ]; then run=${run}s; fi
    rm -rf "$run"
    start=$(date +%s.%N)
    # The wall-clock time of each epoch's end: when its line reaches metrics.jsonl.
    (
      seen=0
      while sleep 0.2; do
        n=0
        if [ -f "$run/metrics.jsonl" ]; then n=$(wc -l <"$run/metrics.jsonl"); fi
        while [ "$seen" -lt "$n" ]; do
          seen=$((seen + 1))
          awk -v now="$(date +%s.%N)" -v s="$start" -v e="$seen" 'BEGIN { printf "%d %.2f\n", e, now - s }' >>"$run/wallclock.tsv"
        done
      done
    ) &
    watcher=$!
    mx_job "$w" "$run" "$root/configs/lenet-fashion-mnist.yaml" "train.epochs=$epochs" 'train.devices=[cpu:0]' \
      train.checkpoint_every=0 >"$work/conv-w$w.out" 2>&1 ||
      { cat "$work/conv-w$w.out" >&2; say "FAILED: convergence with $w workers"; exit 1; }
    sleep 0.5
    kill $watcher 2>/dev/null || true
    wait $watcher 2>/dev/null || true
    say "convergence, $w worker(s) over $conv_link ($achieved Gb/s), load $(cut -d' ' -f1 /proc/loadavg):"
    grep '^epoch [0-9]*/[0-9]*:' "$work/conv-w$w.out" >&2 || true
    say "  wall clock at each epoch's end (s): $(awk '{ printf "%s ", $2 }' "$run/wallclock.tsv")"
    runs+=("$run")
  done
  # The pictures (mx-plot): against the epoch and against the training time.
  "$bin/mx-plot" "${runs[@]}" --metric val.accuracy -o "$out/convergence-epochs.png" >&2
  "$bin/mx-plot" "${runs[@]}" --metric val.accuracy --x time -o "$out/convergence-time.png" >&2
  say "pictures: $out/convergence-epochs.png, $out/convergence-time.png"
}

case $what in
  throughput) throughput ;;
  convergence) convergence ;;
  all) throughput && convergence ;;
esac
say "done; load $(cut -d' ' -f1-3 /proc/loadavg)"
if [ $keep_out = 1 ]; then say "results in $out"; fi
