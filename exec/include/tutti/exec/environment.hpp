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
/// "openblas", "cuda": {...} (when built with CUDA: runtime, driver, cublas, nccl versions,
/// devices), "gpu_model" (when `dev` is a GPU), "settings": {every OMPI_MCA_*, OPENBLAS_*,
/// NCCL_*, OMP_NUM_THREADS, MALLOC_* variable set}, "nccl_algorithm", "nccl_protocol" (from
/// NCCL_ALGO / NCCL_PROTO when set; "chosen by NCCL per call" otherwise)}. Collective.
nlohmann::json environment_json(const Session& s, const ComputeDevice* dev);

/// This host's CPU model: the first "model name" of /proc/cpuinfo, else `fallback`.
std::string cpu_model_name(const std::string& fallback);

/// The CUDA part alone (no MPI needed): {"built": bool, "runtime", "driver", "cublas", "nccl",
/// "devices", "device_error"}.
nlohmann::json cuda_environment();

}  // namespace tutti::exec
