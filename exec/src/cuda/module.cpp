// The module's table of entry points (../cuda_module.hpp), its one exported symbol.
#include <nlohmann/json.hpp>

#include "../cuda_module.hpp"
#include "cuda_common.hpp"

extern "C" __attribute__((visibility("default"))) const tutti::exec::CudaModuleApi*
tutti_exec_cuda_module() {
  namespace c = tutti::exec::cuda;
  static const tutti::exec::CudaModuleApi api{
      tutti::exec::kCudaModuleAbi, c::device_count, c::make_device, c::environment,
      c::bench_collective,         c::replay};
  return &api;
}
