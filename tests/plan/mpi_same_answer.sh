#!/usr/bin/env bash
# usage: mpi_same_answer.sh TUTTI MPIRUN NP REQUEST
# Runs the plan once as a plain process and once under `mpirun -np NP`; the JSON (and the CSV)
# must be identical byte for byte, and so must the exit code.
set -uo pipefail
tutti=$1 mpirun=$2 np=$3 request=$4
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1
export OMPI_MCA_oob_tcp_if_include=lo
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$tutti" plan "$request" --json -q >"$tmp/one.json" 2>"$tmp/one.err"
rc1=$?
"$mpirun" --oversubscribe -np "$np" "$tutti" plan "$request" --json -q >"$tmp/mpi.json" 2>"$tmp/mpi.err"
rc2=$?
if [ "$rc1" -ne 0 ] || [ "$rc2" -ne 0 ]; then
  echo "exit codes: plain $rc1, mpirun -np $np $rc2"; cat "$tmp/one.err" "$tmp/mpi.err"; exit 1
fi
if ! cmp -s "$tmp/one.json" "$tmp/mpi.json"; then
  echo "JSON differs between 1 process and $np ranks:"; diff "$tmp/one.json" "$tmp/mpi.json" | head -40; exit 1
fi
grep -q '"recommended"' "$tmp/one.json" || { echo "no recommendation in the output"; exit 1; }
size=$(wc -c <"$tmp/one.json")
echo "identical: $size bytes of JSON from 1 process and from $np MPI ranks"
