// Entry points of the CUDA backend for builds without it (src/cuda/ is compiled only with
// TUTTI_HAVE_CUDA): they say plainly that the capability is not in this build.
#ifndef TUTTI_HAVE_CUDA
#include <nlohmann/json.hpp>

#include "tutti/core/error.hpp"
#include "tutti/exec/bench.hpp"
#include "tutti/exec/device.hpp"
#include "tutti/exec/environment.hpp"
#include "tutti/exec/replay.hpp"

namespace tutti::exec {

namespace {
[[noreturn]] void no_cuda() {
  throw InputError(
      "this tutti was built without the CUDA backend (WITH_CUDA found no CUDA toolkit, cuBLAS or "
      "NCCL); "
      "rebuild with -DWITH_CUDA=ON on a machine with the toolkit, or use --device cpu");
}
}  // namespace

int cuda_device_count(std::string* why) {
  if (why) *why = "built without CUDA";
  return 0;
}
std::unique_ptr<ComputeDevice> make_gpu_device(int) {
  no_cuda();
}
nlohmann::json cuda_environment() {
  return {{"built", false}};
}
CollBenchResult bench_collective_nccl(const Session&, const CollBenchOptions&, Watchdog*) {
  no_cuda();
}
ReplayResult replay_gpu(const Session&, const Program&, const ReplayOptions&, Watchdog*) {
  no_cuda();
}

}  // namespace tutti::exec
#endif
