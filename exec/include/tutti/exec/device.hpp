#pragma once
// Compute on the device that stands for a GPU: OpenBLAS on CPU ranks, cuBLAS on GPU ranks.
// Buffers are allocated and touched once in reserve(); gemm()/membound() reuse them, so page
// faults never pollute timings. Element types follow ExecType (a bf16 GEMM of the Program runs
// as sgemm on a CPU and as a bf16 cublasGemmEx on a GPU; the type that ran is recorded).
#include <cstdint>
#include <memory>
#include <string>

#include "tutti/models/layout.hpp"

namespace tutti::exec {

/// Element type a bench or replay GEMM executes with.
enum class ExecType { FP64, FP32, TF32, BF16, FP16 };
/// "fp64", "fp32", "tf32", "bf16", "fp16".
const char* to_string(ExecType t);
/// Parses the names above; throws InputError naming `what` otherwise.
ExecType parse_exec_type(const std::string& s, const std::string& what);
/// The type a Program dtype runs as on this device kind (CPU: fp32 for every sub-fp32 type).
ExecType exec_type_for(DType d, bool gpu);

class ComputeDevice {
 public:
  virtual ~ComputeDevice() = default;
  virtual bool is_gpu() const = 0;
  /// Library that runs the GEMMs: "OpenBLAS 0.3.21 (Haswell, 1 thread)", "cuBLAS 13.1.0".
  virtual std::string library() const = 0;
  /// Device model: the CPU model name, or the GPU name.
  virtual std::string model() const = 0;
  /// Allocates and touches buffers for GEMMs with up to `max_mk`, `max_kn`, `max_mn` elements
  /// (8-byte elements assumed) and memory-bound ops of up to `max_membound_bytes` bytes moved.
  /// May be called again to grow. Throws InputError when the memory is not there.
  virtual void reserve(std::int64_t max_mk, std::int64_t max_kn, std::int64_t max_mn,
                       double max_membound_bytes) = 0;
  /// C[m,n] = A[m,k] B[k,n], `batch` times. Synchronous on CPU, enqueued on GPU.
  virtual void gemm(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch,
                    ExecType t) = 0;
  /// Moves `bytes` through memory (reads bytes/2, writes bytes/2: a copy).
  virtual void membound(double bytes) = 0;
  /// Waits for enqueued work (no-op on CPU).
  virtual void synchronize() = 0;
  /// Runs one GEMM and returns its duration in seconds (device timers on GPU).
  virtual double timed_gemm(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch,
                            ExecType t) = 0;
  /// Runs one memory-bound op and returns its duration in seconds.
  virtual double timed_membound(double bytes) = 0;
};

/// The CPU device (OpenBLAS). Never fails.
std::unique_ptr<ComputeDevice> make_cpu_device();
/// The GPU of this rank (device = local rank modulo the visible GPUs). Throws InputError when
/// the build has no CUDA backend, its module does not load (src/cuda_module.hpp), or no CUDA
/// device is usable (with the CUDA error text).
std::unique_ptr<ComputeDevice> make_gpu_device(int local_rank);
/// Number of usable CUDA devices; 0 when none, built without CUDA or the module does not load.
/// `why` gets the reason. The first of these calls loads the CUDA backend module.
int cuda_device_count(std::string* why = nullptr);

}  // namespace tutti::exec
