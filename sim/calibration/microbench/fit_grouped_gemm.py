#!/usr/bin/env python3
"""Fits compute.grouped_gemm_half_tokens (sim/calibration/default.json) to the DeepGEMM grouped
GEMM table in deepgemm-grouped-h800.csv.

Model: a grouped GEMM runs at the dense rate of the same (n, k) times tokens / (tokens + h), where
tokens = m per group. The dense rate of each (n, k) is not in the table at equal total size, so the
fit is relative: for each (n, k), rate(m) / rate(m_ref) = g(m) / g(m_ref), with m_ref the largest
m per group of that (n, k) (contiguous layout, 8192). Least squares on log ratios over a grid of h.
Run: python3 sim/calibration/microbench/fit_grouped_gemm.py
"""
import csv, math, os

here = os.path.dirname(os.path.abspath(__file__))
rows = [r for r in csv.DictReader(l for l in open(os.path.join(here, "deepgemm-grouped-h800.csv"))
                                  if not l.startswith("#"))]
pts = {}
for r in rows:
    pts.setdefault((int(r["n"]), int(r["k"])), []).append((int(r["m_per_group"]), float(r["tflops"])))

def err(h):
    e = []
    for nk, ps in pts.items():
        mref, tref = max(ps)
        g = lambda m: m / (m + h)
        for m, t in ps:
            e.append(math.log((t / tref) / (g(m) / g(mref))))
    return e

best = min((sum(x * x for x in err(h)), h) for h in range(0, 1001))
h = best[1]
e = err(h)
print(f"grouped_gemm_half_tokens = {h}")
print(f"rms log error {math.sqrt(best[0] / len(e)):.3f}; residuals "
      f"{100 * (math.exp(min(e)) - 1):+.0f}% to {100 * (math.exp(max(e)) - 1):+.0f}%")
