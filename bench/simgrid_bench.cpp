// bench/simgrid_bench: one engine (native or SimGrid) on one case, for bench/simgrid.sh, which
// runs it under /usr/bin/time -v (wall time, peak memory) and writes bench/simgrid.md.
//
// usage: simgrid_bench native|simgrid allreduce|iteration GPUS
//   allreduce  one 1 GiB ring all-reduce (NCCL ring, Simple protocol, one channel per GPU of a
//              node) over every GPU of a DGX H100 fat-tree (d-mod-k routing), idle fabric;
//   iteration  one training iteration of tiny-gpt (GPT-2 small), TP 2 x PP 2 x DP GPUS/4,
//              global batch GPUS, on the same fabric.
// Prints one line: engine case gpus simulated_s engine_wall_s flows engine_cpu_s (CPU of this
// process and of the forked SimGrid child: the figure to trust on a shared machine).
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tutti/models/workload.hpp"
#include "tutti/sim/collective_model.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/simgrid/simgrid_engine.hpp"
#include "tutti/topologies/cluster.hpp"

using namespace tutti;

namespace {
double cpu_s() {  // this process and its waited-for children (the SimGrid run is a forked child)
  double t = 0;
  for (int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    rusage ru{};
    getrusage(who, &ru);
    t += ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec * 1e-6;
  }
  return t;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s native|simgrid allreduce|iteration GPUS\n", argv[0]);
    return 2;
  }
  const std::string engine = argv[1], kase = argv[2];
  const int gpus = std::atoi(argv[3]);
  ClusterParams cp;
  cp.name = "bench";
  cp.node = "dgx-h100";
  cp.nodes = gpus / 8;
  cp.fabric = "fat_tree";
  cp.sets = {"fabric.routing=dmodk"};
  const Cluster c = make_cluster(cp);
  const CalibrationProfile& prof = default_calibration();
  double sim_s = 0, flows = 0;
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = cpu_s();
  if (kase == "allreduce") {
    CollectiveContext ctx = make_collective_context(*c.topology, prof, false, false);
    std::vector<int> all(gpus);
    for (int i = 0; i < gpus; ++i) all[i] = i;
    const CollectivePlan plan = plan_collective_with(Coll::AllReduce, 1073741824.0, all, ctx,
                                                     CollAlgo::Ring, NcclProto::Simple);
    for (const auto& ph : plan.phases) flows += static_cast<double>(ph.flows.size()) * ph.repeat;
    if (engine == "native") {
      sim_s = simulate_collectives({plan}, *c.topology, prof);
    } else {
      SimgridStats st;
      sim_s = simulate_collectives_simgrid({plan}, *c.topology, prof, 1, nullptr, &st);
      flows = st.flows;
    }
  } else {
    const Workload w = load_workload(std::string(TUTTI_SOURCE_DIR) + "/models/tiny-gpt.json",
                                     {"training.global_batch=" + std::to_string(gpus)});
    const Layout l = resolve_layout(w, "tp=2,pp=2", gpus);
    const Program prog = expand_program(w, l);
    SimCluster sc;
    sc.name = c.name;
    sc.topology = c.topology;
    sc.gpu = c.gpu;
    sc.nvls = true;
    if (engine == "native") {
      sim_s = simulate_program(prog, sc, prof).iteration_time_s;
      flows = simgrid_flow_count(prog, sc, prof);
    } else {
      SimgridStats st;
      sim_s = simulate_program_simgrid(prog, sc, prof, {}, &st).iteration_time_s;
      flows = st.flows;
    }
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = cpu_s() - c0;
  std::printf("%s %s %d %.9e %.4f %.0f %.4f\n", engine.c_str(), kase.c_str(), gpus, sim_s, wall,
              flows, cpu);
  return 0;
}
