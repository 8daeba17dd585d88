// tutti exec: run a workload for real over MPI/NCCL (replay), or microbenchmarks (bench).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <thread>

#include "common.hpp"
#include "exec_shared.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/flags.hpp"
#include "tutti/core/format.hpp"
#include "tutti/core/units.hpp"
#include "tutti/exec/backend.hpp"
#include "tutti/exec/bench.hpp"
#include "tutti/exec/device.hpp"
#include "tutti/exec/environment.hpp"
#include "tutti/exec/session.hpp"

namespace tutti::cli {

double parse_timeout(const std::string& text) {
  if (text == "off") return 0;
  auto q = parse_quantity(text, Dim::Time);
  if (!q || !(*q >= exec::kMinTimeout_s && *q <= exec::kMaxTimeout_s))
    throw InputError("--timeout", "", "\"" + text + "\"",
                     "a duration from 1s to 7d such as \"60s\" or \"2min\", or \"off\"");
  return *q;
}

nlohmann::json measurements_document(const std::string& tool, const nlohmann::json& environment) {
  return {
      {"kind", "tutti.measurements"}, {"version", 1}, {"tool", tool}, {"environment", environment}};
}

int run_mpi(const Globals& g, const std::string& timeout_text,
            const std::function<int(exec::Session&, exec::Watchdog&)>& body) {
  (void)g;
  const double timeout_s = parse_timeout(timeout_text);  // before MPI: a bad flag fails plainly
  exec::Session s;
  try {
    exec::Watchdog wd(s, timeout_s);  // exits kExitRankFault when a rank hangs or dies
    int rc = body(s, wd);
    return rc;
  } catch (const InputError& e) {
    if (s.size() > 1) s.abort(kUsage, e.what());
    throw;
  } catch (const std::exception& e) {
    if (s.size() > 1)
      s.abort(kInternal, std::string("internal error (a bug, please report it): ") + e.what());
    throw;
  }
}

namespace {

struct BenchCli {
  std::string minbytes = "8", maxbytes = "128M", stepbytes = "1M", ops = "all_reduce";
  double factor = 2;
  int warmup = 5, iters = 20, check = 1;
  bool gemm = false;
  std::string mnk = "64:1024:x2", m, n, k, membound = "64K:64M:x4", dtype, device = "cpu",
              timeout = "60s";
  std::string workload, parallel, scale_down;  // --gemm: add the workload's GEMM shapes
  int expect_ranks = 0;
  int debug_die_rank = -1, debug_hang_rank = -1;  // hidden: robustness tests
};

std::string human_bytes(double b) {
  static constexpr Rung kBinary[] = {{1 << 30, 1, 1 << 30, fixed(0), "G"},
                                     {1 << 20, 1, 1 << 20, fixed(0), "M"},
                                     {1 << 10, 1, 1 << 10, fixed(0), "K"},
                                     {kBelowAll, 1, 1, fixed(0), ""}};
  return format_si(b, {.rungs = kBinary, .sep = "", .magnitude = false});
}

std::string bench_table(const nlohmann::json& doc) {
  std::string t;
  const auto& env = doc["environment"];
  t += fmt::format("# tutti exec bench: {} rank(s) on {} host(s); {}\n", env["ranks"].get<int>(),
                   env["hosts"].size(), env["mpi_library"].get<std::string>());
  for (const auto& c : doc.value("collectives", nlohmann::json::array())) {
    t += fmt::format("#\n# {} ({}, {} ranks, {}; busbw = algbw x {:.4f})\n",
                     c["op"].get<std::string>(), c["backend"].get<std::string>(),
                     c["ranks"].get<int>(), c["tier"].get<std::string>(),
                     c["bus_factor"].get<double>());
    t += fmt::format("# {:>12} {:>12} {:>6} {:>10} {:>10} {:>10} {:>8}\n", "size(B)", "count",
                     "type", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "#wrong");
    for (const auto& p : c["points"])
      t += fmt::format("  {:>12.0f} {:>12} {:>6} {:>10.2f} {:>10.3f} {:>10.3f} {:>8}\n",
                       p["size_bytes"].get<double>(), p["count"].get<std::int64_t>(), "float",
                       p["time_s"].get<double>() * 1e6, p["algbw_GBps"].get<double>(),
                       p["busbw_GBps"].get<double>(),
                       p["wrong"].get<std::int64_t>() < 0
                           ? std::string("N/A")
                           : std::to_string(p["wrong"].get<std::int64_t>()));
  }
  if (doc.contains("compute")) {
    const auto& c = doc["compute"];
    t += fmt::format("#\n# GEMM sweep on {} ({}), {} rank(s) at once\n",
                     c["model"].get<std::string>(), c["library"].get<std::string>(),
                     c["ranks"].get<int>());
    t += fmt::format("# {:>7} {:>7} {:>7} {:>5} {:>12} {:>10}\n", "M", "N", "K", "type", "time(us)",
                     "TFLOP/s");
    for (const auto& p : c["gemm"])
      t += fmt::format("  {:>7} {:>7} {:>7} {:>5} {:>12.2f} {:>10.4f}\n",
                       p["m"].get<std::int64_t>(), p["n"].get<std::int64_t>(),
                       p["k"].get<std::int64_t>(), p["type"].get<std::string>(),
                       p["time_s"].get<double>() * 1e6, p["tflops"].get<double>());
    t += fmt::format("# {:>12} {:>12} {:>10}\n", "copy(B moved)", "time(us)", "GB/s");
    for (const auto& p : c["membound"])
      t += fmt::format("  {:>12} {:>12.2f} {:>10.3f}\n", human_bytes(p["bytes"].get<double>()),
                       p["time_s"].get<double>() * 1e6, p["bandwidth_GBps"].get<double>());
  }
  return t;
}

int run_bench(const Globals& g, const BenchCli& b) {
  // Parse everything before MPI starts, so that a typo fails plainly on every rank.
  exec::CollBenchOptions co;
  co.min_bytes = exec::parse_nccl_size(b.minbytes, "-b/--minbytes");
  co.max_bytes = exec::parse_nccl_size(b.maxbytes, "-e/--maxbytes");
  co.factor = b.factor;
  co.step_bytes = b.factor > 1 ? 0 : exec::parse_nccl_size(b.stepbytes, "-i/--stepbytes");
  co.warmup = b.warmup;
  co.iters = b.iters;
  co.check = b.check != 0;
  if (b.iters < 1) throw InputError("-n/--iters", "", std::to_string(b.iters), ">= 1");
  if (b.warmup < 0) throw InputError("-w/--warmup_iters", "", std::to_string(b.warmup), ">= 0");
  std::vector<exec::CollOp> ops;
  if (!b.gemm) {
    std::string list =
        b.ops == "all" ? "all_reduce,all_gather,reduce_scatter,alltoall,sendrecv" : b.ops;
    for (const std::string& op : split_list(list)) ops.push_back(exec::parse_coll_op(op));
    if (ops.empty()) ops.push_back(exec::parse_coll_op(""));  // names the expected values
  }
  const bool gpu = b.device == "gpu";
  exec::ComputeBenchOptions cb;
  if (b.gemm) {
    cb.type = exec::parse_exec_type(b.dtype.empty() ? (gpu ? "bf16" : "fp32") : b.dtype, "--dtype");
    if (!b.m.empty() || !b.n.empty() || !b.k.empty()) {
      if (b.m.empty() || b.n.empty() || b.k.empty())
        throw InputError("--m/--n/--k", "", "only some of them",
                         "all three (each a list or a range)");
      for (double m : exec::parse_sweep(b.m, "--m", false))
        for (double n : exec::parse_sweep(b.n, "--n", false))
          for (double k : exec::parse_sweep(b.k, "--k", false))
            cb.shapes.push_back({static_cast<std::int64_t>(m), static_cast<std::int64_t>(n),
                                 static_cast<std::int64_t>(k)});
    } else {
      for (double x : exec::parse_sweep(b.mnk, "--mnk", false))
        cb.shapes.push_back({static_cast<std::int64_t>(x), static_cast<std::int64_t>(x),
                             static_cast<std::int64_t>(x)});
    }
    std::vector<double> workload_copies;
    if (!b.workload.empty())
      for (const auto& sh :
           workload_gemm_shapes(b.workload, b.parallel, b.scale_down, &workload_copies)) {
        exec::GemmShape g{sh[0], sh[1], sh[2]};
        bool dup = false;
        for (const auto& x : cb.shapes) dup = dup || (x.m == g.m && x.n == g.n && x.k == g.k);
        if (!dup) cb.shapes.push_back(g);
      }
    if (b.membound != "none") cb.membound_bytes = exec::parse_sweep(b.membound, "--membound", true);
    // The workload's own copy sizes too: CPU copy rates are not monotonic in size (caches, and
    // glibc switching to non-temporal stores for very large copies).
    for (double x : workload_copies)
      if (std::find(cb.membound_bytes.begin(), cb.membound_bytes.end(), x) ==
          cb.membound_bytes.end())
        cb.membound_bytes.push_back(x);
    std::sort(cb.membound_bytes.begin(), cb.membound_bytes.end());
    cb.warmup = std::max(1, std::min(b.warmup, 3));
    cb.iters = b.iters;
  }
  return run_mpi(g, b.timeout, [&](exec::Session& s, exec::Watchdog& wd) {
    if (b.expect_ranks > 0)
      s.require_world(b.expect_ranks, "tutti exec bench ...");
    else
      s.require_world(0, "tutti exec bench ...");  // still catches "every process rank 0 of 1"
    debug_fault(s.rank(), b.debug_die_rank, b.debug_hang_rank);
    std::unique_ptr<exec::ComputeDevice> dev;
    if (b.gemm) dev = gpu ? exec::make_gpu_device(0) : exec::make_cpu_device();
    nlohmann::json env = exec::environment_json(s, dev.get(), gpu);
    nlohmann::json doc = measurements_document("tutti exec bench", env);
    if (!b.gemm) {
      nlohmann::json colls = nlohmann::json::array();
      for (auto op : ops) {
        co.op = op;
        exec::CollBenchResult r =
            gpu ? exec::bench_collective_nccl(s, co, &wd) : exec::bench_collective_mpi(s, co, &wd);
        nlohmann::json j;
        to_json(j, r);
        colls.push_back(j);
      }
      doc["collectives"] = colls;
    } else {
      exec::ComputeBenchResult r = exec::bench_compute(s, *dev, cb, &wd);
      nlohmann::json j;
      to_json(j, r);
      doc["compute"] = j;
    }
    if (s.rank() == 0) {
      if (g.json || !g.output.empty()) emit_json(g, doc);
      if (!g.json) {
        std::string t = bench_table(doc);
        std::fwrite(t.data(), 1, t.size(), g.output.empty() ? stdout : stderr);
      }
    }
    int bad = 0;
    for (const auto& c : doc.value("collectives", nlohmann::json::array()))
      for (const auto& p : c["points"])
        if (p["wrong"].get<std::int64_t>() > 0) bad = 1;
    if (bad && s.rank() == 0)
      std::fprintf(stderr, "tutti: error: some collective results were wrong (#wrong > 0)\n");
    return bad ? kInternal : kOk;
  });
}

int run_info(const Globals& g) {
  std::string why;
  int n = exec::cuda_device_count(&why);
  nlohmann::json j = {{"cuda_backend_built", exec::built_with_cuda()},
                      {"cuda", exec::cuda_environment()},
                      {"cuda_devices", n},
                      {"mpi_library", exec::Session::mpi_library_version()},
                      {"launcher",
                       {{"world", exec::launcher_from_env().world},
                        {"variable", exec::launcher_from_env().variable}}}};
  if (n == 0) j["cuda_devices_reason"] = why;
  emit_json(g, j);
  return kOk;
}

}  // namespace

void setup_exec(CLI::App& app, Globals& g) {
  auto* sub = app.add_subcommand(
      "exec", "Run a workload for real over MPI/NCCL (replay), or microbenchmarks (bench)");
  sub->require_subcommand(1);
  sub->footer(
      "Exit codes: 0 ok, 2 bad input or flags, 3 the watchdog ended the job because a rank hung "
      "or\n"
      "died (--timeout; the error names the rank, its host and its last op), 70 a bug in tutti.");

  static BenchCli b;
  auto* bench = sub->add_subcommand("bench",
                                    "Collective microbenchmarks as nccl-tests (-b -e -f --op), or "
                                    "GEMM/memory sweeps (--gemm); run under mpirun/srun");
  bench->add_option("-b,--minbytes", b.minbytes, "Smallest size (nccl-tests: 8, 64K, 128M, 1G)")
      ->capture_default_str();
  bench->add_option("-e,--maxbytes", b.maxbytes, "Largest size")->capture_default_str();
  bench->add_option("-f,--stepfactor", b.factor, "Multiplicative step (1 = use -i)")
      ->capture_default_str();
  bench->add_option("-i,--stepbytes", b.stepbytes, "Additive step when -f 1")
      ->capture_default_str();
  bench->add_option("-w,--warmup_iters", b.warmup, "Warm-up calls per size")->capture_default_str();
  bench->add_option("-n,--iters", b.iters, "Timed calls per size")->capture_default_str();
  bench->add_option("-c,--check", b.check, "Verify results (1) or not (0)")->capture_default_str();
  bench
      ->add_option("--op", b.ops,
                   "all_reduce|all_gather|reduce_scatter|alltoall|sendrecv, a comma list, or all")
      ->capture_default_str();
  bench->add_flag("--gemm", b.gemm, "GEMM and memory-bound sweep instead of collectives");
  bench->add_option("--mnk", b.mnk, "Square GEMM sizes: list or range from:to:xF / from:to:+S")
      ->capture_default_str();
  bench->add_option("--m", b.m, "GEMM M values (with --n and --k: their product is swept)");
  bench->add_option("--n", b.n, "GEMM N values");
  bench->add_option("--k", b.k, "GEMM K values");
  bench
      ->add_option("--membound", b.membound,
                   "Copy sizes (bytes moved) for the memory-bound sweep, or none")
      ->capture_default_str();
  bench->add_option("--workload", b.workload,
                    "--gemm: also sweep this workload's GEMM shapes and copy sizes (with "
                    "--parallel, --scale-down)");
  bench->add_option("--parallel", b.parallel,
                    "--gemm --workload: the layout whose shapes to sweep");
  bench->add_option("--scale-down", b.scale_down, "--gemm --workload: as for `tutti exec replay`");
  bench->add_option(
      "--dtype", b.dtype,
      "GEMM type fp64|fp32|tf32|bf16|fp16 (CPU: fp32/fp64; default fp32 CPU, bf16 GPU)");
  bench->add_option("--device", b.device, "cpu (MPI + OpenBLAS) or gpu (NCCL + cuBLAS)")
      ->check(CLI::IsMember({"cpu", "gpu"}))
      ->capture_default_str();
  bench
      ->add_option("--timeout", b.timeout,
                   "Abort the job (exit 3, naming the stuck rank) when no rank progresses for this "
                   "long: 1s..7d, or off")
      ->capture_default_str();
  bench->add_option("--expect-ranks", b.expect_ranks,
                    "Fail unless the MPI world has this many ranks");
  bench->add_option("--debug-die-rank", b.debug_die_rank, "Testing: this rank dies (SIGKILL)")
      ->group("");
  bench->add_option("--debug-hang-rank", b.debug_hang_rank, "Testing: this rank hangs")->group("");
  bench->callback([&g] { g.run = [&g] { return run_bench(g, b); }; });

  static ReplayCliOptions r;
  auto* replay = sub->add_subcommand(
      "replay",
      "Run each rank's part of the workload's Program for real and time it; run under mpirun/srun");
  add_replay_options(replay, r);
  replay->callback([&g] {
    g.run = [&g] {
      return run_mpi(g, r.timeout, [&](exec::Session& s, exec::Watchdog& wd) {
        nlohmann::json doc = run_replay(s, wd, r);
        if (s.rank() == 0) {
          int wrong = doc["replay"]["result"]["check"]["wrong_elements"].get<int>();
          if (g.json || !g.output.empty()) emit_json(g, doc);
          const auto& res = doc["replay"]["result"];
          std::string line = fmt::format(
              "replay: {} ranks, {} layout {}: iteration time median {:.3f} ms (min {:.3f}, max "
              "{:.3f}) over {} "
              "iterations; {} communication ops checked, {} wrong elements\n",
              res["world"].get<int>(), doc["replay"]["workload"].get<std::string>(),
              doc["replay"]["layout"].get<std::string>(),
              res["iteration_time_s"].get<double>() * 1e3,
              res["iteration_min_s"].get<double>() * 1e3,
              res["iteration_max_s"].get<double>() * 1e3, res["iterations"].get<int>(),
              res["check"]["ops"].get<std::int64_t>(), wrong);
          if (!g.json) std::fputs(line.c_str(), g.output.empty() ? stdout : stderr);
          if (wrong > 0) {
            std::fprintf(stderr, "tutti: error: collective results were wrong\n");
            return static_cast<int>(kInternal);
          }
        }
        return static_cast<int>(kOk);
      });
    };
  });

  auto* info = sub->add_subcommand(
      "info", "Which backends this build has and which devices it sees (no MPI launcher needed)");
  info->callback([&g] { g.run = [&g] { return run_info(g); }; });
}

}  // namespace tutti::cli
