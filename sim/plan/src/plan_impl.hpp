#pragma once
// Planner internals that touch workloads, topologies, engines and facility models.
// The adapter functions live in plan_eval.cpp; Planner::Impl is shared by planner.cpp and
// plan_report.cpp. Not a public header.
#include "plan_internal.hpp"

// ---- The adapter to workloads, topologies, engines and facility models (plan_eval.cpp) -------
#include <memory>
#include <nlohmann/json_fwd.hpp>

namespace tutti {

struct Workload;

/// A node type picked by a GPU or node catalog id.
struct NodeChoice {
  std::string node, gpu;
  int gpus_per_node = 8;
  int nvlink_domain = 8;
};
/// Resolves a GPU id (its first node in the catalog) or a node id. InputError on an unknown id.
NodeChoice resolve_node(const std::string& id);

/// The storage tier used when the request names none (the catalog's first).
std::string default_storage();
/// Workload facts for the layout enumeration.
SpaceFacts space_facts(const Workload& w);

/// One built hardware choice: its cluster, facility inputs and layout-independent facts.
struct HardwareModel;
/// Builds the cluster of a hardware choice. Throws InputError when it cannot be built.
std::shared_ptr<const HardwareModel> build_hardware(const HardwareChoice& h, const PlanRequest& r,
                                                    const Workload& w);
/// Violations every layout of this hardware has under acquisition `a`, decided without
/// simulating (capex, racks, cooling of one node, the peak-FLOP/s bound on the deadline).
/// Sound: each bit returned is also set by evaluate() for every layout.
std::uint32_t hardware_violations(const HardwareModel& hw, const PlanRequest& r, Acquisition a);

/// The layout-dependent part, shared by the acquisitions.
struct Perf {
  bool valid = true;  ///< check_layout accepted it.
  bool fits = false;  ///< Fits in GPU memory.
  double memory_bytes = 0, hbm_bytes = 0;
  SimResult sim;
};
/// Reduced-Program figures shared by the layouts of one hardware choice (plan_eval.cpp).
struct PerfCache;
std::shared_ptr<PerfCache> make_perf_cache();
/// Memory check, then (if it fits) the analytic engine on reduced Programs (see plan_eval.cpp)
/// or the flow-level engine on the whole Program. `cache` may be null.
void evaluate_perf(const HardwareModel& hw, const Workload& w, const Layout& l, bool native,
                   Perf& out, PerfCache* cache = nullptr);
/// The analytic engine on the whole Program (for tests of the reduced-Program fast path).
SimResult exact_analytic(const HardwareModel& hw, const Workload& w, const Layout& l);
/// Power, cooling, failures, cost and every constraint for one acquisition. Fills every metric
/// of `e` and its violations (index, hardware and layout are the caller's).
void evaluate_config(const HardwareModel& hw, const Workload& w, const PlanRequest& r,
                     const Perf& p, Acquisition a, Evaluation& e);
/// Bill of materials and fabric facts of the hardware, for reports.
nlohmann::json hardware_json(const HardwareModel& hw);
/// Power, cooling, reliability and cost details of one evaluated configuration, for reports.
/// `known`: the configuration's engine result when at hand (else the analytic one is computed).
nlohmann::json facility_json(const HardwareModel& hw, const Workload& w, const PlanRequest& r,
                             const Evaluation& e, const Perf* known = nullptr);
/// Short description of the workload (name, parameters, tokens), for reports.
nlohmann::json workload_json(const Workload& w);

}  // namespace tutti

#include <map>

#include "tutti/models/workload.hpp"

namespace tutti {

struct Planner::Impl {
  PlanRequest request;
  Workload workload;
  std::vector<HardwareChoice> hardware;
  std::vector<const std::vector<Layout>*> layouts;  ///< Per hardware choice.
  std::vector<std::uint16_t> gpu_group,
      fabric_group;  ///< Per hardware choice (Evaluation's groups).
  std::map<std::pair<int, int>, std::vector<Layout>> layout_cache;  ///< (gpus, nvlink domain).
  std::vector<std::uint64_t> offsets;  ///< offsets[h] = first index of hardware h; back() = size.
  std::uint64_t n_acq = 1;
  mutable std::map<std::uint32_t, std::shared_ptr<const HardwareModel>> built;  ///< For reports.
  mutable std::map<std::uint64_t, Perf> native;  ///< Flow-level results of the finalists, by index.
  /// Why hardware choice `h` cannot be built ("" if it can).
  std::string build_error(std::uint32_t h) const {
    try {
      build_hardware(hardware[h], request, workload);
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  }
  const Perf* native_perf(const Evaluation& e) const {
    auto it = native.find(e.index);
    return e.native && it != native.end() ? &it->second : nullptr;
  }

  std::shared_ptr<const HardwareModel> model(std::uint32_t h) const {
    auto it = built.find(h);
    if (it != built.end()) return it->second;
    auto m = build_hardware(hardware[h], request, workload);
    built[h] = m;
    return m;
  }
};

}  // namespace tutti
