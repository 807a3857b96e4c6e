#!/usr/bin/env bash
# The whole suite: bootstraps, runs bun test (which makes its own database and Temporal server),
# and ends with one plain line "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh || exit 1
log=$(mktemp)
bun run test "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
passed=$(grep -E '^ *[0-9]+ pass$' "$log" | tail -1 | tr -dc '0-9')
failed=$(grep -E '^ *[0-9]+ fail$' "$log" | tail -1 | tr -dc '0-9')
rm -f "$log"
echo "${passed:-0} passed, ${failed:-0} failed"
# a run that crashed before its summary counts as failed
[ -n "$passed" ] || exit 1
exit "$status"
