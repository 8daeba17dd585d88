#!/usr/bin/env bash
# Native engine vs SimGrid on the same cases at 64, 256 and 1,024 GPUs (bench/simgrid.md).
# usage: bench/simgrid.sh [BUILD_DIR] [SIZES...]   (default: build 64 256 1024)
# Runs build/bench/simgrid_bench under /usr/bin/time -v, one engine per process, and prints a
# Markdown table: simulated time of each engine, their ratio, CPU time (process + forked SimGrid
# child), wall time and peak memory of each, and the speed-up (SimGrid CPU / native CPU, CPU
# because the build machine is shared; native CPU below 0.5 ms is counted as 0.5 ms).
set -euo pipefail
build=${1:-build}
shift || true
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(64 256 1024)
bin=$build/bench/simgrid_bench
[ -x "$bin" ] || { echo "build $bin first: cmake --build $build --target simgrid_bench" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() {  # engine case gpus -> "sim_s flows engine_wall_s engine_cpu_s process_wall_s rss_MB"
  /usr/bin/time -v "$bin" "$1" "$2" "$3" >"$tmp/out" 2>"$tmp/time"
  local line wall rss
  line=$(tail -1 "$tmp/out")
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$tmp/time")
  rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2/1024}' "$tmp/time")
  echo "$(echo "$line" | awk '{print $4, $6, $5, $7}') $wall $rss"
}
echo "| case | GPUs | flows | native simulated (s) | SimGrid simulated (s) | ratio native/SimGrid | native CPU (s) | SimGrid CPU (s) | native wall (s) | SimGrid wall (s) | native peak RSS (MB) | SimGrid peak RSS (MB) | speed-up (CPU) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for kase in allreduce iteration; do
  for n in "${sizes[@]}"; do
    read -r ns nf ne nc nw nr <<<"$(run native "$kase" "$n")"
    read -r ss sf se sc sw sr <<<"$(run simgrid "$kase" "$n")"
    awk -v k="$kase" -v n="$n" -v f="$sf" -v ns="$ns" -v ss="$ss" -v nc="$nc" -v sc="$sc" -v ne="$ne" -v se="$se" \
      -v nr="$nr" -v sr="$sr" \
      'BEGIN { c = nc > 0.0005 ? nc : 0.0005; printf "| %s | %d | %d | %.6e | %.6e | %.5f | %.4f | %.2f | %.4f | %.2f | %d | %d | %.0fx |\n", k, n, f, ns, ss, ns/ss, nc, sc, ne, se, nr, sr, sc/c }'
  done
done
