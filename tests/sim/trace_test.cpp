// Chrome / Perfetto traces (sim/trace.hpp): the filters, the track layout, the size check.
#include "tutti/sim/trace.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "../support/run.hpp"
#include "../support/trace_check.hpp"
#include "engine_fixture.hpp"
#include "tutti/core/error.hpp"

using namespace tutti;
using tutti::testing::TestFatTree;

namespace {

std::string input_error_flag(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.file();
  }
  return "no error";
}

// tp=2 x pp=4 on 8 GPUs (4 nodes of 2); activations large enough that a stage has several
// transfers in flight at once.
struct Pipeline {
  std::shared_ptr<TestFatTree> topo =
      std::make_shared<TestFatTree>(1, 4, 2, 1, 50e9, 450e9, 50e9, 1e-6);
  SimCluster cl = testing::make_sim_cluster(topo);
  Program prog = testing::pipeline_program(4, 8, 2, 200e6, 1e6, 1024);
  std::string path = tutti::testing::temp_dir() + "/t.json";

  nlohmann::json trace(const TraceFilter& f, SimResult* r = nullptr, TraceOptions o = {}) {
    o.path = path;
    o.filter = f;
    ProgramSimOptions po;
    po.trace = o;
    SimResult res = simulate_program(prog, cl, default_calibration(), po);
    if (r) *r = res;
    std::ifstream in(o.path);
    return nlohmann::json::parse(in);
  }
};

std::map<std::string, std::size_t> count_by(const nlohmann::json& j, const std::string& ph,
                                            const std::string& key) {
  std::map<std::string, std::size_t> n;
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == ph) ++n[e[key].is_string() ? e[key].get<std::string>() : e[key].dump()];
  return n;
}

}  // namespace

TEST_CASE("trace filters: index lists and op lists parse, bad values name their flag") {
  using R = std::vector<std::pair<long long, long long>>;
  CHECK(parse_index_ranges("0-7,64", "--x") == R{{0, 7}, {64, 64}});
  CHECK(parse_index_ranges(" 3 , 1-2 ", "--x") == R{{3, 3}, {1, 2}});
  for (const char* bad : {"", "a", "5-3", "-1", "1,,2", "1-", "0x10", "1e3"}) {
    CAPTURE(bad);
    CHECK(input_error_flag([&] { parse_index_ranges(bad, "--trace-ranks"); }) == "--trace-ranks");
  }
  TraceFilter f = parse_trace_filter("0-7", "gemm,collective,moe.*,attn.qkv", "0-2");
  CHECK(f.ranks == R{{0, 7}});
  CHECK(f.kinds == std::vector<OpKind>{OpKind::Gemm, OpKind::Collective});
  CHECK(f.names == std::vector<std::string>{"moe.*", "attn.qkv"});
  CHECK(f.iterations == R{{0, 2}});
  CHECK(parse_trace_filter("", "compute,p2p", "").kinds ==
        std::vector<OpKind>{OpKind::Gemm, OpKind::Attention, OpKind::MemBound, OpKind::Send,
                            OpKind::Recv});
  CHECK(input_error_flag([] { parse_trace_filter("", "gemm,,recv", ""); }) == "--trace-ops");
  CHECK(input_error_flag([] { parse_trace_filter("", "*", ""); }) == "--trace-ops");
  CHECK(input_error_flag([] { parse_trace_filter("", "", "2-1"); }) == "--trace-iterations");
}

TEST_CASE(
    "trace: strict-valid, one process per timeline, stream tracks, sends and receives on tracks of "
    "their own") {
  Pipeline p;
  SimResult r;
  const nlohmann::json j = p.trace({}, &r);
  CHECK(testing::check_chrome_trace(j) == "");
  // Default: the first rank of each timeline (tp=2: ranks 0, 2, 4, 6), every op once.
  std::size_t ops = 0;
  for (const auto& rc : p.prog.classes) ops += rc.ops.size();
  std::set<long long> pids;
  std::size_t xs = 0;
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "X") {
      ++xs;
      pids.insert(e["pid"].get<long long>());
    }
  CHECK(xs == ops);
  CHECK(pids == std::set<long long>{0, 2, 4, 6});
  // Track names: streams, then sends and receives by peer; no send shares a track with a recv or
  // a collective.
  std::map<std::pair<long long, long long>, std::string> track;
  std::set<std::string> names;
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name") {
      track[{e["pid"], e["tid"]}] = e["args"]["name"];
      names.insert(e["args"]["name"].get<std::string>());
    }
  CHECK(names.count("compute"));
  CHECK(names.count("comm_tp"));
  CHECK(names.count("send to stage 1"));
  CHECK(names.count("recv from stage 0"));
  CHECK(names.count("comm_pp") == 0);  // every op on the pp stream here is a send or a recv
  // Sends and receives of one rank overlap in time (so on one comm_pp track they would not nest).
  std::map<long long, std::vector<std::pair<double, double>>> sends, recvs;  // per pid
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const std::string& t = track[{e["pid"], e["tid"]}];
    CAPTURE(t);
    const double a = e["ts"], b = a + e["dur"].get<double>();
    if (e["cat"] == "send") {
      CHECK(t.rfind("send to stage ", 0) == 0);
      sends[e["pid"]].push_back({a, b});
    } else if (e["cat"] == "recv") {
      CHECK(t.rfind("recv from stage ", 0) == 0);
      recvs[e["pid"]].push_back({a, b});
    } else {
      CHECK(t.find("stage") == std::string::npos);
    }
  }
  bool crossing = false;  // partial overlap: neither nests in the other
  for (const auto& [pid, ss] : sends)
    for (const auto& s : ss)
      for (const auto& r : recvs[pid])
        crossing = crossing || (s.first < r.first && r.first < s.second && s.second < r.second) ||
                   (r.first < s.first && s.first < r.second && r.second < s.second);
  CHECK(crossing);
  // Slices end within the iteration.
  double last = 0;
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "X") last = std::max(last, e["ts"].get<double>() + e["dur"].get<double>());
  CHECK(last == doctest::Approx(r.iteration_time_s * 1e6).epsilon(1e-6));
}

TEST_CASE("trace: rank, op and iteration filters select what they name, the estimate is close") {
  Pipeline p;
  SimResult r;
  const nlohmann::json j = p.trace(parse_trace_filter("1,6-7", "gemm,send", "0-2"), &r);
  CHECK(testing::check_chrome_trace(j) == "");
  const auto by_pid = count_by(j, "X", "pid");
  CHECK(by_pid.size() == 3);
  CHECK(by_pid.count("1"));
  CHECK(by_pid.count("6"));
  CHECK(by_pid.count("7"));
  const auto by_cat = count_by(j, "X", "cat");
  CHECK(by_cat.size() == 2);
  // Rank 1 (stage 0): 8 forward + 8 backward GEMMs and 8 activation sends, per iteration.
  std::size_t rank1_gemm = 0;
  std::set<long long> iters;
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "X" && e["pid"] == 1) {
      rank1_gemm += e["cat"] == "gemm";
      iters.insert(e["args"]["iter"].get<long long>());
    }
  CHECK(rank1_gemm == 3 * 16);
  CHECK(iters == std::set<long long>{0, 1, 2});
  // Iteration k is iteration 0 shifted by k iteration times: the first GEMM of each.
  std::vector<double> first_gemm(3, 1e300);
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "X" && e["pid"] == 1 && e["cat"] == "gemm") {
      auto k = e["args"]["iter"].get<std::size_t>();
      first_gemm[k] = std::min(first_gemm[k], e["ts"].get<double>());
    }
  CHECK(first_gemm[1] - first_gemm[0] == doctest::Approx(r.iteration_time_s * 1e6).epsilon(1e-6));
  CHECK(first_gemm[2] - first_gemm[0] ==
        doctest::Approx(2 * r.iteration_time_s * 1e6).epsilon(1e-6));
  // Ranks 6 and 7 share a timeline (stage 3, tp peers) and show the same slices.
  CHECK(by_pid.at("6") == by_pid.at("7"));
  // The estimate (before the simulation) is within 25% of the file.
  std::vector<TraceTimeline> tls;  // one timeline per stage, as the engine runs this program
  for (const auto& rc : p.prog.classes) tls.push_back({&rc, rc.stage * 2, 2});
  const TraceEstimate e =
      estimate_trace(p.prog, tls, parse_trace_filter("1,6-7", "gemm,send", "0-2"));
  std::size_t xs = 0;
  for (const auto& [k, n] : by_pid) xs += n;
  CHECK(e.events == xs);
  CHECK(e.ranks == 3);
  const double bytes = static_cast<double>(std::filesystem::file_size(p.path));
  CHECK(e.bytes == doctest::Approx(bytes).epsilon(0.25));
}

TEST_CASE(
    "trace: bad ranks, names and iterations, and oversized traces, are refused before simulating") {
  Pipeline p;
  std::vector<std::string> notes;
  auto run = [&](const TraceFilter& f, double max_bytes = TraceOptions::kDefaultMaxBytes,
                 bool force = false) {
    ProgramSimOptions po;
    po.trace.path = tutti::testing::temp_dir() + "/refused.json";
    std::filesystem::remove(po.trace.path);
    po.trace.filter = f;
    po.trace.max_bytes = max_bytes;
    po.trace.force = force;
    po.trace.note = [&](const std::string& s) { notes.push_back(s); };
    po.tokens_to_train = 10 * p.prog.tokens_per_iteration;  // a run of 10 iterations
    simulate_program(p.prog, p.cl, default_calibration(), po);
    return std::filesystem::exists(po.trace.path);
  };
  CHECK(input_error_flag([&] { run(parse_trace_filter("0-8", "", "")); }) ==
        "--trace-ranks");  // 8 GPUs
  CHECK(input_error_flag([&] { run(parse_trace_filter("", "gemm,nosuch.op", "")); }) ==
        "--trace-ops");
  CHECK(input_error_flag([&] { run(parse_trace_filter("", "", "9-10")); }) == "--trace-iterations");
  CHECK(run(parse_trace_filter("", "fw*", "9")));  // a prefix, the last iteration
  notes.clear();
  CHECK(input_error_flag([&] { run({}, 1000); }) == "--trace");
  CHECK_FALSE(std::filesystem::exists(tutti::testing::temp_dir() + "/refused.json"));
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].find("trace: about") == 0);
  CHECK(run({}, 1000, true));  // forced
  CHECK(notes.back().find("--trace-force") != std::string::npos);
}

TEST_CASE(
    "trace: transfers in flight together on one track take further lanes, so every track nests") {
  Program prog;
  prog.world = 2;
  prog.layout.pp = 2;
  const auto nm = prog.intern("pp.send_activation");
  RankClass rc;
  rc.stage = 0;
  for (int i = 0; i < 3; ++i) {
    Op op;
    op.kind = OpKind::Send;
    op.stream = Stream::CommPP;
    op.peer_delta = 1;
    op.name = nm;
    op.microbatch = static_cast<std::uint32_t>(i);
    rc.ops.push_back(op);
  }
  RankClass rc1;
  rc1.stage = 1;
  prog.classes = {rc, rc1};
  // [0, 4] us, [1, 3] us (inside the first), [3.5, 6] us (crosses the first: a lane of its own,
  // the second's lane being free again).
  const double start[] = {0, 1e-6, 3.5e-6}, end[] = {4e-6, 3e-6, 6e-6}, rdv[] = {0, 1e-6, 3.5e-6};
  const std::vector<TraceTimeline> tls = {{&prog.classes[0], 0, 1, start, end, rdv},
                                          {&prog.classes[1], 1, 1, start, end, rdv}};
  const std::string path = tutti::testing::temp_dir() + "/lanes.json";
  write_trace(path, prog, tls, parse_trace_filter("0", "", ""), 6e-6);
  std::ifstream in(path);
  const nlohmann::json j = nlohmann::json::parse(in);
  CHECK(testing::check_chrome_trace(j) == "");
  std::map<long long, std::string> tname;
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name") tname[e["tid"]] = e["args"]["name"];
  std::vector<std::string> lane;
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "X") lane.push_back(tname[e["tid"]]);
  CHECK(lane ==
        std::vector<std::string>{"send to stage 1", "send to stage 1 (2)", "send to stage 1 (2)"});
  CHECK(tname.size() == 2);
  // The same slices on one track, as a writer without lanes would put them: the check refuses it.
  nlohmann::json one = j;
  for (auto& e : one["traceEvents"])
    if (e["ph"] == "X") e["tid"] = 1;
  CHECK(testing::check_chrome_trace(one).find("overlap") != std::string::npos);
}
