#include "tutti/exec/environment.hpp"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "openblas.hpp"
#include "tutti/exec/device.hpp"
#include "tutti/exec/session.hpp"

extern char** environ;

namespace tutti::exec {

std::string cpu_model_name(const std::string& fallback) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      auto p = line.find(':');
      if (p != std::string::npos) return line.substr(p + 2);
    }
  return fallback;
}

nlohmann::json environment_json(const Session& s, const ComputeDevice* dev, bool gpu) {
  nlohmann::json j;
  auto hosts = s.hosts();
  std::map<std::string, int> per_host;
  for (const auto& h : hosts) ++per_host[h];
  j["hosts"] = nlohmann::json::array();
  for (const auto& [h, c] : per_host) j["hosts"].push_back({{"name", h}, {"ranks", c}});
  j["ranks"] = s.size();
  j["cpu_model"] = cpu_model_name("unknown");
  j["mpi_library"] = Session::mpi_library_version();
  const openblas::Api& blas = openblas::api();
  j["openblas"] = {{"config", blas.get_config()},
                   {"core", blas.get_corename()},
                   {"threads", blas.get_num_threads()}};
  if (gpu) j["cuda"] = cuda_environment();  // a CPU run does not load the CUDA module for it
  if (dev) {
    j["device"] = dev->is_gpu() ? "gpu" : "cpu";
    j["device_model"] = dev->model();
    j["compute_library"] = dev->library();
  }
  std::map<std::string, std::string> settings;  // sorted: deterministic output
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    std::string k = kv.substr(0, eq);
    for (const char* prefix :
         {"OMPI_MCA_", "OPENBLAS_", "NCCL_", "MALLOC_", "OMP_NUM_THREADS", "CUDA_VISIBLE_DEVICES"})
      if (k.rfind(prefix, 0) == 0) settings[k] = kv.substr(eq + 1);
  }
  j["settings"] = settings;
  const char* algo = std::getenv("NCCL_ALGO");
  const char* proto = std::getenv("NCCL_PROTO");
  j["nccl_algorithm"] = algo ? algo : "chosen by NCCL per call (NCCL_ALGO unset)";
  j["nccl_protocol"] = proto ? proto : "chosen by NCCL per call (NCCL_PROTO unset)";
  return j;
}

}  // namespace tutti::exec
