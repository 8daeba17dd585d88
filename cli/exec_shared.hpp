#pragma once
// Shared by cli/exec.cpp, cli/calibrate.cpp and cli/validate_live.cpp: the MPI-side plumbing of
// the execution backend's subcommands (error reporting across ranks, replay driver, measurement
// documents).
#include <array>
#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "common.hpp"

namespace tutti::exec {
class Session;
class Watchdog;
}  // namespace tutti::exec

namespace tutti::cli {

/// Options of `tutti exec replay` (also used by `tutti validate --live`).
struct ReplayCliOptions {
  std::string workload, cluster, parallel, scale_down, device = "cpu", timeout = "60s";
  int iterations = 5, warmup = 2;
  bool no_check = false;
  int debug_die_rank = -1, debug_hang_rank = -1;  ///< Hidden: robustness tests.
  std::string command = "tutti exec replay";  ///< For the "start it as `mpirun -np N ...`" hint.
};

/// Adds the replay options to `sub`.
void add_replay_options(CLI::App* sub, ReplayCliOptions& o);

/// Runs `body` under an MPI session with a watchdog. Errors on a multi-rank job are printed by
/// the failing rank and the job is aborted (exit 2 for input errors, 70 otherwise), so that no
/// rank waits forever on a peer that gave up. On a 1-rank job errors propagate to main().
int run_mpi(const Globals& g, const std::string& timeout_text,
            const std::function<int(exec::Session&, exec::Watchdog&)>& body);

/// Runs the replay (under run_mpi) and returns the measurements document on rank 0 (null on
/// other ranks): {"kind": "tutti.measurements", "version": 1, "tool", "environment", "replay":
/// {workload, cluster, layout, scale_down, result}}. Also returns the loaded inputs' paths.
nlohmann::json run_replay(exec::Session& s, exec::Watchdog& wd, const ReplayCliOptions& o);

/// A new measurements document with kind, version, tool and environment.
nlohmann::json measurements_document(const std::string& tool, const nlohmann::json& environment);

/// `--scale-down` items -> workload overrides; `recorded` gets {key: {from, to}}.
std::vector<std::string> scale_down_overrides(const std::string& spec,
                                              const std::string& workload_path,
                                              nlohmann::json& recorded);

/// Distinct GEMM shapes {m, n, k} of a workload's Program (attention as its two GEMMs), for a
/// GEMM sweep over the shapes a replay will run; `membound_bytes` (optional) gets the distinct
/// sizes of its memory-bound ops (within 1%).
std::vector<std::array<std::int64_t, 3>> workload_gemm_shapes(
    const std::string& workload, const std::string& parallel, const std::string& scale_down,
    std::vector<double>* membound_bytes = nullptr);

/// Testing hooks (hidden options): the rank `die_rank` kills itself, `hang_rank` sleeps forever.
void debug_fault(int rank, int die_rank, int hang_rank);

/// Parses a "--timeout" value ("60s", "2min", "0" = off) to seconds.
double parse_timeout(const std::string& text);

}  // namespace tutti::cli
