// CPU compute device: OpenBLAS GEMMs, memcpy for memory-bound ops.

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "openblas.hpp"
#include "tutti/core/error.hpp"
#include "tutti/exec/device.hpp"
#include "tutti/exec/environment.hpp"

namespace tutti::exec {

const char* to_string(ExecType t) {
  switch (t) {
    case ExecType::FP64:
      return "fp64";
    case ExecType::FP32:
      return "fp32";
    case ExecType::TF32:
      return "tf32";
    case ExecType::BF16:
      return "bf16";
    case ExecType::FP16:
      return "fp16";
  }
  return "?";
}

ExecType parse_exec_type(const std::string& s, const std::string& what) {
  for (ExecType t :
       {ExecType::FP64, ExecType::FP32, ExecType::TF32, ExecType::BF16, ExecType::FP16})
    if (s == to_string(t)) return t;
  throw InputError(what, "", "\"" + s + "\"", "one of fp64, fp32, tf32, bf16, fp16");
}

ExecType exec_type_for(DType d, bool gpu) {
  if (!gpu) return ExecType::FP32;
  switch (d) {
    case DType::FP32:
      return ExecType::FP32;
    case DType::TF32:
      return ExecType::TF32;
    case DType::BF16:
      return ExecType::BF16;
    case DType::FP16:
      return ExecType::FP16;
    case DType::FP8:
    case DType::MXFP8:
    case DType::MXFP6:
    case DType::MXFP4:
    case DType::NVFP4:
      return ExecType::BF16;  // no portable fp8/fp4 GEMM in cuBLAS' plain API
  }
  return ExecType::FP32;
}

namespace {

template <typename T>
void touch(std::vector<T>& v, std::size_t n) {
  if (v.size() < n) v.resize(n);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<T>((i % 7) * 0.125);
}

class CpuDevice final : public ComputeDevice {
 public:
  bool is_gpu() const override { return false; }
  std::string library() const override {
    const openblas::Api& b = openblas::api();
    std::string cfg = b.get_config();
    return cfg + " (core " + b.get_corename() + ", " + std::to_string(b.get_num_threads()) +
           " thread(s))";
  }
  std::string model() const override { return cpu_model_name("unknown CPU"); }

  void reserve(std::int64_t max_mk, std::int64_t max_kn, std::int64_t max_mn,
               double max_membound_bytes) override {
    // Stored as doubles so that both sgemm and dgemm fit (sgemm uses the first half as floats).
    touch(a_, static_cast<std::size_t>(max_mk));
    touch(b_, static_cast<std::size_t>(max_kn));
    touch(c_, static_cast<std::size_t>(max_mn));
    // Two slots per buffer, used in turn: consecutive copies (a bench's repetitions, a
    // replay's ops) never find their data in cache just because the previous copy left it there.
    std::size_t half = static_cast<std::size_t>(max_membound_bytes / 2) + 64;
    if (src_.size() < 2 * half) {
      src_.assign(2 * half, 1);
      dst_.assign(2 * half, 0);
    }
  }

  void gemm(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch,
            ExecType t) override {
    check_internal(static_cast<std::size_t>(m * k) <= a_.size() &&
                       static_cast<std::size_t>(k * n) <= b_.size() &&
                       static_cast<std::size_t>(m * n) <= c_.size(),
                   "CpuDevice::gemm: buffers not reserved");
    const openblas::Api& blas = openblas::api();
    for (std::int64_t b = 0; b < batch; ++b) {
      if (t == ExecType::FP64)
        blas.dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m),
                   static_cast<int>(n), static_cast<int>(k), 1.0, a_.data(), static_cast<int>(k),
                   b_.data(), static_cast<int>(n), 0.0, c_.data(), static_cast<int>(n));
      else
        blas.sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m),
                   static_cast<int>(n), static_cast<int>(k), 1.0f,
                   reinterpret_cast<const float*>(a_.data()), static_cast<int>(k),
                   reinterpret_cast<const float*>(b_.data()), static_cast<int>(n), 0.0f,
                   reinterpret_cast<float*>(c_.data()), static_cast<int>(n));
    }
  }

  void membound(double bytes) override {
    std::size_t half = static_cast<std::size_t>(bytes / 2);
    check_internal(2 * half <= src_.size(), "CpuDevice::membound: buffers not reserved");
    const std::size_t off = slot_ ? src_.size() / 2 : 0;
    slot_ = !slot_;
    std::memcpy(dst_.data() + off, src_.data() + off, half);
    // Keep the copy observable so that it is not elided.
    sink_ = sink_ + dst_[off + half / 2];
  }

  void synchronize() override {}

  double timed_gemm(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch,
                    ExecType t) override {
    auto t0 = std::chrono::steady_clock::now();
    gemm(m, n, k, batch, t);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  double timed_membound(double bytes) override {
    auto t0 = std::chrono::steady_clock::now();
    membound(bytes);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

 private:
  std::vector<double> a_, b_, c_;
  std::vector<unsigned char> src_, dst_;
  volatile unsigned sink_ = 0;
  bool slot_ = false;
};

}  // namespace

std::unique_ptr<ComputeDevice> make_cpu_device() {
  return std::make_unique<CpuDevice>();
}

}  // namespace tutti::exec
