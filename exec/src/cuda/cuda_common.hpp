#pragma once
// CUDA backend helpers, and the entry points the module's table holds (../cuda_module.hpp; the
// functions of the same names in tutti::exec load the module and call these).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "tutti/core/error.hpp"
#include "tutti/exec/bench.hpp"
#include "tutti/exec/device.hpp"
#include "tutti/exec/replay.hpp"

namespace tutti::exec::cuda {

inline void ck(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw InputError(std::string("CUDA: ") + what + ": " + cudaGetErrorName(e) + ": " +
                     cudaGetErrorString(e));
}
inline void ck(cublasStatus_t e, const char* what) {
  if (e != CUBLAS_STATUS_SUCCESS)
    throw InputError(std::string("cuBLAS: ") + what + ": " + cublasGetStatusName(e));
}
inline void ck(ncclResult_t e, const char* what) {
  if (e != ncclSuccess)
    throw InputError(std::string("NCCL: ") + what + ": " + ncclGetErrorString(e));
}

/// The rank's index among the ranks of its node (MPI_COMM_TYPE_SHARED).
int local_rank();
/// Selects this rank's GPU (local rank modulo the visible devices). Throws InputError without one.
int select_device();
/// A world NCCL communicator (unique id broadcast over MPI_COMM_WORLD).
ncclComm_t world_nccl_comm();
std::string nccl_version_string();

// Entry points (tutti::exec's make_gpu_device, cuda_device_count, cuda_environment,
// bench_collective_nccl and replay_gpu, whose docs apply).
int device_count(std::string* why);
std::unique_ptr<ComputeDevice> make_device(int local_rank);
nlohmann::json environment();
CollBenchResult bench_collective(const Session& s, const CollBenchOptions& o, Watchdog* wd);
ReplayResult replay(const Session& s, const Program& p, const ReplayOptions& o, Watchdog* wd);

/// Row-major C[m,n] = A[m,k] B[k,n] on the handle's stream (column-major C^T = B^T A^T).
inline void gemm(cublasHandle_t h, const void* a, const void* b, void* c, std::int64_t m,
                 std::int64_t n, std::int64_t k, ExecType t) {
  cudaDataType_t ty = CUDA_R_32F;
  cublasComputeType_t ct = CUBLAS_COMPUTE_32F;
  static const float one = 1.f, zero = 0.f;
  static const double done = 1.0, dzero = 0.0;
  const void* alpha = &one;
  const void* beta = &zero;
  switch (t) {
    case ExecType::FP64:
      ty = CUDA_R_64F;
      ct = CUBLAS_COMPUTE_64F;
      alpha = &done;
      beta = &dzero;
      break;
    case ExecType::FP32:
      break;
    case ExecType::TF32:
      ct = CUBLAS_COMPUTE_32F_FAST_TF32;
      break;
    case ExecType::BF16:
      ty = CUDA_R_16BF;
      break;
    case ExecType::FP16:
      ty = CUDA_R_16F;
      break;
  }
  ck(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
                  static_cast<int>(k), alpha, b, ty, static_cast<int>(n), a, ty,
                  static_cast<int>(k), beta, c, ty, static_cast<int>(n), ct, CUBLAS_GEMM_DEFAULT),
     "cublasGemmEx");
}

}  // namespace tutti::exec::cuda
