#!/bin/bash
# The rail quotient (sim/src/engine.cpp, Des::quotient_rails) against every rail simulated
# (TUTTI_RAILS=0): the --json output, minus wall_s, must be byte-identical. Runs Llama 3 70B and
# 8B on the shipped rail-optimized and NVL72 topologies, then Llama 3 8B on generated fabrics
# (rail-optimized 2/3 tiers, rail-only, dual-plane, fat-tree) x spray/adaptive/d-mod-k x five
# layouts x with and without a failed cable: 234 runs, about 2 minutes on 2 cores (bench/engine.md).
#   bench/rail_quotient_check.sh        (from the repository root, after building ./build/tutti)
set -u
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
bad=0
applied=0
one() { # routing workload cluster layout [extra args...]
  local r=$1 w=$2 c=$3 p=$4
  shift 4
  local a b
  a=$(TUTTI_ENGINE_STATS=1 ./build/tutti --set fabric.routing="$r" simulate -w "models/$w.json" \
    -c "$c" ${p:+-p "$p"} "$@" --json 2>"$tmp/err" | grep -v wall_s | md5sum)
  b=$(TUTTI_RAILS=0 ./build/tutti --set fabric.routing="$r" simulate -w "models/$w.json" \
    -c "$c" ${p:+-p "$p"} "$@" --json 2>/dev/null | grep -v wall_s | md5sum)
  n=$((n + 1))
  grep -q " [1-9][0-9]* flows left to rail symmetry" "$tmp/err" && applied=$((applied + 1))
  if [ "$a" != "$b" ]; then
    bad=$((bad + 1))
    echo "DIFFERS: $r $w $c $p $*"
  fi
}
for c in topologies/dgx-h100-superpod-1su.json topologies/dgx-h100-superpod-4su.json \
  topologies/gb300-nvl72-superpod.json topologies/gb200-nvl72-576.json \
  topologies/hgx-b200-roce-800g.json topologies/b200-cluster.json topologies/aws-p5-efa-512.json \
  topologies/h100-16k-rail-3tier-2to1.json topologies/roce-400g.json; do
  for r in spray adaptive dmodk; do
    for w in llama3-70b llama3-8b; do one "$r" "$w" "$c" ""; done
  done
done
for spec in "rail_optimized 2 1 32" "rail_optimized 3 2 64" "rail_only 2 1 32" "dual_plane 2 1 32" \
  "fat_tree 2 2 32" "fat_tree 3 1 64"; do
  set -- $spec
  c="$tmp/$1-$2-$3-$4.json"
  cat >"$c" <<J
{"name": "rails", "node": "dgx-h100", "nodes": $4,
 "fabric": {"kind": "$1", "switch": "quantum-2-qm9700", "tiers": $2, "oversubscription": $3},
 "transport": {"kind": "infiniband"}}
J
  for r in spray adaptive dmodk; do
    for p in "tp=8,pp=4,mb=1" "tp=8,pp=2,vp=2,zero=1,mb=1" "tp=2,pp=4,mb=1" "tp=8,pp=1,zero=3,mb=1" \
      "tp=4,cp=2,pp=2,mb=1"; do
      one "$r" llama3-8b "$c" "$p" --global-batch 256
      one "$r" llama3-8b "$c" "$p" --global-batch 256 --fail link=leaf0-spine0
    done
  done
done
echo "rail quotient: $n runs, $applied with the quotient applied, $bad differ"
[ "$bad" -eq 0 ]
