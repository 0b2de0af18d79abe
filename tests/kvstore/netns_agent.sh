#!/usr/bin/env bash
# mpirun's launcher into namespace hosts, in place of ssh:
#   mpirun --mca plm_rsh_agent netns_agent.sh ...
# mpirun calls it as it would call ssh, `netns_agent.sh [OPTIONS] HOST CMD...`,
# with CMD shell-quoted for a remote shell; HOST is an address of the
# hostfile. MX_NETNS_HOSTS names the directory that netns_hosts.sh up wrote.
set -euo pipefail

if [ -z "${MX_NETNS_HOSTS:-}" ] || [ ! -f "$MX_NETNS_HOSTS/hosts" ]; then
  echo "usage: MX_NETNS_HOSTS=DIR netns_agent.sh HOST CMD... (DIR from netns_hosts.sh up)" >&2
  exit 255
fi
# ssh-style options that mpirun may pass first (e.g. -x): nothing to do here.
while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do shift; done
[ $# -ge 2 ] || { echo "netns_agent.sh: no HOST and command" >&2; exit 255; }
host=$1
shift
index=$(awk -v h="$host" '$2 == h || $5 == h { print NR; exit }' "$MX_NETNS_HOSTS/hosts")
if [ -z "$index" ]; then
  echo "netns_agent.sh: unknown host '$host' (not in $MX_NETNS_HOSTS/hosts)" >&2
  exit 255
fi
# As ssh does: the arguments joined by spaces are one command for a shell.
exec "$(dirname "$0")/netns_hosts.sh" run "$MX_NETNS_HOSTS" "$index" sh -c "$*"
