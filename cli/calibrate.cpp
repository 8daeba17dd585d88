// tutti calibrate: fit the simulator's compute and network parameters to measurements
// (`tutti exec bench` output) and write a calibration profile (sim/calibration.hpp format).
// Arguments and I/O only: the fits are sim/calibrate's (measurement_fit.hpp, calibration_fit.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "common.hpp"
#include "tutti/calibrate/calibration_fit.hpp"
#include "tutti/calibrate/measurement_fit.hpp"
#include "tutti/calibrate/measurements.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/json_text.hpp"
#include "tutti/sim/calibration.hpp"
#include "tutti/topologies/cluster.hpp"

namespace tutti::cli {

namespace {

struct CalibrateOptions {
  std::vector<std::string> files;
  std::string cluster;
  std::string name = "calibrated";
};

int run_calibrate(const Globals& g, const CalibrateOptions& o) {
  std::vector<calibrate::Measurements> docs;
  for (const auto& f : o.files) docs.push_back(calibrate::load_measurements(f));
  std::optional<Cluster> cluster;
  if (!o.cluster.empty()) cluster = load_cluster(o.cluster);
  calibrate::MeasurementFit fit =
      calibrate::fit_measurements(docs, cluster ? &*cluster : nullptr, o.name);
  if (fit.network_needs_cluster)
    note(g,
         "tutti calibrate: collective measurements need --cluster (the links they ran on); "
         "network left at the defaults");
  const CalibrationProfile& prof = fit.profile;
  const nlohmann::json& report = fit.report;
  std::string files;
  for (const auto& f : o.files) files += (files.empty() ? "" : ", ") + f;
  // Round trip through the strict parser: what we write must load.
  nlohmann::json j;
  to_json(j, prof);
  // A fit outside the profile's ranges (or not finite) comes from the measurements: name them.
  std::string bad = first_non_finite(j);
  if (!bad.empty())
    throw InputError(
        files, bad, "a fitted value that is not finite",
        "measurements whose fit gives finite parameters (check their times and sizes)");
  try {
    parse_calibration(j.dump(), "calibrate output");
  } catch (const InputError& e) {
    throw InputError(
        files + ": the calibration fitted from these measurements is out of range: " + e.what());
  }
  emit_json(g, j);
  if (g.verbosity >= 0) {
    std::string t = "tutti calibrate: fit report\n" + report.dump(2) + "\n";
    std::fputs(t.c_str(), stderr);
  }
  return kOk;
}

struct DefaultsOptions {
  bool check = false;
  double tolerance = 0.005;
  std::string root, profile;
};

/// `tutti calibrate defaults`: refit every fitted constant of the default profile from the
/// microbenchmark files it names (sim/calibration/microbench/), print old vs new; --check fails
/// when the profile differs from its data beyond the tolerance or does not declare its data.
int run_calibrate_defaults(Globals& g, const DefaultsOptions& o) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::string root = o.root;
  if (root.empty())
    root = fs::is_regular_file("sim/calibration/default.json", ec) ? "." : TUTTI_SOURCE_DIR;
  std::string profile_path =
      o.profile.empty() ? (fs::path(root) / "sim/calibration/default.json").string() : o.profile;
  CalibrationProfile prof = load_calibration(profile_path);
  std::vector<std::string> files = microbench_files(root);
  DefaultsFit fit = fit_defaults(prof, files, root);

  std::vector<std::string> problems;
  nlohmann::json jfits = nlohmann::json::array();
  std::string t = fmt::format(
      "tutti calibrate defaults: {} constants refitted from {} microbenchmark files ({})\n",
      fit.fits.size(), files.size(), profile_path);
  t += fmt::format("{:<52} {:<44} {:>6} {:>9} {:>9} {:>8} {:>8}  {}\n", "constant", "data",
                   "points", "current", "fitted", "diff", "rms_err", "fitted_to");
  for (const auto& f : fit.fits) {
    double diff = f.current > 0 ? (f.fitted - f.current) / f.current : 1.0;
    t += fmt::format("{:<52} {:<44} {:>6} {:>9.4g} {:>9.4g} {:>+7.2f}% {:>7.2f}%  {}\n", f.constant,
                     f.file, f.points, f.current, f.fitted, diff * 100, f.rms_log_error * 100,
                     f.declared ? "yes" : "MISSING");
    if (std::fabs(diff) > o.tolerance)
      problems.push_back(fmt::format(
          "{} is {:.4g} in the profile, {:.4g} fitted to {} ({:+.2f}%, tolerance {:.2f}%)",
          f.constant, f.current, f.fitted, f.file, diff * 100, o.tolerance * 100));
    if (!f.declared)
      problems.push_back(fmt::format("{}: the fitted_to of {} does not list \"file:{}\"",
                                     f.constant, f.holder.empty() ? "the root" : f.holder, f.file));
    jfits.push_back({{"constant", f.constant},
                     {"file", f.file},
                     {"points", f.points},
                     {"current", f.current},
                     {"fitted", f.fitted},
                     {"diff_pct", diff * 100},
                     {"rms_log_error", f.rms_log_error},
                     {"declared", f.declared}});
  }
  // Every "file:" entry of a microbenchmark file must be backed by a fit of that object.
  for (const auto& ft : prof.fitted_to)
    for (const auto& target : ft.targets) {
      if (target.rfind("file:sim/calibration/microbench/", 0) != 0) continue;
      bool backed = false;
      for (const auto& f : fit.fits)
        backed = backed || (f.holder == ft.path && "file:" + f.file == target);
      if (!backed)
        problems.push_back(
            fmt::format("{}: fitted_to names \"{}\" but that file fits no constant of this object",
                        ft.path.empty() ? "(root)" : ft.path, target));
    }
  nlohmann::json jpoints = nlohmann::json::array();
  t += "\nmicrobenchmark points, model under the fitted constants:\n";
  t += fmt::format("{:<48} {:<14} {:<50} {:>12} {:>10} {:>10} {:>8}  {}\n", "file", "id", "what",
                   "metric", "measured", "model", "error", "role");
  for (const auto& p : fit.points) {
    double err = (p.predicted - p.measured) / p.measured;
    std::string role =
        p.fits.empty() ? "check" : "fit: " + p.fits.front() + (p.fits.size() > 1 ? " ..." : "");
    t += fmt::format("{:<48} {:<14} {:<50} {:>12} {:>10.4g} {:>10.4g} {:>+7.1f}%  {}\n", p.file,
                     p.id, p.what, p.metric, p.measured, p.predicted, err * 100, role);
    jpoints.push_back({{"file", p.file},
                       {"id", p.id},
                       {"what", p.what},
                       {"metric", p.metric},
                       {"measured", p.measured},
                       {"predicted", p.predicted},
                       {"error_pct", err * 100},
                       {"fits", p.fits}});
  }
  if (o.check) {
    t += problems.empty()
             ? fmt::format(
                   "\ncheck: OK, every fitted constant within {:.2f}% of its data and declared\n",
                   o.tolerance * 100)
             : "\ncheck: FAILED\n";
    for (const auto& pr : problems) t += "  " + pr + "\n";
  }
  if (g.json)
    emit_json(g, {{"profile", profile_path},
                  {"files", files},
                  {"fits", jfits},
                  {"points", jpoints},
                  {"tolerance", o.tolerance},
                  {"problems", problems}});
  else
    emit(g, t);
  if (o.check && !problems.empty()) {
    if (g.json) std::fputs(t.c_str(), stderr);
    return kNo;
  }
  return kOk;
}

}  // namespace

void setup_calibrate(CLI::App& app, Globals& g) {
  static CalibrateOptions o;
  auto* sub = app.add_subcommand(
      "calibrate",
      "Fit the simulator's compute curves and link/collective parameters to `tutti exec bench` "
      "measurements, or the "
      "decode-regime terms (GEMV and KV-read bandwidth) to `tutti serve replay --phase decode` "
      "documents; "
      "writes a calibration profile (-o profile.json) for `tutti simulate --calibration`");
  sub->add_option("measurements", o.files,
                  "Measurement files from `tutti exec bench` (GEMM sweeps, collective benches)")
      ->check(CLI::ExistingFile);
  sub->add_option("--cluster", o.cluster,
                  "The cluster the measurements ran on (needed for link fits; names the device)");
  sub->add_option("--name", o.name, "Profile name")->capture_default_str();
  sub->callback([&g, sub] {
    if (sub->got_subcommand("defaults")) return;
    if (o.files.empty()) throw CLI::RequiredError("measurements");
    g.run = [&g] { return run_calibrate(g, o); };
  });

  static DefaultsOptions d;
  sub->require_subcommand(0, 1);  // `calibrate defaults`, or measurements and no subcommand
  auto* def = sub->add_subcommand("defaults",
                                  "Refit every fitted constant of sim/calibration/default.json "
                                  "from the microbenchmark files it names "
                                  "(sim/calibration/microbench/*.json) with the models' own "
                                  "formulas; prints current vs fitted and the "
                                  "model's error on every point");
  def->add_flag("--check", d.check,
                "Exit 1 when a constant differs from its fit beyond --tolerance or does not "
                "name its data in fitted_to");
  def->add_option("--tolerance", d.tolerance, "Relative tolerance of --check")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  def->add_option("--root", d.root,
                  "Repository root holding sim/calibration (default: . when it has one, else the "
                  "source tree of this binary)");
  def->add_option("--profile", d.profile,
                  "Profile to check (default: <root>/sim/calibration/default.json)")
      ->check(CLI::ExistingFile);
  def->callback([&g] { g.run = [&g] { return run_calibrate_defaults(g, d); }; });
}

}  // namespace tutti::cli
