// simulate(): workload + cluster + layout -> SimResult (engine.hpp).
#include <string>

#include "tutti/core/error.hpp"
#include "tutti/models/workload.hpp"
#include "tutti/sim/engine.hpp"
#include "tutti/topologies/cluster.hpp"

namespace tutti {

SimCluster sim_cluster(const Cluster& c) {
  SimCluster s;
  s.name = c.name;
  s.topology = c.topology;
  s.gpu = c.gpu;
  // NVLS needs third-generation NVSwitch (Hopper) or later.
  const std::string& id = c.gpu.id;
  bool hopper_or_later = id.rfind("h100-sxm", 0) == 0 || id.rfind("h200", 0) == 0 ||
                         id.rfind("b200", 0) == 0 || id.rfind("gb200", 0) == 0;
  s.nvls = c.node.scaleup == ScaleUp::NVSwitch && hopper_or_later && c.gpus_per_node > 1;
  s.sharp = c.transport.kind == "infiniband" && c.leaf_switch.sharp &&
            (c.spine_switch.id.empty() || c.spine_switch.sharp);
  return s;
}

SimResult simulate(const Workload& w, const Cluster& c, const Layout& l, const SimOptions& o) {
  if (o.engine != "native" && o.engine != "analytic") {
    if (o.engine == "simgrid")
      throw InputError("--engine", "engine", "\"simgrid\"",
                       "native or analytic here (the SimGrid engine runs through simulate_simgrid)");
    throw InputError("--engine", "engine", "\"" + o.engine + "\"", "native, analytic or simgrid");
  }
  if (l.gpus() > c.gpus())
    throw InputError("the layout " + to_string(l) + " needs " + std::to_string(l.gpus()) +
                     " GPUs but cluster " + c.name + " has " + std::to_string(c.gpus()) +
                     "; reduce dp/tp/pp or use a larger cluster");
  check_layout(w, l, c.gpu.hbm_bytes);
  CalibrationProfile loaded;
  const CalibrationProfile* prof = &default_calibration();
  if (!o.calibration.empty()) {
    loaded = load_calibration(o.calibration);
    prof = &loaded;
  }
  Program p = expand_program(w, l);
  SimCluster sc = sim_cluster(c);
  ProgramSimOptions po;
  po.compute_slowdown = o.compute_slowdown;
  po.seed = o.seed;
  po.trace_path = o.trace_path;
  po.tokens_to_train = w.model.token_model() ? tokens_to_train(w) : 0;
  po.samples_to_train = w.training.samples_to_train;
  SimResult r = o.engine == "analytic" ? simulate_program_analytic(p, sc, *prof, po)
                                       : simulate_program(p, sc, *prof, po);
  r.memory_per_gpu_bytes = memory_per_gpu(w, l).total_bytes;
  return r;
}

}  // namespace tutti
