// `tutti validate --live` and `tutti validate --measurements FILE`: the engine's prediction
// (with a calibration profile) against a replay measured on this machine, per iteration and per
// op kind, with the error in percent. Arguments, the replay run and I/O only: the comparison is
// sim/validation's (live.hpp). (`tutti validate --cases`, the published cases, lives in
// cli/validate.cpp.)
#include "validate_live.hpp"

#include <nlohmann/json.hpp>

#include "common.hpp"
#include "exec_shared.hpp"
#include "tutti/core/error.hpp"
#include "tutti/exec/measurements.hpp"
#include "tutti/exec/session.hpp"
#include "tutti/sim/calibration.hpp"
#include "tutti/validation/live.hpp"

namespace tutti::cli {

namespace {

struct LiveOptions {
  bool live = false;
  std::string measurements, calibration, cluster_override;
  double tolerance_pct = 0;
  ReplayCliOptions replay;
};

LiveOptions& opts() {
  static LiveOptions o;
  return o;
}

/// The comparison's view of a recorded replay (exec's strict reader has read the document).
ReplayMeasurement measurement_of(const exec::ReplayRecord& r) {
  ReplayMeasurement m;
  m.workload = r.workload;
  m.cluster = r.cluster;
  m.layout = r.layout;
  m.overrides = r.overrides;
  m.device = r.device;
  m.iterations = r.iterations;
  m.iteration_time_s = r.iteration_time_s;
  m.iteration_min_s = r.iteration_min_s;
  m.iteration_max_s = r.iteration_max_s;
  m.by_kind_s = r.by_kind_s;
  m.wrong_elements = r.wrong_elements;
  return m;
}

/// Predicts the recorded replay and compares (sim/validation live.hpp).
nlohmann::json compare(const exec::ReplayRecord& rec, const std::string& measurements_name,
                       const LiveOptions& o) {
  return compare_replay(measurement_of(rec), measurements_name,
                        {o.calibration, o.cluster_override, o.tolerance_pct});
}

int output(const Globals& g, const nlohmann::json& j) {
  if (g.json || !g.output.empty()) emit_json(g, j);
  if (!g.json) {
    std::string t = live_comparison_table(j);
    std::fputs(t.c_str(), g.output.empty() ? stdout : stderr);
  }
  return j.contains("within_tolerance") && !j["within_tolerance"].get<bool>() ? kNo : kOk;
}

int run_validate_live(const Globals& g) {
  LiveOptions& o = opts();
  if (o.live && !o.measurements.empty())
    throw InputError("--live/--measurements", "", "both",
                     "one of them: run a replay now, or read a recorded one");
  if (!o.measurements.empty()) {
    exec::MeasurementDoc d = exec::load_measurements(o.measurements);
    if (!d.replay)
      throw InputError(o.measurements, "replay", "missing", "a `tutti exec replay` result");
    return output(g, compare(*d.replay, o.measurements, o));
  }
  if (o.replay.workload.empty() || o.replay.cluster.empty())
    throw InputError("--live", "", "no --workload/--cluster",
                     "--workload W --cluster C (and mpirun -np N)");
  if (!o.calibration.empty()) load_calibration(o.calibration);  // fail early, before MPI
  return run_mpi(g, o.replay.timeout, [&](exec::Session& s, exec::Watchdog& wd) {
    nlohmann::json doc = run_replay(s, wd, o.replay);
    if (s.rank() != 0) return static_cast<int>(kOk);
    exec::MeasurementDoc d = exec::parse_measurements(doc.dump(), "live replay");
    nlohmann::json j = compare(*d.replay, "live replay", o);
    j["replay"] = doc;  // the measurement itself, so that the run can be re-validated later
    return output(g, j);
  });
}

}  // namespace

bool setup_validate_live(CLI::App* sub, Globals& g) {
  (void)g;
  LiveOptions& o = opts();
  o.replay.command = "tutti validate --live";
  sub->add_flag("--live", o.live,
                "Run the replay now (under mpirun/srun) and compare with the prediction");
  sub->add_option("--measurements", o.measurements,
                  "Compare a recorded `tutti exec replay` result with the prediction");
  sub->add_option("--calibration", o.calibration,
                  "Calibration profile for the prediction (`tutti calibrate` output)");
  sub->add_option("--cluster-override", o.cluster_override,
                  "Predict on this cluster file instead of the recorded one");
  sub->add_option("--tolerance", o.tolerance_pct,
                  "Exit 1 when the iteration error exceeds this many percent");
  // The replay options of `tutti exec replay` (used with --live).
  sub->add_option("--workload", o.replay.workload, "--live: workload JSON");
  sub->add_option("--cluster", o.replay.cluster, "--live: cluster JSON the ranks stand for");
  sub->add_option("--parallel", o.replay.parallel, "--live: layout");
  sub->add_option("--scale-down", o.replay.scale_down,
                  "--live: layers=N,batch=M,micro_batch=B,seq=S,hidden=H,vocab=V");
  sub->add_option("--iterations", o.replay.iterations, "--live: timed iterations")
      ->capture_default_str();
  sub->add_option("--warmup", o.replay.warmup, "--live: untimed iterations")->capture_default_str();
  sub->add_option("--device", o.replay.device, "--live: cpu or gpu")
      ->check(CLI::IsMember({"cpu", "gpu"}));
  sub->add_option("--timeout", o.replay.timeout,
                  "--live: abort when no rank progresses for this long");
  return true;
}

const std::string& validate_calibration() {
  return opts().calibration;
}

bool validate_live_selected() {
  return opts().live || !opts().measurements.empty();
}

int run_validate_live_selected(const Globals& g) {
  return run_validate_live(g);
}

}  // namespace tutti::cli
