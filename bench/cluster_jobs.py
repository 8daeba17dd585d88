#!/usr/bin/env python3
"""Writes a tutti job list (schemas/cluster_jobs.schema.json) for bench/cluster.md: N jobs over a
year, Poisson arrivals, a quarter of them training jobs named by workload + layout (timed by
tutti's engine for the placement each gets), the rest fixed-duration jobs of log-uniform
power-of-two sizes and lognormal durations. Deterministic (seeded). Usage:
    python3 bench/cluster_jobs.py 100000 > /tmp/jobs-100k.json"""
import json, math, random, sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
rng = random.Random(1)
root = "../../models/" if len(sys.argv) < 3 else sys.argv[2]
layouts = {  # name -> (workload, layout); GPUs = the layout's
    "8b-tp8-dp1": ("llama3-8b.json", "tp=8,dp=1"),
    "8b-tp8-dp4": ("llama3-8b.json", "tp=8,dp=4"),
    "8b-tp8-dp16": ("llama3-8b.json", "tp=8,dp=16"),
    "70b-tp8-pp4-dp4": ("llama3-70b.json", "tp=8,pp=4,dp=4"),
}
span = 365 * 86400.0
t = 0.0
jobs = []
for i in range(n):
    t += rng.expovariate(n / span)
    j = {"id": f"j{i}", "user": f"user{min(49, int(rng.paretovariate(1.2)) - 1)}", "submit": f"{t:.0f}s"}
    if rng.random() < 0.25:
        w = rng.choice(sorted(layouts))
        j["workload"] = w
        j["iterations"] = int(rng.lognormvariate(math.log(1500), 1.0)) + 1
    else:
        g = 2 ** rng.randint(0, 10)
        d = min(14 * 86400, rng.lognormvariate(math.log(2 * 3600), 1.0))
        j.update({"gpus": g, "duration": f"{d:.0f}s", "walltime": f"{1.5 * d:.0f}s", "comm_fraction": 0.2})
    jobs.append(j)
doc = {"format": "tutti-jobs/1", "description": f"bench/cluster_jobs.py {n}",
       "workloads": {k: {"workload": root + v[0], "parallel": v[1]} for k, v in layouts.items()}, "jobs": jobs}
json.dump(doc, sys.stdout, indent=0)
