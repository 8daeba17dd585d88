#pragma once
// The environment a measurement was taken in, recorded with every result so that measurements
// from different machines stay comparable: hosts, CPU/GPU model, library versions (Open MPI,
// OpenBLAS, CUDA, cuBLAS, NCCL), thread counts and the MPI/NCCL/OpenBLAS settings in effect.
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace tutti::exec {

class Session;
class ComputeDevice;

/// JSON object: {"hosts": [...], "ranks", "ranks_per_host", "cpu_model", "mpi_library",
/// "openblas", "cuda": {...} (when `gpu`, the run is on the GPU backend: cuda_environment()),
/// "device", "device_model", "compute_library" (when `dev` is given), "settings": {every
/// OMPI_MCA_*, OPENBLAS_*, NCCL_*, OMP_NUM_THREADS, MALLOC_* variable set}, "nccl_algorithm",
/// "nccl_protocol" (from NCCL_ALGO / NCCL_PROTO when set; "chosen by NCCL per call" otherwise)}.
/// Collective.
nlohmann::json environment_json(const Session& s, const ComputeDevice* dev, bool gpu);

/// This host's CPU model: the first "model name" of /proc/cpuinfo, else `fallback`.
std::string cpu_model_name(const std::string& fallback);

/// The CUDA part alone (no MPI needed): {"built": bool, "loaded": bool (the backend module,
/// loaded by this call when it was not yet), "module": its path, "error" (when not loaded),
/// "runtime", "driver", "cublas", "nccl", "devices", "device_error"}. Built without CUDA:
/// {"built": false}.
nlohmann::json cuda_environment();

}  // namespace tutti::exec
