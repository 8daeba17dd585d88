// Measurement documents read through schemas/measurements.schema.json (measurements.hpp).
#include "tutti/calibrate/measurements.hpp"

#include <nlohmann/json.hpp>

#include "tutti/core/config.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/schema.hpp"

namespace tutti::calibrate {

namespace {
using Json = nlohmann::json;

CollectiveSweep read_collective(const Json& c) {
  CollectiveSweep s;
  s.op = c.at("op").get<std::string>();
  s.backend = c.at("backend").get<std::string>();
  s.tier = c.at("tier").get<std::string>();
  s.ranks = c.at("ranks").get<int>();
  s.hosts = c.at("hosts").get<int>();
  for (const Json& p : c.at("points"))
    s.points.emplace_back(p.at("size_bytes").get<double>(), p.at("time_s").get<double>());
  return s;
}

ComputeSweep read_compute(const Json& c) {
  ComputeSweep s;
  s.device = c.at("device").get<std::string>();
  for (const Json& p : c.at("gemm"))
    s.gemm.push_back({p.at("m").get<std::int64_t>(), p.at("n").get<std::int64_t>(),
                      p.at("k").get<std::int64_t>(), p.at("type").get<std::string>(),
                      p.at("time_median_s").get<double>()});
  for (const Json& p : c.at("membound"))
    s.membound.push_back({p.at("bytes").get<double>(), p.at("time_median_s").get<double>()});
  return s;
}

Replay read_replay(const Json& r, const std::string& file) {
  Replay out;
  const Json& res = r.at("result");
  out.device = res.at("device").get<std::string>();
  // Stage 0's ops (the first class of stage 0), their times averaged over stage 0's ranks.
  for (const Json& cl : res.at("classes")) {
    if (cl.at("stage").get<std::int64_t>() != 0) continue;
    for (const Json& op : cl.at("ops")) {
      ReplayedOp x;
      x.kind = op.at("kind").get<std::string>();
      if (op.contains("shape")) {
        const Json& a = op.at("shape");
        x.m = a.at(0).get<std::int64_t>();
        x.n = a.at(1).get<std::int64_t>();
        x.k = a.at(2).get<std::int64_t>();
        x.batch = a.at(3).get<std::int64_t>();
      }
      if (op.contains("bytes")) x.bytes = op.at("bytes").get<double>();
      out.ops.push_back(x);
    }
    break;
  }
  const Json& ranks = res.at("ranks");
  int stage0_ranks = 0;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const Json& rk = ranks[i];
    if (rk.at("stage").get<std::int64_t>() != 0) continue;
    const Json& times = rk.at("op_time_s");
    if (times.size() != out.ops.size())
      throw InputError(file, "replay.result.ranks." + std::to_string(i) + ".op_time_s",
                       std::to_string(times.size()) + " op times",
                       std::to_string(out.ops.size()) + " op times (one per op of stage 0)");
    for (std::size_t k = 0; k < times.size(); ++k) out.ops[k].time_s += times[k].get<double>();
    ++stage0_ranks;
  }
  if (stage0_ranks > 0)
    for (ReplayedOp& x : out.ops) x.time_s /= stage0_ranks;
  if (r.contains("serve")) {
    const Json& s = r.at("serve");
    out.serve_phase = s.at("phase").get<std::string>();
    if (s.contains("dtype")) out.serve_dtype = s.at("dtype").get<std::string>();
  }
  return out;
}
}  // namespace

const Json& measurements_schema() {
  static const Json schema =
      parse_embedded_schema(embedded_measurement_schema(), "measurements.schema.json");
  return schema;
}

Measurements read_measurements(const Json& doc, const std::string& file) {
  require_schema(measurements_schema(), doc, "measurements.schema.json", file);
  Measurements m;
  m.file = file;
  if (doc.contains("collectives"))
    for (const Json& c : doc.at("collectives")) m.collectives.push_back(read_collective(c));
  if (doc.contains("compute")) m.compute = read_compute(doc.at("compute"));
  if (doc.contains("replay")) m.replay = read_replay(doc.at("replay"), file);
  if (m.collectives.empty() && !m.compute && !m.replay)
    throw InputError(file, "", "no collectives, compute or replay section",
                     "at least one measurement section");
  return m;
}

Measurements load_measurements(const std::string& path) {
  return read_measurements(Doc::load(path).json(), path);
}

}  // namespace tutti::calibrate
