#include "tutti/exec/measurements.hpp"

#include <nlohmann/json.hpp>

#include "tutti/core/config.hpp"
#include "tutti/core/error.hpp"

namespace tutti::exec {

namespace {

// Ranges of measured values (declared once; schemas/measurements.schema.json states the same):
// no kernel or collective is timed below 1 ns or above 1e6 s, sizes stay below 1 PB, rates below
// 1e21 FLOP/s and 1e7 GB/s, so every ratio calibrate forms from them stays finite.
constexpr double kMinTime_s = 1e-9, kMaxTime_s = 1e6;
constexpr double kMaxBytes = 1e15, kMaxFlops = 1e21, kMaxGBps = 1e7, kMaxTflops = 1e9;
constexpr std::int64_t kMaxDim = 1 << 24;

CollBenchResult read_coll(Obj o) {
  CollBenchResult r;
  r.op = to_string(parse_coll_op(
      o.req("op").choice({"all_reduce", "all_gather", "reduce_scatter", "alltoall", "sendrecv"})));
  r.backend = o.req("backend").choice({"mpi", "nccl"});
  r.dtype = o.req("dtype").choice({"fp32"});
  r.ranks = static_cast<int>(o.req("ranks").integer(1, 1 << 24));
  r.hosts = static_cast<int>(o.req("hosts").integer(1, 1 << 24));
  r.tier = o.req("tier").choice({"intra_node", "inter_node"});
  r.warmup = static_cast<int>(o.req("warmup").integer(0, 1 << 24));
  r.iters = static_cast<int>(o.req("iters").integer(1, 1 << 24));
  o.req("bus_factor").number(0, 2);
  Arr pts = o.req("points").arr();
  for (std::size_t i = 0; i < pts.size(); ++i) {
    Obj p = pts.at(i).obj();
    CollPoint c;
    c.size_bytes = p.req("size_bytes").number(0, kMaxBytes);
    c.count = p.req("count").integer(0, std::int64_t(kMaxBytes));
    c.time_s = p.req("time_s").number(kMinTime_s, kMaxTime_s);
    c.time_max_s = p.req("time_max_s").number(kMinTime_s, kMaxTime_s);
    c.algbw_Bps = p.req("algbw_GBps").number(0, kMaxGBps) * 1e9;
    c.busbw_Bps = p.req("busbw_GBps").number(0, kMaxGBps) * 1e9;
    c.wrong = p.req("wrong").integer(-1, std::int64_t(kMaxBytes));
    p.done();
    r.points.push_back(c);
  }
  o.done();
  return r;
}

ComputeBenchResult read_compute(Obj o) {
  ComputeBenchResult r;
  r.device = o.req("device").choice({"cpu", "gpu"});
  r.library = o.req("library").string();
  r.model = o.req("model").string();
  r.ranks = static_cast<int>(o.req("ranks").integer(1, 1 << 24));
  r.warmup = static_cast<int>(o.req("warmup").integer(0, 1 << 24));
  r.iters = static_cast<int>(o.req("iters").integer(1, 1 << 24));
  Arr g = o.req("gemm").arr();
  for (std::size_t i = 0; i < g.size(); ++i) {
    Obj p = g.at(i).obj();
    GemmPoint x;
    x.shape.m = p.req("m").integer(1, kMaxDim);
    x.shape.n = p.req("n").integer(1, kMaxDim);
    x.shape.k = p.req("k").integer(1, kMaxDim);
    x.type = p.req("type").choice({"fp64", "fp32", "tf32", "bf16", "fp16"});
    x.flops = p.req("flops").number(0, kMaxFlops);
    x.time_s = p.req("time_s").number(kMinTime_s, kMaxTime_s);
    x.time_median_s = p.req("time_median_s").number(kMinTime_s, kMaxTime_s);
    x.time_min_s = p.req("time_min_s").number(kMinTime_s, kMaxTime_s);
    x.time_max_s = p.req("time_max_s").number(kMinTime_s, kMaxTime_s);
    x.flops_per_s = p.req("tflops").number(0, kMaxTflops) * 1e12;
    p.done();
    r.gemm.push_back(x);
  }
  Arr m = o.req("membound").arr();
  for (std::size_t i = 0; i < m.size(); ++i) {
    Obj p = m.at(i).obj();
    MemPoint x;
    x.bytes = p.req("bytes").number(0, kMaxBytes);
    x.time_s = p.req("time_s").number(kMinTime_s, kMaxTime_s);
    x.time_median_s = p.req("time_median_s").number(kMinTime_s, kMaxTime_s);
    x.bandwidth_Bps = p.req("bandwidth_GBps").number(0, kMaxGBps) * 1e9;
    p.done();
    r.membound.push_back(x);
  }
  o.done();
  return r;
}

ReplayRecord read_replay(Obj o) {
  ReplayRecord r;
  r.workload = o.req("workload").string();
  r.cluster = o.req("cluster").string();
  r.layout = o.req("layout").string();
  o.req("scale_down").obj().value();  // free-form record of the scaling
  Arr ov = o.req("overrides").arr();
  for (std::size_t i = 0; i < ov.size(); ++i) r.overrides.push_back(ov.at(i).string());
  Obj res = o.req("result").obj();
  r.device = res.req("device").choice({"cpu", "gpu"});
  res.req("compute_library").string();
  res.req("comm_library").string();
  r.world = static_cast<int>(res.req("world").integer(1, 1 << 24));
  res.req("warmup").integer(0, kMaxDim);
  r.iterations = static_cast<int>(res.req("iterations").integer(1, kMaxDim));
  r.iteration_time_s = res.req("iteration_time_s").number(kMinTime_s, kMaxTime_s);
  r.iteration_min_s = res.req("iteration_min_s").number(kMinTime_s, kMaxTime_s);
  r.iteration_max_s = res.req("iteration_max_s").number(kMinTime_s, kMaxTime_s);
  {
    Arr times = res.req("iteration_times_s").arr();
    for (std::size_t i = 0; i < times.size(); ++i) (void)times.at(i).number(0, kMaxTime_s);
  }
  Obj chk = res.req("check").obj();
  chk.req("ops").integer(0, std::int64_t(kMaxBytes));
  r.wrong_elements = chk.req("wrong_elements").integer(0, std::int64_t(kMaxBytes));
  chk.done();
  Obj bk = res.req("by_kind_s").obj();
  for (const auto& k : bk.keys()) r.by_kind_s.emplace_back(k, bk.req(k).number(0, kMaxTime_s));
  bk.done();
  // Per-op descriptions and per-rank times: stage 0's ops and their times (for calibration); the
  // other keys are kept, not interpreted.
  Arr classes = res.req("classes").arr();
  for (std::size_t c = 0; c < classes.size(); ++c) {
    Obj cl = classes.at(c).obj();
    if (cl.req("stage").integer(0, 1 << 24) != 0) continue;
    Arr ops = cl.req("ops").arr();
    for (std::size_t i = 0; i < ops.size(); ++i) {
      Obj op = ops.at(i).obj();
      ReplayOp x;
      x.kind = op.req("kind").string();
      if (auto s = op.opt("shape")) {
        Arr a = s->arr();
        if (a.size() != 4) s->fail("[m, n, k, batch]");
        x.m = a.at(0).integer(0, kMaxDim);
        x.n = a.at(1).integer(0, kMaxDim);
        x.k = a.at(2).integer(0, kMaxDim);
        x.batch = a.at(3).integer(0, kMaxDim);
      }
      if (auto b = op.opt("bytes")) x.bytes = b->number(0, kMaxBytes);
      if (auto f = op.opt("flops")) x.flops = f->number(0, kMaxFlops);
      r.ops.push_back(x);
    }
    break;
  }
  Arr ranks = res.req("ranks").arr();
  int stage0_ranks = 0;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    Obj rk = ranks.at(i).obj();
    if (rk.req("stage").integer(0, 1 << 24) != 0) continue;
    Arr times = rk.req("op_time_s").arr();
    if (times.size() != r.ops.size())
      rk.req("op_time_s").fail(std::to_string(r.ops.size()) + " op times (one per op of stage 0)");
    for (std::size_t k = 0; k < times.size(); ++k)
      r.ops[k].time_s += times.at(k).number(0, kMaxTime_s);
    ++stage0_ranks;
  }
  if (stage0_ranks > 0)
    for (ReplayOp& x : r.ops) x.time_s /= stage0_ranks;
  res.done();
  if (auto sv = o.opt("serve")) {
    Obj s = sv->obj();
    ServeReplayRecord x;
    x.config = s.req("config").string();
    x.phase = s.req("phase").choice({"decode", "prefill"});
    x.sequences = s.req("sequences").integer(1, std::int64_t{1} << 30);
    x.context_tokens = s.req("context_tokens").integer(1, std::int64_t{1} << 30);
    x.tokens = s.req("tokens").integer(1, std::int64_t{1} << 30);
    x.predicted_s = s.req("predicted_s").number(0, 604800);
    x.predicted_comm_s = s.req("predicted_comm_s").number(0, 604800);
    if (auto d = s.opt("dtype")) x.dtype = d->choice({"fp32", "tf32", "bf16", "fp16", "fp8"});
    if (auto c = s.opt("calibration")) (void)c->string();  // for people
    s.done();
    r.serve = x;
  }
  o.done();
  return r;
}

MeasurementDoc read(const Doc& d) {
  MeasurementDoc m;
  m.file = d.name();
  Obj root = d.root();
  root.req("kind").choice({"tutti.measurements"});
  root.req("version").integer(1, 1);
  m.tool = root.req("tool").string();
  Value env = root.req("environment");
  env.obj();
  m.environment = std::make_shared<nlohmann::json>(env.json());
  if (auto c = root.opt("collectives")) {
    Arr a = c->arr();
    for (std::size_t i = 0; i < a.size(); ++i) m.collectives.push_back(read_coll(a.at(i).obj()));
  }
  if (auto c = root.opt("compute")) m.compute = read_compute(c->obj());
  if (auto r = root.opt("replay")) m.replay = read_replay(r->obj());
  root.done();
  if (m.collectives.empty() && !m.compute && !m.replay)
    throw InputError(d.name(), "", "no collectives, compute or replay section",
                     "at least one measurement section");
  return m;
}

}  // namespace

MeasurementDoc load_measurements(const std::string& path) {
  return read(Doc::load(path));
}
MeasurementDoc parse_measurements(const std::string& text, const std::string& name) {
  return read(Doc::parse(text, name));
}

}  // namespace tutti::exec
