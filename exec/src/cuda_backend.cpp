// tutti::exec's CUDA entry points. With the CUDA backend built they load its module on first use
// (cuda_module.hpp says why it is a module) and call into it; without it, or when the module
// cannot be loaded, they say so plainly: counts and environments report it, the rest throws
// InputError (exit 2) with the way out.
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "cuda_module.hpp"
#include "tutti/core/error.hpp"
#include "tutti/exec/environment.hpp"

namespace tutti::exec {

namespace {

struct Loaded {
  const CudaModuleApi* api = nullptr;
  std::string path;  // the module loaded, or the last one tried
  std::string why;   // why there is no api
};

#ifdef TUTTI_HAVE_CUDA
// Where the module may be: $TUTTI_CUDA_MODULE alone when set; else beside the executable, then
// where this build put it.
std::vector<std::string> candidates() {
  if (const char* env = std::getenv("TUTTI_CUDA_MODULE"); env != nullptr && *env != '\0')
    return {env};
  std::vector<std::string> out;
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) out.push_back((exe.parent_path() / TUTTI_CUDA_MODULE_NAME).string());
  out.emplace_back(TUTTI_CUDA_MODULE_BUILT);
  return out;
}

Loaded load() {
  Loaded m;
  m.why = "the CUDA backend module was not found";
  for (const std::string& p : candidates()) {
    m.path = p;
    std::error_code ec;
    if (!std::filesystem::exists(p, ec)) {
      m.why = "the CUDA backend module " + p + " does not exist";
      continue;
    }
    void* h = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      const char* e = dlerror();
      m.why = "the CUDA backend module " + p + " could not be loaded: " + (e ? e : "unknown error");
      return m;  // found but broken: say so rather than try an older copy
    }
    auto entry = reinterpret_cast<const CudaModuleApi* (*)()>(dlsym(h, "tutti_exec_cuda_module"));
    const CudaModuleApi* api = entry ? entry() : nullptr;
    if (api == nullptr || api->abi != kCudaModuleAbi) {
      m.why = "the CUDA backend module " + p + " is not this build's (no matching entry table)";
      return m;
    }
    m.api = api;
    m.why.clear();
    return m;
  }
  return m;
}
#endif

const Loaded& module() {
  static const Loaded m = [] {
#ifdef TUTTI_HAVE_CUDA
    return load();
#else
    Loaded l;
    l.why = "built without CUDA";
    return l;
#endif
  }();
  return m;
}

const CudaModuleApi& api_or_throw() {
  const Loaded& m = module();
  if (m.api) return *m.api;
#ifdef TUTTI_HAVE_CUDA
  throw InputError("the GPU backend is unavailable: " + m.why +
                   " (rebuild tutti, or set TUTTI_CUDA_MODULE to the libtutti_exec_cuda.so of "
                   "this build; or use --device cpu)");
#else
  throw InputError(
      "this tutti was built without the CUDA backend (WITH_CUDA found no CUDA toolkit, cuBLAS or "
      "NCCL); rebuild with -DWITH_CUDA=ON on a machine with the toolkit, or use --device cpu");
#endif
}

}  // namespace

int cuda_device_count(std::string* why) {
  const Loaded& m = module();
  if (!m.api) {
    if (why) *why = m.why;
    return 0;
  }
  return m.api->device_count(why);
}

std::unique_ptr<ComputeDevice> make_gpu_device(int local_rank) {
  return api_or_throw().make_device(local_rank);
}

nlohmann::json cuda_environment() {
#ifndef TUTTI_HAVE_CUDA
  return {{"built", false}};
#else
  const Loaded& m = module();
  if (!m.api) return {{"built", true}, {"loaded", false}, {"error", m.why}, {"module", m.path}};
  nlohmann::json j = m.api->environment();
  j["loaded"] = true;
  j["module"] = m.path;
  return j;
#endif
}

CollBenchResult bench_collective_nccl(const Session& s, const CollBenchOptions& o, Watchdog* wd) {
  return api_or_throw().bench_collective(s, o, wd);
}

ReplayResult replay_gpu(const Session& s, const Program& p, const ReplayOptions& o, Watchdog* wd) {
  return api_or_throw().replay(s, p, o, wd);
}

}  // namespace tutti::exec
