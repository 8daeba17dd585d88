#!/bin/sh
# GPU check of the execution backend (ctest label "gpu"): exits 77 (skipped) when no CUDA device
# is usable, else runs a cuBLAS GEMM sweep, an NCCL all_reduce bench and a GPU replay of the tiny
# workload on one rank, and checks that the results are correct.
# usage: gpu_check.sh path/to/tutti   (from the source root)
set -u
TUTTI=${1:-build/tutti}
info=$("$TUTTI" exec info) || { echo "tutti exec info failed"; exit 1; }
case "$info" in
  *'"cuda_devices": 0'*) echo "SKIP: no CUDA device ($(echo "$info" | grep cuda_devices_reason))"; exit 77 ;;
esac
set -e
out=$(mktemp -d)
"$TUTTI" --json exec bench --device gpu --gemm --mnk 1024:8192:x2 --membound 1M:1G:x8 -n 10 > "$out/gemm.json"
"$TUTTI" --json exec bench --device gpu --op all_reduce,all_gather -b 8 -e 256M -f 4 > "$out/nccl.json"
grep -q '"wrong": 0' "$out/nccl.json"
if grep -q '"wrong": [1-9]' "$out/nccl.json"; then echo "NCCL results wrong"; exit 1; fi
"$TUTTI" --json exec replay --device gpu --workload models/tiny-gpt.json --cluster topologies/cpu-local.json \
  --parallel tp=1,pp=1,dp=1 --iterations 5 > "$out/replay.json"
grep -q '"wrong_elements": 0' "$out/replay.json"
# A serving decode step (issue 21) on the GPU: the same step program the serve simulator times.
"$TUTTI" --json --set serving.tp=1 serve replay --device gpu -w models/tiny-gpt.json -c topologies/cpu-local.json \
  --config sim/serve/examples/chat-llama3-70b.json --phase decode --sequences 8 --context 256 > "$out/serve-decode.json"
grep -q '"phase": "decode"' "$out/serve-decode.json"
"$TUTTI" --json calibrate "$out/gemm.json" "$out/nccl.json" -o "$out/profile.json"
echo "GPU check passed; files in $out"
