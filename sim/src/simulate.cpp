// simulate(): workload + cluster + layout -> SimResult (engine.hpp).
#include <string>

#include "tutti/core/error.hpp"
#include "tutti/models/workload.hpp"
#include "tutti/sim/compute_model.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/topologies/cluster.hpp"

namespace tutti {

SimCluster sim_cluster(const Cluster& c) {
  SimCluster s;
  s.name = c.name;
  s.topology = c.topology;
  s.gpu = c.gpu;
  // NVLS is a capability of the node's NVSwitch (catalog nodes.json "nvls": third-generation
  // NVSwitch, Hopper, and later); it spans the whole NVLink domain (72 GPUs on NVL72).
  s.nvls = c.node.nvls && c.node.scaleup == ScaleUp::NVSwitch && c.node.nvlink_domain_gpus > 1;
  s.sharp = c.transport.kind == "infiniband" && c.leaf_switch.sharp &&
            (c.spine_switch.id.empty() || c.spine_switch.sharp);
  return s;
}

SimResult simulate(const Workload& w, const Cluster& c, const Layout& l, const SimOptions& o) {
  if (o.engine != "native" && o.engine != "analytic") {
    if (o.engine == "simgrid")
      throw InputError(
          "--engine", "engine", "\"simgrid\"",
          "native or analytic here (the SimGrid engine runs through simulate_simgrid)");
    throw InputError("--engine", "engine", "\"" + o.engine + "\"", "native, analytic or simgrid");
  }
  if (o.replicas != ReplicaMode::Grouped && l.ep > 1)
    throw InputError(
        "--replicas", "", std::string(to_string(o.replicas)) + " with ep=" + std::to_string(l.ep),
        "grouped: with expert parallelism the replicas of a stage run one lock-stepped "
        "timeline (the output names that approximation and its measured range)");
  if (l.gpus() > c.gpus())
    throw InputError("the layout " + to_string(l) + " needs " + std::to_string(l.gpus()) +
                     " GPUs but cluster " + c.name + " has " + std::to_string(c.gpus()) +
                     "; reduce dp/tp/pp or use a larger cluster");
  check_layout(w, l, o.check_memory ? c.gpu.hbm_bytes : 0.0);
  CalibrationProfile loaded;
  const CalibrationProfile* prof = &default_calibration();
  if (!o.calibration.empty()) {
    loaded = load_calibration(o.calibration);
    prof = &loaded;
  }
  check_dtype_supported(w.file, w.training.dtype, {&c.gpu}, *prof);
  Program p = expand_program(w, l);
  SimCluster sc = sim_cluster(c);
  ProgramSimOptions po;
  po.compute_slowdown = o.compute_slowdown;
  po.seed = o.seed;
  po.trace = o.trace;
  po.strict_replica_groups = o.replicas == ReplicaMode::Strict;
  po.per_replica = o.replicas == ReplicaMode::Each;
  po.tokens_to_train = w.model.token_model() ? tokens_to_train(w) : 0;
  po.samples_to_train = w.training.samples_to_train;
  SimResult r = o.engine == "analytic" ? simulate_program_analytic(p, sc, *prof, po)
                                       : simulate_program(p, sc, *prof, po);
  r.memory_per_gpu_bytes = memory_per_gpu(w, l).total_bytes;
  return r;
}

}  // namespace tutti
