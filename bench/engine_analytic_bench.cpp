// Analytic-mode throughput: configurations per second per core (bench/engine.md has the command).
// Builds the AnalyticJob of Llama 3 405B (tp8 pp16 dp128) once from its Program, then evaluates
// analytic_iteration() on N perturbed variants (what the planner does per configuration once it
// has per-stage costs), and separately times the full Program path (expand + analytic_job).
#include <chrono>
#include <cstdio>
#include <string>

#include "tutti/models/workload.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/topologies/cluster.hpp"

using namespace tutti;

int main(int argc, char** argv) {
  const std::string root = argc > 1 ? argv[1] : ".";
  const long n = argc > 2 ? std::stol(argv[2]) : 2000000;
  Workload w = load_workload(root + "/models/llama3-405b.json");
  Cluster c = load_cluster(root + "/topologies/h100-16k-rail-3tier.json");
  Layout l = resolve_layout(w, "zero=2,vp=4");
  SimCluster sc = sim_cluster(c);
  auto t0 = std::chrono::steady_clock::now();
  Program p = expand_program(w, l);
  AnalyticJob job = analytic_job(p, sc, default_calibration());
  auto t1 = std::chrono::steady_clock::now();
  double sum = 0;
  for (long i = 0; i < n; ++i) {
    job.microbatches = 8 + static_cast<int>(i % 64);       // a different batch split each time
    job.stages[i % job.stages.size()].bwd_s *= 1.0000001;  // and different stage costs
    sum += analytic_iteration(job).iteration_s;
  }
  auto t2 = std::chrono::steady_clock::now();
  double full = std::chrono::duration<double>(t1 - t0).count();
  double fast = std::chrono::duration<double>(t2 - t1).count();
  std::printf("program path (expand_program + analytic_job): %.4f s per configuration\n", full);
  std::printf(
      "analytic_iteration: %ld configurations in %.3f s = %.0f configurations/s (checksum %.3f)\n",
      n, fast, n / fast, sum / n);
  return 0;
}
