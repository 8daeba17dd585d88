#!/bin/bash
# The default replica groups (simulate --replicas grouped: replicas whose transfers meet the same
# link loads share a timeline) against the strict groups (--replicas strict, refined by the
# data-parallel collectives' flows too: per-replica exact), wherever the default output names the
# approximation. Prints, per run, the simulated iteration of both, their relative difference and
# the CPU time of each; then the largest difference. Llama 3 8B and 70B on the shipped Clos
# topologies under ECMP, spraying and d-mod-k, and Llama 3 405B on 16,384 GPUs. About 3 minutes
# on 2 cores (bench/engine.md, "The replica groups' approximation").
#   bench/replica_groups_check.sh        (from the repository root, after building ./build/tutti)
set -u
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
worst=0
failed=0
sim() { # mode routing workload cluster layout -> "iteration user_s" (iteration 0: not named)
  local m=$1 r=$2 w=$3 c=$4 p=$5
  if ! /usr/bin/time -f "%U" -o "$tmp/t" ./build/tutti --set fabric.routing="$r" simulate \
    -w "models/$w.json" -c "$c" ${p:+-p "$p"} --replicas "$m" --json >"$tmp/j" 2>"$tmp/err"; then
    echo "FAILED: $m $r $w $c $p: $(tail -1 "$tmp/err")" >&2
    echo "0 0 0"
    return
  fi
  python3 - "$tmp/j" "$(cat "$tmp/t")" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
named = any("replica groups" in a for a in j.get("approximations", []))
print(repr(j["iteration_time_s"]), int(named), sys.argv[2])
PY
}
one() {
  local r=$1 w=$2 c=$3 p=$4 a b
  a=$(sim grouped "$r" "$w" "$c" "$p")
  set -- $a
  [ "$2" = 1 ] || return 0 # the default groups are exact here: nothing named
  local ga=$1 gt=$3
  b=$(sim strict "$r" "$w" "$c" "$p")
  set -- $b
  local d
  d=$(python3 -c "print(abs($ga - $1) / $1)")
  printf '%-8s %-11s %-40s %-22s grouped %.9f s (%s s CPU) strict %.9f s (%s s CPU) diff %.1e\n' \
    "$r" "$w" "$(basename "$c")" "${p:-default}" "$ga" "$gt" "$1" "$3" "$d"
  n=$((n + 1))
  worst=$(python3 -c "print(max($worst, $d))")
}
for c in topologies/dgx-h100-superpod-4su.json topologies/b200-cluster.json \
  topologies/roce-400g.json topologies/hgx-b200-roce-800g.json \
  topologies/h100-16k-rail-3tier-2to1.json topologies/gb300-nvl72-superpod.json; do
  for r in ecmp spray dmodk; do
    one "$r" llama3-8b "$c" "zero=2,tp=2,pp=2"
    one "$r" llama3-8b "$c" "zero=2,pp=4"
    one "$r" llama3-70b "$c" "zero=2,tp=8,pp=4,vp=2"
  done
done
for r in spray dmodk; do one "$r" llama3-405b topologies/h100-16k-rail-3tier.json "zero=2,vp=4"; done
echo "replica groups: $n runs where the default output names the approximation; largest relative difference from the strict groups $worst"
