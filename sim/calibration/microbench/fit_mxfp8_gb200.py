#!/usr/bin/env python3
"""Fits compute.devices.gb200.gemm_efficiency.mxfp8 (sim/calibration/default.json) to the one
MXFP8 grouped-GEMM point in mxfp8-grouped-gb200.csv.

The model is sim/src/compute_model.cpp op_time_s for a grouped GEMM (Op::grouped = M): time =
flops / (peak * e * c * s) + launch_overhead, with c = flops / (flops + half_time * peak * e) (the
efficiency curve) and s = k / (k + half_k) * tokens / (tokens + grouped_gemm_half_tokens) (tile
quantization is 1 at these sizes; half_dim is 0). Since flops / (peak * e * c) = flops / (peak * e)
+ half_time, e solves in closed form:
    e = flops / (peak * s * (t_measured - half_time / s - launch_overhead)).
The other constants are read from default.json, the peak from topologies/catalog/gpus.json.
Run: python3 sim/calibration/microbench/fit_mxfp8_gb200.py
"""
import csv, json, os, re

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.normpath(os.path.join(here, "..", "..", ".."))
pt = next(csv.DictReader(l for l in open(os.path.join(here, "mxfp8-grouped-gb200.csv"))
                         if not l.startswith("#")))
prof = json.load(open(os.path.join(root, "sim", "calibration", "default.json")))
gpus = json.load(open(os.path.join(root, "topologies", "catalog", "gpus.json")))

def seconds(v):
    x, u = re.fullmatch(r"([0-9.e+-]+)\s*(us|ms|s)", v).groups()
    return float(x) * {"us": 1e-6, "ms": 1e-3, "s": 1.0}[u]

gemm = prof["compute"]["gemm"]
half_time = seconds(gemm["half_time"])
launch = seconds(gemm["launch_overhead"])
half_k = gemm["half_k"]
half_tokens = prof["compute"]["grouped_gemm_half_tokens"]
gpu = next(g for g in gpus["entries"] if g["id"] == pt["gpu"])
peak = float(gpu["peak"][pt["dtype"]].replace("TFLOPS", "")) * 1e12

m, g = int(pt["m_per_group"]), int(pt["groups"])
n, k = int(pt["n"]), int(pt["k"])
flops = 2.0 * m * n * k * g
t = flops / (float(pt["tflops"]) * 1e12)
s = k / (k + half_k) * m / (m + half_tokens)
e = flops / (peak * s * (t - half_time / s - launch))
print(f"gemm_efficiency.mxfp8 (gb200) = {e:.3f}  "
      f"(point {pt['tflops']} TFLOP/s at m={m} x {g} groups, n={n}, k={k}; shape factor {s:.3f})")
fp8 = next(d for d in [prof["compute"]["devices"][pt["gpu"]]])["gemm_efficiency"]["fp8"]
print(f"the device's fp8 value it replaces for mxfp8: {fp8} "
      f"(the model's rate at this shape with it: "
      f"{flops / ((flops + half_time * peak * fp8) / (peak * fp8) / s + launch) / 1e12:.0f} TFLOP/s)")
