#pragma once
// The CUDA backend is a module loaded on first use (libtutti_exec_cuda.so, built from src/cuda/
// when WITH_CUDA finds the toolkit): linking cudart, cuBLAS and NCCL into `tutti` itself cost every
// run about 0.36 s and 217 MB of start-up (bench/engine.md, 2026-12-06), GPU backend or not.
// This header is the only contract between `tutti` (src/cuda_backend.cpp, the loader) and the
// module (src/cuda/module.cpp): a table of entry points, versioned by kCudaModuleAbi. The module
// resolves the rest of tutti (Session, replay_common, models' layout) from the executable that
// loads it, which exports the tutti namespace for that (cli/CMakeLists.txt, exports.list); both
// come from one build, so their types agree.
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "tutti/exec/bench.hpp"
#include "tutti/exec/device.hpp"
#include "tutti/exec/replay.hpp"

namespace tutti::exec {

inline constexpr int kCudaModuleAbi = 1;

struct CudaModuleApi {
  int abi = kCudaModuleAbi;
  int (*device_count)(std::string* why);
  std::unique_ptr<ComputeDevice> (*make_device)(int local_rank);
  nlohmann::json (*environment)();
  CollBenchResult (*bench_collective)(const Session& s, const CollBenchOptions& o, Watchdog* wd);
  ReplayResult (*replay)(const Session& s, const Program& p, const ReplayOptions& o, Watchdog* wd);
};

}  // namespace tutti::exec

/// The module's one exported symbol.
extern "C" const tutti::exec::CudaModuleApi* tutti_exec_cuda_module();
