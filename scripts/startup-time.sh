#!/usr/bin/env bash
# Median wall time of a command over N runs (default 21), in ms: how docs/performance.md measures
# the CLI's start-up, e.g.
#   scripts/startup-time.sh bin/weft validate templates/workflows/multi-collection-search.json
#   scripts/startup-time.sh bin/weft-stack validate templates/workflows/multi-collection-search.json
set -euo pipefail
n=${RUNS:-21}
[ $# -gt 0 ] || { echo "usage: [RUNS=N] $0 COMMAND [ARGS...]" >&2; exit 2; }
for _ in $(seq "$n"); do
  s=$(date +%s%N)
  "$@" >/dev/null 2>&1 || true
  e=$(date +%s%N)
  echo $(( (e - s) / 1000 ))
done | sort -n | awk -v n="$n" '{a[NR]=$1} END {printf "%.1f ms (median of %d)\n", a[int((NR+1)/2)]/1000, n}'
