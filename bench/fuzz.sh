#!/usr/bin/env bash
# Long fuzz run of every input kind (issue 25): scripts/fuzz.sh with a longer budget, then the
# figures as a Markdown table for bench/fuzz.md.
#   bench/fuzz.sh                 # 1,000,000 executions per target (the issue's goal)
#   bench/fuzz.sh --time 600      # or seconds per target
#   bench/fuzz.sh --only workload --runs 200000
set -euo pipefail
cd "$(dirname "$0")/.."
args=("$@")
[ ${#args[@]} -eq 0 ] && args=(--runs 1000000)
rc=0
./scripts/fuzz.sh "${args[@]}" || rc=$?
echo
echo "| target | seconds | executions | exec/s | coverage (edges) | features | corpus | findings |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
tail -n +2 build-fuzz/fuzz-stats.tsv | while IFS=$'\t' read -r t s e r c f n x; do
  echo "| $t | $s | $e | $r | $c | $f | $n | $x |"
done
exit "$rc"
