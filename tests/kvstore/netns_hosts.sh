#!/usr/bin/env bash
# "Hosts" for multi-host tests on one machine: network namespaces joined by
# veth pairs to a bridge (a star), each with one address from the
# documentation range 192.0.2.0/24 and no other, loopback up, and a host
# name of its own (a UTS namespace per launched command).
#
# usage: netns_hosts.sh check
#          exit 0 if network namespaces can be made here; otherwise print why
#          and exit 77 (the tests' skip code)
#        netns_hosts.sh up DIR N [--same-name]
#          make N (1-8) hosts; their description goes to DIR (created):
#          DIR/hosts ("namespace address hostname same-name mpirun-name" per
#          line), DIR/hostfile (mpirun's: by host name, resolved through
#          /etc/netns/NAMESPACE/hosts). --same-name: every host keeps this
#          machine's host name, as containers on several machines may, and
#          mpirun names them by address.
#        netns_hosts.sh shape DIR RATE [BURST]
#          limit every host's link to RATE (tc's units, e.g. 1gbit) each way:
#          a tbf qdisc on the host's end (what it sends) and on the bridge's
#          end (what it receives); BURST (default 256kb) is the bucket.
#          RATE none removes the limit; the namespaces' deletion does too
#        netns_hosts.sh down DIR
#          kill every process in the hosts, delete the namespaces and links
#        netns_hosts.sh run DIR I CMD [ARG...]
#          run CMD in host I (1-based) under that host's name, argv intact
#        netns_hosts.sh sysctl DIR FILE
#          apply a sysctl file in every host (network settings are per
#          namespace: the machine's own stay as they are)
#        netns_hosts.sh ns DIR I      print host I's namespace
#        netns_hosts.sh name DIR I    print host I's name for mpirun (-H)
#        netns_hosts.sh pids DIR      print the processes left in any host
#
# Namespaces are named mxh-<pid of `up`>-h<I> (the bridge: -br), so runs in
# parallel do not collide; interface names live inside the namespaces (mx0 on
# each host, h<I> and br0 on the bridge), so they cannot collide either.
set -euo pipefail

usage() {
  sed -n '/^# usage:/,/^#$/p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

die() {
  echo "netns_hosts.sh: $*" >&2
  exit 1
}

# Namespace, address and host name of host I in DIR.
host_field() {
  local dir=$1 index=$2 field=$3
  awk -v i="$index" -v f="$field" 'NR == i { print $f }' "$dir/hosts"
}

cmd_check() {
  local probe="mxh-probe-$$"
  if ! command -v ip >/dev/null || ! command -v unshare >/dev/null; then
    echo "SKIPPED: ip (iproute2) or unshare (util-linux) is missing"
    exit 77
  fi
  local why
  if ! why=$(ip netns add "$probe" 2>&1); then
    echo "SKIPPED: cannot create network namespaces here (ip netns add: $why); run as root"
    exit 77
  fi
  if ! why=$(ip netns exec "$probe" unshare --uts true 2>&1); then
    ip netns del "$probe" 2>/dev/null || true
    echo "SKIPPED: cannot enter a network namespace with a host name of its own ($why)"
    exit 77
  fi
  ip netns del "$probe"
}

cmd_up() {
  [ $# -ge 2 ] || usage
  local dir=$1 count=$2 same_name=0
  [ "${3:-}" = --same-name ] && same_name=1
  case $count in 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8) ;; *) die "1 to 8 hosts, not '$count'" ;; esac
  mkdir -p "$dir"
  local prefix="mxh-$$"
  local bridge="$prefix-br"
  : >"$dir/hosts"
  : >"$dir/hosts.made"
  : >"$dir/hostfile"
  ip netns add "$bridge"
  # Record the bridge first, so that `down` finds whatever was made.
  echo "$bridge" >"$dir/namespaces"
  no_ipv6 "$bridge"
  ip -n "$bridge" link add br0 type bridge
  ip -n "$bridge" link set br0 up
  local i ns address name
  for i in $(seq 1 "$count"); do
    ns="$prefix-h$i"
    address="192.0.2.$i"
    if [ $same_name = 1 ]; then name=$(hostname); else name="mxh$i"; fi
    ip netns add "$ns"
    echo "$ns" >>"$dir/namespaces"
    no_ipv6 "$ns"
    ip -n "$bridge" link add "h$i" type veth peer name mx0 netns "$ns"
    ip -n "$bridge" link set "h$i" master br0 up
    ip -n "$ns" addr add "$address/24" dev mx0
    ip -n "$ns" link set mx0 up
    ip -n "$ns" link set lo up
    echo "$ns $address $name $same_name" >>"$dir/hosts.made"
  done
  # mpirun names a host by what the hostfile says (its messages say "node
  # mxh2"): by the host names, resolved by a hosts file that `ip netns exec`
  # puts in place of /etc/hosts, unless the names are shared or /etc/netns
  # cannot be written; then by address.
  local launch etc_hosts
  etc_hosts=$(
    echo "127.0.0.1 localhost"
    awk '{ print $2, $3 }' "$dir/hosts.made"
  )
  while read -r ns address name same; do
    launch=$address
    if [ "$same" = 0 ] && mkdir -p "/etc/netns/$ns" 2>/dev/null; then
      echo "/etc/netns/$ns" >>"$dir/etc"
      echo "$etc_hosts" >"/etc/netns/$ns/hosts" && launch=$name
    fi
    echo "$ns $address $name $same $launch" >>"$dir/hosts"
    echo "$launch slots=8" >>"$dir/hostfile"
  done <"$dir/hosts.made"
  rm "$dir/hosts.made"
  # The veths come up asynchronously: wait for every link's carrier.
  for i in $(seq 1 "$count"); do
    local tries=0
    until ip -n "$prefix-h$i" -o link show mx0 | grep -q LOWER_UP &&
      ip -n "$bridge" -o link show "h$i" | grep -q LOWER_UP; do
      tries=$((tries + 1))
      [ $tries -lt 50 ] || die "the link of host $i does not come up"
      sleep 0.1
    done
  done
}

# No IPv6 (and so no link-local addresses): 192.0.2.0/24 is the only network.
no_ipv6() {
  ip netns exec "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
    net.ipv6.conf.default.disable_ipv6=1 2>/dev/null || true
}

cmd_down() {
  [ $# -eq 1 ] || usage
  local dir=$1 ns
  [ -f "$dir/namespaces" ] || return 0
  # Twice: a process may be starting inside a host while the first kill runs.
  for _ in 1 2; do
    while read -r ns; do
      ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
    done <"$dir/namespaces"
    sleep 0.2
  done
  # Deleting a host's namespace deletes its veth end and so the pair.
  while read -r ns; do
    ip netns del "$ns" 2>/dev/null || true
  done <"$dir/namespaces"
  if [ -f "$dir/etc" ]; then
    xargs -r rm -rf <"$dir/etc"
    rm -f "$dir/etc"
  fi
  rm -f "$dir/namespaces"
}

cmd_run() {
  [ $# -ge 3 ] || usage
  local dir=$1 index=$2
  shift 2
  local ns name same
  ns=$(host_field "$dir" "$index" 1)
  name=$(host_field "$dir" "$index" 3)
  same=$(host_field "$dir" "$index" 4)
  [ -n "$ns" ] || die "no host $index in $dir/hosts"
  if [ "$same" = 1 ]; then
    exec ip netns exec "$ns" "$@"
  fi
  # shellcheck disable=SC2016 # $0 and $@ belong to the inner shell
  exec ip netns exec "$ns" unshare --uts -- sh -c 'hostname "$0" && exec "$@"' "$name" "$@"
}

cmd_shape() {
  [ $# -ge 2 ] || usage
  local dir=$1 rate=$2 burst=${3:-256kb} bridge ns i=0
  bridge=$(head -n 1 "$dir/namespaces")
  while read -r ns _; do
    i=$((i + 1))
    if [ "$rate" = none ]; then
      ip netns exec "$ns" tc qdisc del dev mx0 root 2>/dev/null || true
      ip netns exec "$bridge" tc qdisc del dev "h$i" root 2>/dev/null || true
      continue
    fi
    ip netns exec "$ns" tc qdisc replace dev mx0 root tbf rate "$rate" burst "$burst" latency 50ms
    ip netns exec "$bridge" tc qdisc replace dev "h$i" root tbf rate "$rate" burst "$burst" latency 50ms
  done <"$dir/hosts"
}

cmd_sysctl() {
  [ $# -eq 2 ] || usage
  local ns
  while read -r ns _; do
    ip netns exec "$ns" sysctl -q -p "$2" >/dev/null
  done <"$1/hosts"
}

cmd_pids() {
  [ $# -eq 1 ] || usage
  local ns
  [ -f "$1/namespaces" ] || return 0
  while read -r ns; do
    ip netns pids "$ns" 2>/dev/null || true
  done <"$1/namespaces"
}

[ $# -ge 1 ] || usage
command=$1
shift
case $command in
  check) cmd_check "$@" ;;
  up) cmd_up "$@" ;;
  down) cmd_down "$@" ;;
  run) cmd_run "$@" ;;
  ns) [ $# -eq 2 ] || usage && host_field "$1" "$2" 1 ;;
  name) [ $# -eq 2 ] || usage && host_field "$1" "$2" 5 ;;
  pids) cmd_pids "$@" ;;
  sysctl) cmd_sysctl "$@" ;;
  shape) cmd_shape "$@" ;;
  *) usage ;;
esac
