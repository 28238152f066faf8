#!/usr/bin/env bash
# Runs the browser and integration tests ROUNDS times while LOAD busy loops hold the CPUs, and
# prints how often each test failed: a test that fails in any round is a flaky test (a bug). The
# test binaries and the commands the tests start are built once, so every round runs the same code. Settings (environment):
#   ROUNDS  how many times (3)        LOAD  busy loops beside the tests (the number of CPUs)
#   RUN     go test -run pattern      PKGS  packages (./console/ ./integration/)
#   OUT     where logs go (a new folder under /tmp)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
LOAD=${LOAD:-$(nproc)}
RUN=${RUN:-.}
PKGS=${PKGS:-./console/ ./integration/}
OUT=${OUT:-$(mktemp -d /tmp/weft-flakes.XXXXXX)}
GO=${GO:-go}
mkdir -p "$OUT/bin"

pids=()
stop_load() { for p in "${pids[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done; }
trap stop_load EXIT

bins=()
for pkg in $PKGS; do
  name=$(echo "$pkg" | tr -c 'a-zA-Z0-9\n' '_' | sed 's/^_*//; s/_*$//')
  echo "flakes: building $pkg"
  "$GO" test -c -o "$OUT/bin/$name.test" "$pkg"
  bins+=("$pkg=$OUT/bin/$name.test")
done

# The commands the integration tests start as processes, built once too: a change made to the
# working tree while the rounds run must not reach them (it failed every test that builds one).
mkdir -p "$OUT/cmd"
for cmd in weft weft-stack; do "$GO" build -o "$OUT/cmd/$cmd" "./cmd/$cmd"; done
export WEFT_TEST_BINARIES="$OUT/cmd"

for _ in $(seq "$LOAD"); do (while :; do :; done) & pids+=($!); done
echo "flakes: $ROUNDS rounds of $PKGS (-run '$RUN') beside $LOAD busy loops; logs in $OUT"

status=0
for round in $(seq "$ROUNDS"); do
  for entry in "${bins[@]}"; do
    pkg=${entry%%=*}; bin=${entry#*=}
    log="$OUT/round$round-$(basename "$bin" .test).log"
    start=$(date +%s)
    # Each test binary runs in its package's folder, as go test runs it.
    if (cd "$pkg" && "$bin" -test.run "$RUN" -test.count 1 -test.timeout 40m -test.v) >"$log" 2>&1; then
      echo "flakes: round $round $pkg ok ($(( $(date +%s) - start )) s)"
    else
      status=1
      echo "flakes: round $round $pkg FAILED ($(( $(date +%s) - start )) s): $log"
    fi
  done
done
stop_load

echo "flakes: failures per test over $ROUNDS rounds:"
if ! grep -ho -- '--- FAIL: [^ ]*' "$OUT"/round*.log | sort | uniq -c | sort -rn; then
  echo "  none"
fi
exit $status
