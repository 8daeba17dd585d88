// Strict reader of serving configurations (schemas/serve.schema.json) and the request generator.
#include "tutti/core/config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tutti/core/error.hpp"
#include "tutti/serve/config.hpp"

namespace tutti::serve {
namespace {

constexpr std::int64_t kMaxTokens = 10'000'000;

LengthDist parse_length(Obj o) {
  LengthDist d;
  d.dist = o.req("dist").choice({"fixed", "uniform", "lognormal"});
  if (d.dist == "fixed") {
    d.value = o.req("value").integer(1, kMaxTokens);
    d.min = d.max = d.value;
  } else if (d.dist == "uniform") {
    d.min = o.req("min").integer(1, kMaxTokens);
    d.max = o.req("max").integer(d.min, kMaxTokens);
  } else {
    d.median = o.req("median").number(1, kMaxTokens);
    d.sigma = o.req("sigma").number(0, 5);
    d.min = o.integer_or("min", 1, 1, kMaxTokens);
    d.max = o.integer_or("max", kMaxTokens, d.min, kMaxTokens);
  }
  o.done();
  return d;
}

DType parse_dtype(Value v) {
  std::string s = v.string();
  auto d = parse_enum<DType>(s);
  if (!d || (*d != DType::BF16 && *d != DType::FP16 && *d != DType::FP8)) v.fail("bf16|fp16|fp8");
  return *d;
}

// splitmix64 (Steele et al. 2014): fixed algorithm, same stream on every platform.
struct Rng {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double u01() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  double normal() {                                                       // Box-Muller
    double u1 = 1.0 - u01(), u2 = u01();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
};

std::int64_t draw(const LengthDist& d, Rng& r) {
  if (d.dist == "fixed") return d.value;
  if (d.dist == "uniform")
    return d.min + static_cast<std::int64_t>(r.u01() * static_cast<double>(d.max - d.min + 1));
  double x = std::llround(d.median * std::exp(d.sigma * r.normal()));
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(x), d.min, d.max);
}

}  // namespace

std::vector<TraceRequest> read_trace_csv(const std::string& text, const std::string& name) {
  std::vector<TraceRequest> out;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  bool header = false;
  double last = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    if (!header) {
      if (line != "arrival_s,prompt_tokens,output_tokens")
        throw InputError(name, fmt::format("line {}", line_no), "\"" + line + "\"",
                         "the header arrival_s,prompt_tokens,output_tokens");
      header = true;
      continue;
    }
    TraceRequest r;
    char c1 = 0, c2 = 0;
    std::istringstream ls(line);
    std::string rest;
    if (!(ls >> r.arrival_s >> c1 >> r.prompt_tokens >> c2 >> r.output_tokens) || c1 != ',' ||
        c2 != ',' || (ls >> rest) || !std::isfinite(r.arrival_s) || r.arrival_s < 0 ||
        r.prompt_tokens < 1 || r.output_tokens < 1 || r.prompt_tokens > kMaxTokens ||
        r.output_tokens > kMaxTokens)
      throw InputError(name, fmt::format("line {}", line_no), "\"" + line + "\"",
                       "arrival_s >= 0, prompt_tokens >= 1, output_tokens >= 1 (three numbers)");
    if (r.arrival_s < last)
      throw InputError(name, fmt::format("line {}", line_no),
                       fmt::format("arrival {}", r.arrival_s),
                       fmt::format("arrivals in non-decreasing order (previous {})", last));
    last = r.arrival_s;
    out.push_back(r);
  }
  if (out.empty())
    throw InputError(name, "", "no requests", "a header and at least one request row");
  return out;
}

ServeConfig parse_serve_config(const std::string& text, const std::string& name,
                               const std::vector<std::string>& overrides,
                               const std::string& base_dir) {
  Doc doc = Doc::parse(text, name, overrides);
  ServeConfig c;
  c.file = name;
  Obj root = doc.root();
  c.name = root.string_or("name", "serving");
  root.allow("source");
  root.allow("notes");
  auto dflt = [&c](const std::string& what) { c.defaults_applied.push_back(what + " (default)"); };

  {
    Obj t = root.req("traffic").obj();
    Traffic& tr = c.traffic;
    tr.arrival = t.req("arrival").choice({"poisson", "burst", "trace"});
    if (tr.arrival == "trace") {
      Value f = t.req("file");
      tr.trace_file = f.string();
      std::filesystem::path p = tr.trace_file;
      if (p.is_relative()) p = std::filesystem::path(base_dir) / p;
      std::ifstream in(p, std::ios::binary);
      if (!in) f.fail("a readable CSV file (relative to the configuration's folder)");
      std::stringstream ss;
      ss << in.rdbuf();
      tr.trace = read_trace_csv(ss.str(), p.string());
      tr.requests = static_cast<std::int64_t>(tr.trace.size());
    } else {
      if (tr.arrival == "poisson") tr.rate_per_s = t.req("rate_per_s").number(1e-9, 1e9);
      tr.requests = t.req("requests").integer(1, 10'000'000);
      tr.prompt = parse_length(t.req("prompt_tokens").obj());
      tr.output = parse_length(t.req("output_tokens").obj());
    }
    t.done();
  }
  {
    Obj s = root.req("serving").obj();
    Serving& v = c.serving;
    v.tp = static_cast<int>(s.req("tp").integer(1, 1024));
    v.pp = static_cast<int>(s.integer_or("pp", 1, 1, 1024));
    v.ep = static_cast<int>(s.integer_or("ep", 1, 1, 1024));
    if (v.tp % v.ep != 0) {
      Value e = s.req("ep");
      e.fail(fmt::format("a divisor of tp ({}): experts are sharded over the TP group", v.tp));
    }
    if (auto d = s.opt("disaggregation")) {
      Obj o = d->obj();
      v.prefill_replicas = static_cast<int>(o.req("prefill_replicas").integer(1, 100000));
      v.decode_replicas = static_cast<int>(o.req("decode_replicas").integer(1, 100000));
      o.done();
      if (s.has("replicas")) {
        Value r = s.req("replicas");
        r.fail("no replicas with disaggregation (prefill_replicas + decode_replicas replace it)");
      }
    } else {
      if (!s.has("replicas")) dflt("serving.replicas = 1");
      v.replicas = static_cast<int>(s.integer_or("replicas", 1, 1, 100000));
    }
    if (auto d = s.opt("dtype"))
      v.dtype = parse_dtype(*d);
    else
      dflt("serving.dtype = bf16");
    if (auto d = s.opt("kv_dtype"))
      v.kv_dtype = parse_dtype(*d);
    else
      v.kv_dtype = v.dtype;
    if (!s.has("max_batch")) dflt("serving.max_batch = 256, vLLM's max_num_seqs");
    v.max_batch = static_cast<int>(s.integer_or("max_batch", 256, 1, 1 << 20));
    if (!s.has("max_tokens_per_iteration")) dflt("serving.max_tokens_per_iteration = 8192");
    v.max_tokens_per_iteration = s.integer_or("max_tokens_per_iteration", 8192, 1, kMaxTokens);
    if (!s.has("kv_block_tokens")) dflt("serving.kv_block_tokens = 16, vLLM's block_size");
    v.kv_block_tokens = static_cast<int>(s.integer_or("kv_block_tokens", 16, 1, 1 << 16));
    if (!s.has("gpu_memory_utilization")) dflt("serving.gpu_memory_utilization = 0.9, vLLM's");
    v.gpu_memory_utilization = s.number_or("gpu_memory_utilization", 0.9, 0.05, 1.0);
    if (!s.has("chunked_prefill")) dflt("serving.chunked_prefill = true");
    v.chunked_prefill = s.boolean_or("chunked_prefill", true);
    v.router = s.choice_or("router", "least_loaded", {"least_loaded", "round_robin"});
    s.done();
  }
  if (auto o = root.opt("slo")) {
    Obj s = o->obj();
    c.slo.ttft_s = s.quantity_or("ttft", Dim::Time, 0, 0);
    c.slo.tpot_s = s.quantity_or("tpot", Dim::Time, 0, 0);
    s.done();
  } else {
    dflt("slo: none, goodput counts every request");
  }
  root.done();
  return c;
}

ServeConfig load_serve_config(const std::string& path, const std::vector<std::string>& overrides) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot read file");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string dir = std::filesystem::path(path).parent_path().string();
  return parse_serve_config(ss.str(), path, overrides, dir.empty() ? "." : dir);
}

std::vector<TraceRequest> generate_requests(const Traffic& t, std::uint64_t seed) {
  if (t.arrival == "trace") return t.trace;
  std::vector<TraceRequest> out;
  out.reserve(static_cast<std::size_t>(t.requests));
  Rng arrivals{seed * 3 + 1}, prompts{seed * 3 + 2}, outputs{seed * 3 + 3};
  double now = 0;
  for (std::int64_t i = 0; i < t.requests; ++i) {
    TraceRequest r;
    if (t.arrival == "poisson") {
      if (i > 0) now += -std::log1p(-arrivals.u01()) / t.rate_per_s;
    }
    r.arrival_s = now;
    r.prompt_tokens = draw(t.prompt, prompts);
    r.output_tokens = draw(t.output, outputs);
    out.push_back(r);
  }
  return out;
}

}  // namespace tutti::serve
