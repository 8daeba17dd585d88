// The cluster trace run document read back strictly (cluster_result.hpp).
#include "tutti/cluster/cluster_result.hpp"

#include <nlohmann/json.hpp>

#include "tutti/core/config.hpp"
#include "tutti/core/schema.hpp"

namespace tutti {
namespace {

constexpr const char* kSchema = "cluster_result.schema.json";

const nlohmann::json& schema() {
  static const nlohmann::json s = parse_embedded_schema(embedded_cluster_result_schema(), kSchema);
  return s;
}

JobPercentilesView percentiles(Obj& root, std::string_view key) {
  Obj o = root.req(key).obj();
  return {o.req("p50").number(0), o.req("p90").number(0), o.req("p99").number(0),
          o.req("mean").number(0)};
}

}  // namespace

ClusterResultView ClusterResultView::from_json(const nlohmann::json& doc, const std::string& source,
                                               const std::string& at) {
  require_schema(schema(), doc, kSchema, source, at);
  Obj root = Value(nullptr, &doc, source, at).obj();
  ClusterResultView r;
  r.schema_version = static_cast<int>(root.req("schema_version").integer(1, 1));
  r.cluster = root.req("cluster").string();
  r.trace = root.req("trace").string();
  r.scheduler = root.req("scheduler").string();
  r.placement = root.req("placement").string();
  r.gpus = root.req("gpus").integer(1);
  r.jobs = root.req("jobs").integer(0);
  r.makespan_s = root.req("makespan_s").number();
  r.allocated_utilization = root.req("allocated_utilization").number();
  r.busy_utilization = root.req("busy_utilization").number();
  r.goodput = root.req("goodput").number();
  r.useful_gpu_hours = root.req("useful_gpu_hours").number();
  r.energy_J = root.req("energy_J").number();
  r.cost_usd = root.req("cost_usd").number();
  Obj idle = root.req("idle_gpu_hours").obj();
  r.idle_gpu_hours.fragmentation = idle.req("fragmentation").number();
  r.idle_gpu_hours.queue_head_blocking = idle.req("queue_head_blocking").number();
  r.idle_gpu_hours.no_demand = idle.req("no_demand").number();
  r.idle_gpu_hours.failures_restarts = idle.req("failures_restarts").number();
  r.idle_gpu_hours.preemption = idle.req("preemption").number();
  r.idle_gpu_hours.interference = idle.req("interference").number();
  r.wait_s = percentiles(root, "wait_s");
  r.jct_s = percentiles(root, "jct_s");
  r.slowdown = percentiles(root, "slowdown");
  Arr tl = root.req("timeline").arr();
  for (std::size_t i = 0; i < tl.size(); ++i) {
    Obj p = tl.at(i).obj();
    r.timeline.push_back(
        {p.req("t_s").number(0), p.req("allocated").number(0), p.req("busy").number(0)});
  }
  if (auto jobs = root.opt("job_outcomes")) {
    Arr a = jobs->arr();
    std::vector<double> waits;
    for (std::size_t i = 0; i < a.size(); ++i)
      waits.push_back(a.at(i).obj().req("wait_s").number(0));
    r.job_waits_s = std::move(waits);
  }
  return r;
}

}  // namespace tutti
