// Strict tutti job list (schemas/cluster_jobs.schema.json), read through the project's strict
// config views (unknown keys, wrong types and bad units are errors naming the key path).
#include <fmt/format.h>

#include <filesystem>

#include "tutti/cluster/jobs.hpp"
#include "tutti/core/config.hpp"
#include "tutti/core/error.hpp"

namespace tutti {
namespace cluster_detail {
void normalise_jobs(JobList& l);
}

JobList read_job_json(const std::string& text, const std::string& file) {
  Doc doc = Doc::parse(text, file);
  Obj root = doc.root();
  JobList out;
  out.file = file;
  root.allow("$schema");
  root.allow("description");
  root.allow("source");
  const std::string fmt_ = root.req("format").choice({"tutti-jobs/1"});
  (void)fmt_;
  std::vector<std::string> wl_names;
  const std::filesystem::path base = std::filesystem::path(file).parent_path();
  if (auto w = root.opt("workloads")) {
    Obj wo = w->obj();
    for (const std::string& name : wo.keys()) {
      Obj e = wo.req(name).obj();
      JobWorkload jw;
      std::string p = e.req("workload").string();
      jw.path = std::filesystem::path(p).is_absolute() ? p : (base / p).lexically_normal().string();
      jw.parallel = e.string_or("parallel", "");
      e.done();
      wl_names.push_back(name);
      out.workloads.push_back(std::move(jw));
    }
  }
  Arr jobs = root.req("jobs").arr();
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    Obj o = jobs.at(i).obj();
    JobSpec j;
    j.id = o.has("id") ? o.req("id").string() : fmt::format("{}", i);
    j.user = intern(out.users, o.string_or("user", "default"));
    j.team = intern(out.teams, o.string_or("team", "default"));
    j.submit_s = o.quantity_or("submit", Dim::Time, 0.0);
    j.walltime_s = o.quantity_or("walltime", Dim::Time, 0.0);
    j.priority = static_cast<int>(o.integer_or("priority", 0, -1000000, 1000000));
    const bool has_w = o.has("workload"), has_d = o.has("duration");
    if (has_w == has_d) {
      Value v = jobs.at(i);
      v.fail(
          "exactly one of \"workload\" (a name from \"workloads\") or \"duration\" (e.g. \"2h\")");
    }
    if (has_w) {
      Value wv = o.req("workload");
      const std::string name = wv.string();
      int idx = -1;
      for (std::size_t k = 0; k < wl_names.size(); ++k)
        if (wl_names[k] == name) idx = static_cast<int>(k);
      if (idx < 0) {
        std::string known;
        for (const auto& n : wl_names) known += (known.empty() ? "" : ", ") + n;
        wv.fail("a name from \"workloads\" (" +
                (known.empty() ? std::string("none defined") : known) + ")");
      }
      j.work.workload = idx;
      const bool has_it = o.has("iterations"), has_tok = o.has("tokens");
      if (has_it == has_tok)
        jobs.at(i).fail("exactly one of \"iterations\" or \"tokens\" with a workload");
      if (has_it)
        j.work.iterations = o.req("iterations").number(1, 1e15);
      else
        j.work.tokens = o.req("tokens").quantity(Dim::Count, 1);
      j.gpus = static_cast<int>(o.integer_or("gpus", 0, 1, kMaxJobGpus));  // 0: the layout's GPUs
      for (const char* k : {"min_gpus", "max_gpus"})
        if (o.has(k))
          o.req(k).fail(
              "absent on a workload job (elastic jobs are fixed-duration jobs; a workload job runs "
              "on its layout's GPUs)");
    } else {
      j.work.duration_s = o.req("duration").quantity(Dim::Time, 1e-9);
      j.work.comm_fraction = o.number_or("comm_fraction", 0.0, 0.0, 1.0);
      j.gpus = static_cast<int>(o.req("gpus").integer(1, kMaxJobGpus));
      if (o.has("min_gpus") || o.has("max_gpus")) {
        j.min_gpus = static_cast<int>(o.integer_or("min_gpus", j.gpus, 1, j.gpus));
        j.max_gpus = static_cast<int>(o.integer_or("max_gpus", j.gpus, j.gpus, kMaxJobGpus));
      }
    }
    o.done();
    out.jobs.push_back(std::move(j));
  }
  root.done();
  cluster_detail::normalise_jobs(out);
  return out;
}

}  // namespace tutti
