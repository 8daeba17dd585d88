#!/usr/bin/env bash
# usage: mpi_same_answer.sh TUTTI MPIRUN NP
# Runs `tutti cluster compare` once as a plain process and once under `mpirun -np NP` (policy
# pairs dealt to the ranks); the JSON and the text table must be identical byte for byte, and so
# must the exit code. 6 pairs: with NP 8 two ranks get none.
set -uo pipefail
tutti=$1 mpirun=$2 np=$3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1
export OMPI_MCA_oob_tcp_if_include=lo
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
args=(cluster compare --cluster topologies/h100-64gpu-fattree.json --synthetic jobs=150,span=2d,max_gpus=32
      --schedulers fifo,easy-backfill,conservative-backfill --placements packed,topology --alloc gpu)
for fmt in json text; do
  flag=(); [ "$fmt" = json ] && flag=(--json)
  "$tutti" "${flag[@]}" -q --seed 3 "${args[@]}" >"$tmp/one.$fmt" 2>"$tmp/one.err"
  rc1=$?
  "$mpirun" --oversubscribe -np "$np" "$tutti" "${flag[@]}" -q --seed 3 "${args[@]}" >"$tmp/mpi.$fmt" 2>"$tmp/mpi.err"
  rc2=$?
  if [ "$rc1" -ne 0 ] || [ "$rc2" -ne 0 ]; then
    echo "exit codes ($fmt): plain $rc1, mpirun -np $np $rc2"; cat "$tmp/one.err" "$tmp/mpi.err"; exit 1
  fi
  if ! cmp -s "$tmp/one.$fmt" "$tmp/mpi.$fmt"; then
    echo "$fmt differs between 1 process and $np ranks:"; diff "$tmp/one.$fmt" "$tmp/mpi.$fmt" | head -40; exit 1
  fi
done
runs=$(grep -o '"scheduler":' "$tmp/one.json" | wc -l)
[ "$runs" -eq 6 ] || { echo "expected 6 runs in the JSON, found $runs"; exit 1; }
[ "$(grep -c '^conservative-backfill' "$tmp/one.text")" -eq 2 ] || { echo "table lacks its rows"; cat "$tmp/one.text"; exit 1; }
echo "identical: $(wc -c <"$tmp/one.json") bytes of JSON and $(wc -c <"$tmp/one.text") of text from 1 process and from $np MPI ranks"
