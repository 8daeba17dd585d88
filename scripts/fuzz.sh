#!/usr/bin/env bash
# Builds tutti's libFuzzer targets (clang, ASan + UBSan) in build-fuzz/ and runs each one on a
# seed corpus made from the shipped files (issue 25). A target fails on a crash, a sanitizer
# report, a timeout (hang), an out-of-memory, an InternalError or any non-InputError exception.
#   scripts/fuzz.sh --short            # 25 s per target, 9 targets
#   scripts/fuzz.sh --time 3600        # seconds per target
#   scripts/fuzz.sh --runs 1000000     # executions per target (no time limit)
#   scripts/fuzz.sh --only workload    # one target
#   scripts/fuzz.sh --ci --build-dir build-asan
#       # CI (.ci/run): reuse the tree scripts/sanitize.sh built (clang, -DTUTTI_FUZZ=ON, which
#       # holds the suite and the fuzz targets), so CI compiles the sanitizer build once.
#       # --ci is reproducible: fixed seed (-seed=1), a fixed number of executions per target
#       # (about 40 s each on a 2-core machine) and a fresh corpus, so the same commit fuzzes the
#       # same inputs everywhere: a run that passes here passes in CI, and a CI finding replays.
# Figures (executions, coverage, corpus, findings) go to <build-dir>/fuzz-stats.tsv.
set -euo pipefail
cd "$(dirname "$0")/.."
time_s=25
runs=-1
ci=0
only=""
bdir=build-fuzz
while (($#)); do
  case "$1" in
    --short) time_s=25 ;;
    --ci) ci=1 ;;
    --time) time_s="$2"; shift ;;
    --runs) runs="$2"; time_s=0; shift ;;
    --only) only="$2"; shift ;;
    --build-dir) bdir="$2"; shift ;;
    *) echo "fuzz.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
./scripts/setup.sh --fuzz
jobs="${FUZZ_BUILD_JOBS:-$(nproc)}"
if [ -f "$bdir/CMakeCache.txt" ] && grep -q '^TUTTI_FUZZ:BOOL=ON' "$bdir/CMakeCache.txt"; then
  cmake -S . -B "$bdir" >/dev/null  # an existing fuzz-enabled tree (build-asan from sanitize.sh): its own settings
else
  cmake -S . -B "$bdir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
        -DTUTTI_FUZZ=ON -DTUTTI_TESTS=OFF -DWITH_CUDA=OFF >/dev/null
fi
kinds=(workload cluster catalog calibration plan_request validation_cases measurements result_documents job_traces)
[ -n "$only" ] && kinds=("$only")
targets=()
for k in "${kinds[@]}"; do targets+=("fuzz_$k"); done
cmake --build "$bdir" -j"$jobs" --target "${targets[@]}"

# Seed corpora from the shipped files.
seeds="$bdir/seeds"
rm -rf "$seeds"
mkdir -p "$seeds"
for k in "${kinds[@]}"; do mkdir -p "$seeds/$k"; done
copy() { local k="$1"; shift; [ -d "$seeds/$k" ] || return 0; for f in "$@"; do cp "$f" "$seeds/$k/"; done; }
copy workload models/*.json
copy cluster topologies/*.json tests/reports/fixtures/clusters/*.json
copy calibration sim/calibration/*.json
copy plan_request tests/plan/small_request.json
copy result_documents tests/reports/fixtures/*.json
copy measurements tests/fuzz/seeds/measurements/*.json
if [ -d "$seeds/job_traces" ]; then  # the first byte picks the reader: 0 SWF, 1 sacct, 2 JSON
  { printf '\000'; cat tests/data/cluster/lublin-256-excerpt.swf; } > "$seeds/job_traces/trace.swf"
  { printf '\001'; cat tests/data/cluster/sacct-small.txt; } > "$seeds/job_traces/sacct.txt"
  { printf '\002'; cat tests/data/cluster/jobs-small.json; } > "$seeds/job_traces/jobs.json"
fi
if [ -d "$seeds/catalog" ]; then
  i=0  # the first byte picks which embedded catalog file (sorted, as CMake embeds them) it replaces
  for f in $(ls topologies/catalog/*.json | sort); do
    { printf "\\$(printf %03o "$i")"; cat "$f"; } > "$seeds/catalog/$(basename "$f")"
    i=$((i + 1))
  done
fi
if [ -d "$seeds/validation_cases" ]; then  # one case per seed: each run predicts every case
  python3 - "$seeds/validation_cases" <<'PY'
import json, sys
cases = json.load(open("tests/validation/published-public.json"))
cases = cases["cases"] if isinstance(cases, dict) else cases
for i, c in enumerate(cases):
    json.dump([c], open(f"{sys.argv[1]}/case-{i:03d}.json", "w"), indent=1)
PY
fi

stats="$bdir/fuzz-stats.tsv"
echo -e "target\tseconds\texecutions\texec_per_s\tcoverage_edges\tfeatures\tcorpus_files\tfindings" > "$stats"
status=0
# --ci: executions per target, about 40 s each under ASan + UBSan on this project's 2-core
# machine (bench/fuzz.md); the targets' speeds differ by 1000x, so one count does not fit all.
# (The catalog target reads only the replaced file per input since it went 18x faster; the
# validation-cases target predicts only cases of at most 16 GPUs since it went from ~30-100 to
# ~1,000 exec/s.)
declare -A ci_runs=([workload]=160000 [cluster]=40000 [catalog]=60000 [calibration]=50000
  [plan_request]=300000 [validation_cases]=40000 [measurements]=320000 [result_documents]=75000
  [job_traces]=300000)
for k in "${kinds[@]}"; do
  corpus="$bdir/corpus/$k"
  findings="$bdir/findings/$k"
  if [ "$ci" = 1 ]; then
    corpus="$bdir/corpus-ci/$k"
    rm -rf "$corpus" "$findings"
  fi
  mkdir -p "$corpus" "$findings"
  log="$bdir/fuzz-$k.log"
  args=(-timeout=20 -rss_limit_mb=4096 -max_len=65536 -print_final_stats=1 -artifact_prefix="$findings/")
  if [ "$ci" = 1 ]; then args+=(-seed=1 -runs="${ci_runs[$k]}")
  elif [ "$runs" -ge 0 ]; then args+=(-runs="$runs")
  else args+=(-max_total_time="$time_s"); fi
  start=$(date +%s)
  rc=0
  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$bdir/fuzz/fuzz_$k" "${args[@]}" "$corpus" "$seeds/$k" >"$log" 2>&1 || rc=$?
  secs=$(( $(date +%s) - start ))
  # One value each (a crash prints the final stats twice; a missing figure is empty, then 0).
  last() { grep -o "$1" "$log" | grep -o '[0-9]*$' | tail -1 || true; }
  execs=$(last 'stat::number_of_executed_units: *[0-9]*')
  eps=$(last 'stat::average_exec_per_sec: *[0-9]*')
  cov=$(last 'cov: [0-9]*')
  ft=$(last 'ft: [0-9]*')
  # crash-, timeout-, oom-, leak- files; libFuzzer's slow-unit- reports (> 10 s, under the 20 s
  # timeout) are kept for a look but are not failures.
  nfind=$(find "$findings" -type f ! -name 'slow-unit-*' | wc -l)
  echo -e "fuzz_$k\t$secs\t${execs:-0}\t${eps:-0}\t${cov:-0}\t${ft:-0}\t$(ls "$corpus" | wc -l)\t$nfind" >> "$stats"
  if [ "$rc" -ne 0 ] || [ "$nfind" -gt 0 ]; then
    echo "fuzz.sh: fuzz_$k FAILED (exit $rc); findings in $findings, log $log:" >&2
    grep -m5 -E 'FINDING|ERROR|SUMMARY|runtime error|deadly signal' "$log" >&2 || tail -20 "$log" >&2
    status=1
  else
    echo "fuzz.sh: fuzz_$k ok: ${execs:-0} executions in ${secs} s, coverage ${cov:-0} edges" >&2
  fi
done
column -t "$stats" >&2 || cat "$stats" >&2
exit "$status"
