#!/usr/bin/env python3
"""Per-micro-batch MoE layer time from a tutti Chrome trace: the busy time of the ops named moe.*
(router, permute, experts, shared experts, all-to-alls) of micro-batch 0 on one pipeline stage,
divided by that stage's MoE layers (moe.router_dgrad count). Usage: moe_layer.py TRACE [PID]"""
import json, sys
from collections import defaultdict
t = json.load(open(sys.argv[1]))
pid = int(sys.argv[2]) if len(sys.argv) > 2 else 1
ev = [e for e in t["traceEvents"] if e.get("ph") == "X" and e["pid"] == pid and e["args"]["mb"] == 0]
layers = sum(1 for e in ev if e["name"] == "moe.router_dgrad")
parts = defaultdict(float)
for e in ev:
    n = e["name"]
    if not n.startswith("moe."): continue
    k = ("alltoall" if "alltoall" in n else "router" if "router" in n else
         "shared" if "shared" in n else "expert" if "expert" in n else "permute")
    parts[k] += e["dur"]
tot = sum(parts.values())
print(f"pid {pid}: {layers} MoE layers; per layer per micro-batch (fwd+bwd+recompute): {tot/layers/1e3:.3f} ms = " +
      ", ".join(f"{k} {v/layers/1e3:.3f}" for k, v in sorted(parts.items())))
