#include "tutti/sim/calibration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "tutti/core/config.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/units.hpp"
#include "tutti/topologies/catalog.hpp"

namespace tutti {

// Generated at configure time from sim/calibration/default.json (sim/CMakeLists.txt).
extern const char* const kDefaultCalibrationJson;

namespace {

constexpr const char* kTierKeys[8] = {"nvlink",     "pcie",  "access", "leaf_spine",
                                      "spine_core", "local", "global", "torus"};
constexpr const char* kProtoKeys[3] = {"ll", "ll128", "simple"};
constexpr const char* kAlgoKeys[kNumNcclAlgos] = {"ring",      "tree",          "nvls", "collnet",
                                                  "nvls_tree", "collnet_chain", "pat"};
// The first four are required; the others (added with NCCL's full algorithm set) are optional:
// a profile without them does not run them.
constexpr int kRequiredAlgos = 4;
constexpr const char* kHwKeys[3] = {"nvlink", "pci", "net"};
const char* dtype_key(int i) {
  return to_string(static_cast<DType>(i));
}

/// Where "fitted_to" entries go, and the repository root their "file:" paths are checked
/// against ("" = the embedded default in a binary far from its source tree: syntax only).
struct FittedReader {
  std::vector<FittedTo>* out = nullptr;
  std::string root;
};

/// "" when `rel` is a plain repo-relative path of an existing file under `root`, else why not.
std::string check_repo_file(const std::string& rel, const std::string& root) {
  namespace fs = std::filesystem;
  fs::path p(rel);
  if (p.is_absolute()) return "is relative to the repository root (got an absolute path)";
  for (const auto& part : p)
    if (part == "..") return "stays inside the repository (no \"..\")";
  if (root.empty()) return "";
  std::error_code ec;
  if (!fs::is_regular_file(fs::path(root) / p, ec))
    return "names an existing file of the repository at " + root;
  return "";
}

/// The source tree this binary was built from, or "" when it is not there (a relocated binary:
/// "file:" entries are then checked for syntax only).
std::string source_root() {
  std::error_code ec;
  return std::filesystem::is_directory(TUTTI_SOURCE_DIR, ec) ? TUTTI_SOURCE_DIR : "";
}

/// The repository a profile file belongs to: the nearest folder above it holding
/// sim/calibration and CMakeLists.txt, else the source tree this binary was built from.
std::string repo_root_of(const std::string& file) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir = fs::absolute(fs::path(file), ec).parent_path();
  for (; !dir.empty(); dir = dir.parent_path()) {
    if (fs::is_directory(dir / "sim" / "calibration", ec) && fs::exists(dir / "CMakeLists.txt", ec))
      return dir.string();
    if (dir == dir.parent_path()) break;
  }
  return source_root();
}

/// Reads the optional "fitted_to" of object `o` (see FittedTo in the header).
void read_fitted_to(Obj& o, FittedReader& fitted) {
  auto v = o.opt("fitted_to");
  if (!v) return;
  constexpr const char* kExpected =
      "a non-empty array of strings \"case:<case id>\", \"source:<source key>\" or "
      "\"file:<repo-relative path>\"";
  if (!v->is_array()) v->fail(kExpected);
  Arr a = v->arr();
  if (a.size() == 0) v->fail(kExpected);
  FittedTo f;
  f.path = o.path();
  for (std::size_t i = 0; i < a.size(); ++i) {
    Value e = a.at(i);
    if (!e.is_string()) e.fail(kExpected);
    std::string s = e.string();
    auto colon = s.find(':');
    std::string kind = colon == std::string::npos ? "" : s.substr(0, colon);
    std::string rest = colon == std::string::npos ? "" : s.substr(colon + 1);
    if ((kind != "case" && kind != "source" && kind != "file") || rest.empty()) e.fail(kExpected);
    if (kind == "file") {
      std::string why = check_repo_file(rest, fitted.root);
      if (!why.empty()) e.fail("a \"file:\" path that " + why);
    }
    f.targets.push_back(s);
  }
  fitted.out->push_back(std::move(f));
}

/// Reads the optional "measured_on" of object `o`: catalog GPU ids whose measurements set its
/// values.
std::vector<std::string> read_measured_on(Obj& o) {
  std::vector<std::string> out;
  auto v = o.opt("measured_on");
  if (!v) return out;
  constexpr const char* kExpected = "an array of catalog GPU ids (tutti catalog list gpu)";
  if (!v->is_array()) v->fail(kExpected);
  Arr a = v->arr();
  const auto ids = Catalog::builtin().ids("gpu");
  for (std::size_t i = 0; i < a.size(); ++i) {
    Value e = a.at(i);
    if (!e.is_string()) e.fail(kExpected);
    std::string s = e.string();
    if (std::find(ids.begin(), ids.end(), s) == ids.end()) e.fail(kExpected);
    out.push_back(s);
  }
  return out;
}

KernelModel parse_kernel(Obj o, FittedReader& fitted) {
  KernelModel k;
  k.flops.eff_max = o.req("flops_efficiency_max").number(1e-6, 1.0);
  k.flops.half = o.req("half_flops").number(0, 1e18);
  if (auto v = o.opt("half_time")) k.half_time_s = v->quantity(Dim::Time, 0, 1.0);
  if (auto v = o.opt("tile")) {
    k.tile = v->number(0, 1e6);
    // A tile edge counts matrix elements: 0 (none) or >= 1; a tiny one (1e-310) made m/tile
    // infinite and every GEMM time NaN.
    if (k.tile != 0 && k.tile < 1)
      v->fail("0 (no tile quantization) or a tile edge in [1, 1e6] elements");
  }
  if (auto v = o.opt("half_k")) k.half_k = v->number(0, 1e9);
  k.half_dim = o.req("half_dim").number(0, 1e9);
  k.bandwidth.eff_max = o.req("bandwidth_efficiency_max").number(1e-6, 1.0);
  k.bandwidth.half = o.req("half_bytes").quantity(Dim::Bytes, 0, 1e15);
  k.launch_overhead_s = o.req("launch_overhead").quantity(Dim::Time, 0, 1.0);
  k.measured_on = read_measured_on(o);
  read_fitted_to(o, fitted);
  o.done();
  return k;
}

nlohmann::json kernel_json(const KernelModel& k) {
  nlohmann::json j = {{"flops_efficiency_max", k.flops.eff_max},
                      {"half_flops", k.flops.half},
                      {"half_time", std::to_string(k.half_time_s * 1e6) + "us"},
                      {"tile", k.tile},
                      {"half_k", k.half_k},
                      {"half_dim", k.half_dim},
                      {"bandwidth_efficiency_max", k.bandwidth.eff_max},
                      {"half_bytes", std::to_string(k.bandwidth.half) + "B"},
                      {"launch_overhead", std::to_string(k.launch_overhead_s * 1e6) + "us"}};
  if (!k.measured_on.empty()) j["measured_on"] = k.measured_on;
  return j;
}

std::string us(double s) {
  return std::to_string(s * 1e6) + "us";
}

CalibrationProfile parse_doc(const Doc& doc, const std::string& repo_root) {
  CalibrationProfile p;
  p.file = doc.name();
  FittedReader fitted{&p.fitted_to, repo_root};
  Obj root = doc.root();
  p.name = root.req("name").string();
  p.source = root.req("source").string();
  root.allow("notes");

  Obj compute = root.req("compute").obj();
  compute.allow("source");
  p.gemm = parse_kernel(compute.req("gemm").obj(), fitted);
  p.attention = parse_kernel(compute.req("attention").obj(), fitted);
  p.membound = parse_kernel(compute.req("membound").obj(), fitted);
  if (auto v = compute.opt("tp_overlap_gemm_slowdown"))
    p.tp_overlap_gemm_slowdown = v->number(1.0, 4.0);
  if (auto v = compute.opt("flash_attention_1_speed"))
    p.flash_attention_1_speed = v->number(0.01, 1.0);
  if (auto v = compute.opt("grouped_gemm_half_tokens"))
    p.grouped_gemm_half_tokens = v->number(0.0, 1e6);
  if (auto dv = compute.opt("devices")) {
    Obj devs = dv->obj();
    for (const auto& id : devs.keys()) {
      if (id == "fitted_to") continue;  // read below, not a device id
      Obj d = devs.req(id).obj();
      DeviceOverride o;
      o.gpu = id;
      if (auto pk = d.opt("peak")) {
        Obj peak = pk->obj();
        for (int i = 0; i < kNumDTypes; ++i)
          if (auto v = peak.opt(dtype_key(i))) o.peak_flops[i] = v->quantity(Dim::FlopRate, 1.0);
        read_fitted_to(peak, fitted);
        peak.done();
      }
      if (auto bw = d.opt("hbm_bandwidth")) o.hbm_bw_Bps = bw->quantity(Dim::Bandwidth, 1.0);
      if (auto ge = d.opt("gemm_efficiency")) {
        Obj eff = ge->obj();
        for (int i = 0; i < kNumDTypes; ++i)
          if (auto v = eff.opt(dtype_key(i))) o.gemm_efficiency[i] = v->number(1e-6, 1.0);
        read_fitted_to(eff, fitted);
        eff.done();
      }
      if (auto ae = d.opt("attention_efficiency")) o.attention_efficiency = ae->number(1e-6, 1.0);
      if (auto src = d.opt("source")) o.source = src->string();
      read_fitted_to(d, fitted);
      d.done();
      p.devices.push_back(o);
    }
    read_fitted_to(devs, fitted);
    devs.done();
  }
  read_fitted_to(compute, fitted);
  compute.done();

  Obj network = root.req("network").obj();
  network.allow("source");
  Obj tiers = network.req("tiers").obj();
  for (int i = 0; i < 8; ++i) {
    Obj t = tiers.req(kTierKeys[i]).obj();
    p.tiers[i].bandwidth_efficiency = t.req("bandwidth_efficiency").number(1e-6, 1.0);
    p.tiers[i].extra_latency_s = t.req("latency").quantity(Dim::Time, 0, 1.0);
    p.tiers[i].measured_on = read_measured_on(t);
    read_fitted_to(t, fitted);
    t.done();
  }
  read_fitted_to(tiers, fitted);
  tiers.done();
  read_fitted_to(network, fitted);
  network.done();

  Obj nccl = root.req("nccl").obj();
  p.nccl.source = nccl.req("source").string();
  Obj protos = nccl.req("protocols").obj();
  for (int i = 0; i < 3; ++i) {
    Obj pr = protos.req(kProtoKeys[i]).obj();
    p.nccl.protocols[i].bandwidth_efficiency = pr.req("bandwidth_efficiency").number(1e-6, 1.0);
    p.nccl.protocols[i].max_bytes = pr.req("max_bytes").quantity(Dim::Bytes, 0);
    p.nccl.protocols[i].max_bandwidth_Bps = pr.req("max_bandwidth").quantity(Dim::Bandwidth, 0);
    read_fitted_to(pr, fitted);
    pr.done();
  }
  read_fitted_to(protos, fitted);
  protos.done();
  Obj algos = nccl.req("algorithms").obj();
  for (int a = 0; a < kNumNcclAlgos; ++a) {
    if (a >= kRequiredAlgos && !algos.has(kAlgoKeys[a])) continue;
    Obj al = algos.req(kAlgoKeys[a]).obj();
    NcclAlgorithm& A = p.nccl.algorithms[a];
    Obj base = al.req("base_latency").obj();
    for (int i = 0; i < 3; ++i)
      if (auto v = base.opt(kProtoKeys[i])) A.base_latency_s[i] = v->quantity(Dim::Time, 0, 1.0);
    read_fitted_to(base, fitted);
    base.done();
    bool any = false;
    for (int i = 0; i < 3; ++i) any = any || A.base_latency_s[i] >= 0;
    if (!any) base.value().fail("at least one protocol (ll, ll128, simple)");
    Obj steps = al.req("step_latency").obj();
    for (int h = 0; h < 3; ++h) {
      Obj hw = steps.req(kHwKeys[h]).obj();
      for (int i = 0; i < 3; ++i) {
        if (A.base_latency_s[i] >= 0)
          A.step_latency_s[h][i] = hw.req(kProtoKeys[i]).quantity(Dim::Time, 0, 1.0);
      }
      read_fitted_to(hw, fitted);
      hw.done();
    }
    read_fitted_to(steps, fitted);
    steps.done();
    if (auto bf = al.opt("bandwidth_factor")) {
      Obj f = bf->obj();
      for (int i = 0; i < 3; ++i)
        if (auto v = f.opt(kProtoKeys[i])) A.bandwidth_factor[i] = v->number(1e-6, 1.0);
      read_fitted_to(f, fitted);
      f.done();
    }
    read_fitted_to(al, fitted);
    al.done();
  }
  read_fitted_to(algos, fitted);
  algos.done();
  p.nccl.p2p_latency_s = nccl.req("p2p_latency").quantity(Dim::Time, 0, 1.0);
  p.nccl.enable_tree = nccl.req("enable_tree").boolean();
  p.nccl.enable_nvls = nccl.req("enable_nvls").boolean();
  p.nccl.enable_sharp = nccl.req("enable_sharp").boolean();
  p.nccl.max_channels = static_cast<int>(nccl.req("max_channels").integer(1, 1024));
  p.nccl.nvls_bandwidth_efficiency = nccl.req("nvls_bandwidth_efficiency").number(1e-6, 1.0);
  p.nccl.nvls_max_bandwidth_Bps = nccl.req("nvls_max_bandwidth").quantity(Dim::Bandwidth, 0);
  p.nccl.enable_pat = nccl.boolean_or("enable_pat", true);
  if (auto v = nccl.opt("non_nccl_algorithms")) {
    Arr a = v->arr();
    for (std::size_t i = 0; i < a.size(); ++i)
      if (a.at(i).choice({"hierarchical"}) == "hierarchical") p.nccl.allow_hierarchical = true;
  }
  if (auto v = nccl.opt("net_overhead")) p.nccl.net_overhead_s = v->quantity(Dim::Time, 0, 1e-3);
  p.nccl.ring_plateau_latency_factor =
      nccl.number_or("ring_plateau_latency_factor", 1.0, 1.0, 10.0);
  if (auto v = nccl.opt("collnet_direct_arity_latency"))
    p.nccl.collnet_direct_arity_latency_s = v->quantity(Dim::Time, 0, 1e-3);
  if (auto v = nccl.opt("pat_rank_latency"))
    p.nccl.pat_rank_latency_s = v->quantity(Dim::Time, 0, 1e-3);
  for (auto& row : p.nccl.tree_size_correction) row.fill(1.0);
  if (auto v = nccl.opt("tree_size_correction")) {
    Obj tc = v->obj();
    for (int i = 0; i < 3; ++i) {
      Arr a = tc.req(kProtoKeys[i]).arr();
      if (a.size() != 24) tc.req(kProtoKeys[i]).fail("24 factors (log2(bytes/64) = 0..23)");
      for (std::size_t j = 0; j < 24; ++j)
        p.nccl.tree_size_correction[i][j] = a.at(j).number(1e-3, 1.0);
    }
    read_fitted_to(tc, fitted);
    tc.done();
  }
  p.nccl.measured_on = read_measured_on(nccl);
  read_fitted_to(nccl, fitted);
  nccl.done();
  read_fitted_to(root, fitted);
  root.done();
  return p;
}

}  // namespace

const DeviceOverride* CalibrationProfile::device(const std::string& gpu_id) const {
  for (const auto& d : devices)
    if (d.gpu == gpu_id) return &d;
  for (const auto& d : devices)
    if (d.gpu == "*") return &d;
  return nullptr;
}

const CalibrationProfile& default_calibration() {
  static const CalibrationProfile p = [] {
    CalibrationProfile q = parse_doc(
        Doc::parse(kDefaultCalibrationJson, "sim/calibration/default.json"), source_root());
    q.file.clear();
    return q;
  }();
  return p;
}

CalibrationProfile load_calibration(const std::string& path) {
  return parse_doc(Doc::load(path), repo_root_of(path));
}

CalibrationProfile calibration_for(const std::string& path) {
  return path.empty() ? default_calibration() : load_calibration(path);
}

CalibrationProfile parse_calibration(const std::string& text, const std::string& name) {
  return parse_doc(Doc::parse(text, name), source_root());
}

void to_json(nlohmann::json& j, const CalibrationProfile& p) {
  using nlohmann::json;
  json devices = json::object();
  for (const auto& d : p.devices) {
    json o = json::object();
    json peak = json::object();
    for (int i = 0; i < kNumDTypes; ++i)
      if (d.peak_flops[i] > 0)
        peak[dtype_key(i)] = std::to_string(d.peak_flops[i] / 1e12) + "TFLOPS";
    if (!peak.empty()) o["peak"] = peak;
    if (d.hbm_bw_Bps > 0) o["hbm_bandwidth"] = std::to_string(d.hbm_bw_Bps / 1e9) + "GB/s";
    json ge = json::object();
    for (int i = 0; i < kNumDTypes; ++i)
      if (d.gemm_efficiency[i] > 0) ge[dtype_key(i)] = d.gemm_efficiency[i];
    if (!ge.empty()) o["gemm_efficiency"] = ge;
    if (d.attention_efficiency > 0) o["attention_efficiency"] = d.attention_efficiency;
    if (!d.source.empty()) o["source"] = d.source;
    devices[d.gpu] = o;
  }
  json tiers = json::object();
  for (int i = 0; i < 8; ++i) {
    tiers[kTierKeys[i]] = {{"bandwidth_efficiency", p.tiers[i].bandwidth_efficiency},
                           {"latency", us(p.tiers[i].extra_latency_s)}};
    if (!p.tiers[i].measured_on.empty())
      tiers[kTierKeys[i]]["measured_on"] = p.tiers[i].measured_on;
  }
  json protos = json::object();
  for (int i = 0; i < 3; ++i)
    protos[kProtoKeys[i]] = {
        {"bandwidth_efficiency", p.nccl.protocols[i].bandwidth_efficiency},
        {"max_bytes", std::to_string(p.nccl.protocols[i].max_bytes) + "B"},
        {"max_bandwidth", std::to_string(p.nccl.protocols[i].max_bandwidth_Bps / 1e9) + "GB/s"}};
  json algos = json::object();
  for (int a = 0; a < kNumNcclAlgos; ++a) {
    const NcclAlgorithm& A = p.nccl.algorithms[a];
    bool any = false;
    for (int i = 0; i < 3; ++i) any = any || A.base_latency_s[i] >= 0;
    if (!any && a >= kRequiredAlgos) continue;
    json base = json::object(), steps = json::object(), factor = json::object();
    for (int h = 0; h < 3; ++h) steps[kHwKeys[h]] = json::object();
    for (int i = 0; i < 3; ++i) {
      if (A.base_latency_s[i] < 0) continue;
      base[kProtoKeys[i]] = us(A.base_latency_s[i]);
      for (int h = 0; h < 3; ++h) steps[kHwKeys[h]][kProtoKeys[i]] = us(A.step_latency_s[h][i]);
      if (A.bandwidth_factor[i] > 0) factor[kProtoKeys[i]] = A.bandwidth_factor[i];
    }
    algos[kAlgoKeys[a]] = {{"base_latency", base}, {"step_latency", steps}};
    if (!factor.empty()) algos[kAlgoKeys[a]]["bandwidth_factor"] = factor;
  }
  j = json{
      {"name", p.name},
      {"source", p.source},
      {"compute",
       {{"gemm", kernel_json(p.gemm)},
        {"attention", kernel_json(p.attention)},
        {"membound", kernel_json(p.membound)},
        {"tp_overlap_gemm_slowdown", p.tp_overlap_gemm_slowdown},
        {"flash_attention_1_speed", p.flash_attention_1_speed},
        {"grouped_gemm_half_tokens", p.grouped_gemm_half_tokens},
        {"devices", devices}}},
      {"network", {{"tiers", tiers}}},
      {"nccl",
       {{"source", p.nccl.source},
        {"protocols", protos},
        {"algorithms", algos},
        {"p2p_latency", us(p.nccl.p2p_latency_s)},
        {"enable_tree", p.nccl.enable_tree},
        {"enable_nvls", p.nccl.enable_nvls},
        {"enable_sharp", p.nccl.enable_sharp},
        {"max_channels", p.nccl.max_channels},
        {"nvls_bandwidth_efficiency", p.nccl.nvls_bandwidth_efficiency},
        {"nvls_max_bandwidth", std::to_string(p.nccl.nvls_max_bandwidth_Bps / 1e9) + "GB/s"}}}};
  json& jn = j["nccl"];
  jn["enable_pat"] = p.nccl.enable_pat;
  jn["non_nccl_algorithms"] =
      p.nccl.allow_hierarchical ? json::array({"hierarchical"}) : json::array();
  jn["net_overhead"] = us(p.nccl.net_overhead_s);
  jn["ring_plateau_latency_factor"] = p.nccl.ring_plateau_latency_factor;
  jn["collnet_direct_arity_latency"] = us(p.nccl.collnet_direct_arity_latency_s);
  jn["pat_rank_latency"] = us(p.nccl.pat_rank_latency_s);
  json tc = json::object();
  for (int i = 0; i < 3; ++i) tc[kProtoKeys[i]] = p.nccl.tree_size_correction[i];
  jn["tree_size_correction"] = tc;
  if (!p.nccl.measured_on.empty()) j["nccl"]["measured_on"] = p.nccl.measured_on;
  for (const auto& f : p.fitted_to) {  // back where each was read
    json* node = &j;
    std::size_t start = 0;
    while (start < f.path.size()) {
      std::size_t dot = f.path.find('.', start);
      if (dot == std::string::npos) dot = f.path.size();
      node = &(*node)[f.path.substr(start, dot - start)];
      start = dot + 1;
    }
    (*node)["fitted_to"] = f.targets;
  }
}

namespace {

bool names(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

std::string basis_of(const std::vector<std::string>& measured_on) {
  if (measured_on.empty()) return "estimate";
  std::string s = "measured on ";
  for (std::size_t i = 0; i < measured_on.size(); ++i) s += (i ? ", " : "") + measured_on[i];
  return s;
}

}  // namespace

std::vector<CalibrationDefault> calibration_defaults(const CalibrationProfile& p,
                                                     const GpuSpec& gpu) {
  std::vector<CalibrationDefault> out;
  const DeviceOverride* o = p.device(gpu.id);
  // GEMM: the dtypes a training run computes in (fp32/tf32/fp16 share the bf16 family value).
  for (DType d : enum_values<DType>()) {
    if (d == DType::FP32 || d == DType::TF32 || d == DType::FP16 || !(gpu.peak(d) > 0)) continue;
    const int i = static_cast<int>(d);
    if (o && o->gemm_efficiency[i] > 0) continue;
    // Only the BF16 rate is what the family's measured_on devices measured.
    if (d == DType::BF16 && names(p.gemm.measured_on, gpu.id)) continue;
    const std::string key =
        std::string("compute.devices.") + gpu.id + ".gemm_efficiency." + to_string(d);
    const std::string what = std::string(to_string(d)) + " GEMM efficiency";
    const double fp8 = o ? o->gemm_efficiency[static_cast<int>(DType::FP8)] : 0;
    if (dtype_block_elements(d) > 0 && fp8 > 0)  // op_time_s takes the device's fp8 value
      out.push_back(
          {key, what, fp8, "this device's fp8 value (no measurement of the block-scaled format)"});
    else
      out.push_back({key, what, p.gemm.flops.eff_max,
                     d == DType::BF16 ? basis_of(p.gemm.measured_on)
                                      : "the generic bf16 value, " + basis_of(p.gemm.measured_on)});
  }
  if (!(o && o->attention_efficiency > 0) && !names(p.attention.measured_on, gpu.id))
    out.push_back({"compute.attention.flops_efficiency_max", "fused attention efficiency",
                   p.attention.flops.eff_max, basis_of(p.attention.measured_on)});
  if (!(o && o->hbm_bw_Bps > 0) && !names(p.membound.measured_on, gpu.id))
    out.push_back({"compute.membound.bandwidth_efficiency_max",
                   "memory-bound kernels' HBM efficiency", p.membound.bandwidth.eff_max,
                   basis_of(p.membound.measured_on)});
  if (gpu.scaleup_bw_Bps > 0) {
    const TierModel& t = p.tier(Tier::NVLink);
    if (!names(t.measured_on, gpu.id))
      out.push_back({"network.tiers.nvlink.bandwidth_efficiency",
                     "scale-up link bandwidth efficiency", t.bandwidth_efficiency,
                     basis_of(t.measured_on)});
    // NVLS runs only where a server's NVSwitches support it (nodes.json "nvls"): the default is
    // listed for a GPU that ships in such a server, never by vendor (an A100 has no NVLS).
    const auto& nodes = Catalog::builtin().nodes();
    const bool nvls = std::any_of(nodes.begin(), nodes.end(),
                                  [&](const NodeSpec& n) { return n.gpu == gpu.id && n.nvls; });
    if (nvls && !names(p.nccl.measured_on, gpu.id))
      out.push_back({"nccl.nvls_bandwidth_efficiency", "NVLS efficiency",
                     p.nccl.nvls_bandwidth_efficiency, basis_of(p.nccl.measured_on)});
  }
  return out;
}

std::string calibration_defaults_text(const std::vector<CalibrationDefault>& d) {
  std::string s;
  for (std::size_t i = 0; i < d.size(); ++i)
    s += (i ? "; " : "") + d[i].what + " " + fmt::format("{:g}", d[i].value) + " (" + d[i].basis +
         ")";
  return s;
}

std::string calibration_defaults_line(const std::string& gpu_id,
                                      const std::vector<CalibrationDefault>& d) {
  if (d.empty()) return "";
  return gpu_id + ": calibration defaults used (no microbenchmark of this GPU behind them): " +
         calibration_defaults_text(d);
}

nlohmann::json calibration_defaults_json(const std::vector<CalibrationDefault>& d) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& x : d)
    a.push_back({{"key", x.key}, {"what", x.what}, {"value", x.value}, {"basis", x.basis}});
  return a;
}

}  // namespace tutti
