// Power model: the lock-step iteration as a piecewise-constant timeline (docs/facility.md "Power").
#include <algorithm>
#include <cmath>

#include "tutti/core/config.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/units.hpp"
#include "tutti/facility/facility.hpp"
#include "tutti/topologies/catalog.hpp"

namespace tutti {

GpuPowerCoefficients parse_gpu_power(const Doc& doc) {
  Obj root = doc.root();
  root.req("kind").choice({"gpu_power"});
  root.allow("notes");
  GpuPowerCoefficients k;
  k.compute_frac = root.req("compute_frac").number(0.0, 1.5);
  k.memory_frac = root.req("memory_frac").number(0.0, 1.5);
  k.comm_frac = root.req("comm_frac").number(0.0, 1.5);
  k.overlap_extra_W = root.req("overlap_extra").quantity(Dim::Power, 0.0, 1e4);
  k.idle_frac = root.req("idle_frac").number(0.0, 1.0);
  static const char* const kCoefficients[] = {"compute_frac", "memory_frac", "comm_frac",
                                              "overlap_extra", "idle_frac"};
  // Every coefficient cites its source; a source for anything else is a typo.
  Obj sources = root.req("sources").obj();
  for (const char* c : kCoefficients) {
    Value v = sources.req(c);
    std::string text = v.string();
    if (text.size() < 8) v.fail("a citation (publisher, title, year, figure)");
    k.sources.emplace_back(c, std::move(text));
  }
  sources.done();
  Arr est = root.req("estimates").arr();
  for (std::size_t i = 0; i < est.size(); ++i) {
    Value v = est.at(i);
    std::string name = v.string();
    if (std::find(std::begin(kCoefficients), std::end(kCoefficients), name) ==
        std::end(kCoefficients))
      v.fail(
          "a coefficient of this file (compute_frac, memory_frac, comm_frac, overlap_extra, "
          "idle_frac)");
    k.estimates.push_back(name);
  }
  root.done();
  return k;
}

const GpuPowerCoefficients& builtin_gpu_power() {
  static const GpuPowerCoefficients k = parse_gpu_power(Catalog::builtin().file("gpu_power"));
  return k;
}

GpuPowerModel gpu_power_model(const GpuPowerCoefficients& k, double tdp_W, double idle_W) {
  GpuPowerModel m;
  m.tdp_W = tdp_W;
  m.idle_W = idle_W > 0 ? idle_W : k.idle_frac * tdp_W;
  m.compute_frac = k.compute_frac;
  m.memory_frac = k.memory_frac;
  m.comm_frac = k.comm_frac;
  m.overlap_extra_W = k.overlap_extra_W;
  return m;
}

IterationTimes rescale_times(const IterationTimes& t, double s) {
  check_internal(s > 0 && std::isfinite(s), "rescale_times: slowdown must be positive");
  IterationTimes r = t;
  r.gemm_busy_s = t.gemm_busy_s * s;
  r.memory_busy_s = t.memory_busy_s * s;
  r.iteration_s = t.iteration_s + (t.gemm_busy_s + t.memory_busy_s) * (s - 1.0);
  return r;
}

double gpu_state_power_W(const GpuPowerModel& m, double demand_W, double f, bool scales) {
  double p = demand_W;
  // DVFS: dynamic power ~ f * V^2 with V roughly proportional to f in the DVFS range, so
  // P(f) = P_static + (P_demand - P_static) * f^3, with the idle draw as the static floor.
  if (scales && demand_W > m.idle_W) p = m.idle_W + (demand_W - m.idle_W) * f * f * f;
  return std::min(p, m.cap_W());
}

double power_cap_clock_factor(const GpuPowerModel& m) {
  double demand = m.compute_frac * m.tdp_W;
  double cap = m.cap_W();
  if (demand <= cap) return 1.0;
  if (cap <= m.idle_W) return 0.0;  // The cap leaves nothing for work; caller reports it.
  return std::cbrt((cap - m.idle_W) / (demand - m.idle_W));
}

double timeline_energy_J(const std::vector<PowerSegment>& timeline) {
  double e = 0;
  for (const auto& s : timeline) e += s.it_W * s.duration_s;
  return e;
}

PowerResult compute_power(const FacilityInputs& in, const IterationTimes& t, double f) {
  if (in.gpus <= 0 || in.nodes <= 0)
    throw InputError("facility: the cluster has no GPUs or no nodes");
  if (!(t.iteration_s > 0) || !std::isfinite(t.iteration_s))
    throw InputError("facility: the iteration time must be positive, got " +
                     std::to_string(t.iteration_s) + " s");
  const GpuPowerModel& m = in.gpu;
  PowerResult r;
  r.clock_factor = f;
  r.iteration_s = t.iteration_s;

  // Split the iteration into states. The compute stream (gemm + memory) never exceeds the
  // iteration; communication beyond the compute-free time overlaps compute.
  double T = t.iteration_s;
  double g = std::max(0.0, t.gemm_busy_s), mem = std::max(0.0, t.memory_busy_s);
  if (g + mem > T) {  // Tolerate rounding in the engine's sums; scale to fit.
    double k = T / (g + mem);
    g *= k;
    mem *= k;
  }
  double rest = T - g - mem;
  double c = std::max(0.0, t.comm_busy_s);
  double exposed = std::min(c, rest);
  double idle = rest - exposed;
  double overlapped = std::min(c - exposed, g + mem);
  double og = std::min(overlapped, g), om = overlapped - og;

  double p_compute = gpu_state_power_W(m, m.compute_frac * m.tdp_W, f, true);
  double p_memory = gpu_state_power_W(m, m.memory_frac * m.tdp_W, f, true);
  double p_comm = gpu_state_power_W(m, m.comm_frac * m.tdp_W, f, false);
  double p_idle = std::min(m.idle_W, m.cap_W());
  struct Piece {
    const char* state;
    double d, w;
  };
  const Piece pieces[] = {
      {"compute+comm", og, std::min(p_compute + m.overlap_extra_W, m.cap_W())},
      {"compute", g - og, p_compute},
      {"memory+comm", om, std::min(p_memory + m.overlap_extra_W, m.cap_W())},
      {"memory", mem - om, p_memory},
      {"comm", exposed, p_comm},
      {"idle", idle, p_idle},
  };
  r.network_W = in.network_power_W;
  r.storage_W = in.storage_power_W;
  // GPUs outside the job (a job on part of the cluster) idle through the whole iteration.
  const int active = in.job_gpus > 0 ? std::min(in.job_gpus, in.gpus) : in.gpus;
  const double fixed_W = in.nodes * in.node_overhead_W + in.network_power_W + in.storage_power_W +
                         (in.gpus - active) * p_idle;
  double start = 0, gpu_e = 0;
  r.gpu_peak_W = 0;
  r.gpu_min_W = m.cap_W();
  for (const auto& p : pieces) {
    if (p.d <= 0) continue;
    PowerSegment s;
    s.state = p.state;
    s.start_s = start;
    s.duration_s = p.d;
    s.gpu_W = p.w;
    s.it_W = active * p.w + fixed_W;
    start += p.d;
    gpu_e += p.w * p.d;
    r.gpu_peak_W = std::max(r.gpu_peak_W, p.w);
    r.gpu_min_W = std::min(r.gpu_min_W, p.w);
    r.timeline.push_back(std::move(s));
  }
  r.gpu_avg_W = gpu_e / T;
  r.node_avg_W = in.gpus_per_node * r.gpu_avg_W + in.node_overhead_W;
  r.energy_per_iteration_J = timeline_energy_J(r.timeline);
  r.avg_it_W = r.energy_per_iteration_J / T;
  r.peak_it_W = active * r.gpu_peak_W + fixed_W;
  r.min_it_W = active * r.gpu_min_W + fixed_W;
  double node_nameplate = in.node_max_power_W > 0 ? in.node_max_power_W
                                                  : in.gpus_per_node * m.tdp_W + in.node_overhead_W;
  r.nameplate_it_W = in.nodes * node_nameplate + in.network_power_W + in.storage_power_W;
  r.facility_W = r.avg_it_W * in.pue;
  r.peak_facility_W = r.peak_it_W * in.pue;
  r.swing_W = r.peak_it_W - r.min_it_W;
  // All ranks run the same phases in lock-step (the data-parallel gradient reduction and the
  // optimizer step synchronise them), so the whole IT load repeats once per iteration.
  r.swing_period_s = r.swing_W > 0 ? T : 0;
  r.energy_per_iteration_facility_J = r.energy_per_iteration_J * in.pue;
  return r;
}

}  // namespace tutti
