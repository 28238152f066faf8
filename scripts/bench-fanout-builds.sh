#!/usr/bin/env bash
# Compares BenchmarkEmbedFanout across builds, alternately in one run, so a noisy machine moves
# them together: bench-fanout-builds.sh [-n ITEMS] [-r ROUNDS] [-b BENCH] COMMIT...
# Each commit is checked out in a worktree under $TMPDIR and its integration test binary built
# there first, so the runs measure the code, not the compiler. Example (docs/performance.md):
#   scripts/bench-fanout-builds.sh -n 100000 246e930 HEAD
set -euo pipefail
items=100000 rounds=2 bench='EmbedFanout/items=%d/provider=fake-20ms$'
while getopts n:r:b: o; do
  case $o in
    n) items=$OPTARG ;;
    r) rounds=$OPTARG ;;
    b) bench=$OPTARG ;;
    *) echo "usage: $0 [-n ITEMS] [-r ROUNDS] [-b BENCH] COMMIT..." >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: $0 [-n ITEMS] [-r ROUNDS] [-b BENCH] COMMIT..." >&2; exit 2; }
repo=$(git rev-parse --show-toplevel)
work=$(mktemp -d)
commits=()
trap 'for c in "${commits[@]}"; do git -C "$repo" worktree remove --force "$work/$c" 2>/dev/null || true; done; rm -rf "$work"' EXIT
for ref in "$@"; do
  c=$(git -C "$repo" rev-parse --short "$ref")
  commits+=("$c")
  git -C "$repo" worktree add -q --detach "$work/$c" "$c"
  (cd "$work/$c" && go test -c -o "$work/$c.test" ./integration)
done
perItem=0
[ "$items" -le 10000 ] && perItem=1
for r in $(seq 1 "$rounds"); do
  for c in "${commits[@]}"; do
    (cd "$work/$c/integration" && WEFT_FANOUT_ITEMS=$items WEFT_FANOUT_PER_ITEM=$perItem "$work/$c.test" -test.run '^$' \
      -test.bench "$(printf "$bench" "$items")" -test.benchtime 1x -test.timeout 30m 2>&1 | grep -a 'items/s' | sed "s/^/$c round $r: /")
  done
done
