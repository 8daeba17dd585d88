// GPU compute device (cuBLAS), device discovery, CUDA environment.
#include <nlohmann/json.hpp>
#include <vector>

#include "cuda_common.hpp"
#include "tutti/exec/device.hpp"
#include "tutti/exec/environment.hpp"

namespace tutti::exec {

namespace cuda {

int local_rank() {
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited) return 0;
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int r = 0;
  MPI_Comm_rank(node, &r);
  MPI_Comm_free(&node);
  return r;
}

int select_device() {
  std::string why;
  int n = device_count(&why);
  if (n <= 0) throw InputError("no usable CUDA device: " + why + " (use --device cpu)");
  int dev = local_rank() % n;
  ck(cudaSetDevice(dev), "cudaSetDevice");
  return dev;
}

ncclComm_t world_nccl_comm() {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  ncclUniqueId id;
  if (rank == 0) ck(ncclGetUniqueId(&id), "ncclGetUniqueId");
  MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
  ncclComm_t c;
  ck(ncclCommInitRank(&c, size, id, rank), "ncclCommInitRank");
  return c;
}

std::string nccl_version_string() {
  int v = 0;
  ncclGetVersion(&v);
  return "NCCL " + std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." +
         std::to_string(v % 100);
}

int device_count(std::string* why) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);  // without a driver: error 35, count untouched
  if (e != cudaSuccess) {
    if (why) *why = std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
    return 0;
  }
  if (n == 0 && why) *why = "no CUDA device";
  return n;
}

nlohmann::json environment() {
  int rt = 0, drv = 0;
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);
  std::string why;
  int n = device_count(&why);
  nlohmann::json j = {
      {"built", true},
      {"runtime", std::to_string(rt / 1000) + "." + std::to_string((rt % 1000) / 10)},
      {"driver", std::to_string(drv / 1000) + "." + std::to_string((drv % 1000) / 10)},
      {"cublas", std::to_string(CUBLAS_VER_MAJOR) + "." + std::to_string(CUBLAS_VER_MINOR) + "." +
                     std::to_string(CUBLAS_VER_PATCH)},
      {"nccl", nccl_version_string()},
      {"devices", n}};
  if (n == 0) j["device_error"] = why;
  std::vector<std::string> names;
  for (int d = 0; d < n; ++d) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, d) == cudaSuccess) names.emplace_back(prop.name);
  }
  j["device_names"] = names;
  return j;
}

namespace {

class GpuDevice final : public ComputeDevice {
 public:
  explicit GpuDevice(int local_rank) {
    std::string why;
    int n = device_count(&why);
    if (n <= 0) throw InputError("no usable CUDA device: " + why + " (use --device cpu)");
    dev_ = local_rank % n;
    ck(cudaSetDevice(dev_), "cudaSetDevice");
    cudaDeviceProp prop{};
    ck(cudaGetDeviceProperties(&prop, dev_), "cudaGetDeviceProperties");
    name_ = prop.name;
    ck(cublasCreate(&h_), "cublasCreate");
    ck(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    ck(cublasSetStream(h_, stream_), "cublasSetStream");
    ck(cudaEventCreate(&e0_), "cudaEventCreate");
    ck(cudaEventCreate(&e1_), "cudaEventCreate");
  }
  ~GpuDevice() override {
    cudaDeviceSynchronize();
    for (void* p : {a_, b_, c_, src_, dst_})
      if (p) cudaFree(p);
    cudaEventDestroy(e0_);
    cudaEventDestroy(e1_);
    cublasDestroy(h_);
    cudaStreamDestroy(stream_);
  }
  bool is_gpu() const override { return true; }
  std::string library() const override {
    return "cuBLAS " + std::to_string(CUBLAS_VER_MAJOR) + "." + std::to_string(CUBLAS_VER_MINOR) +
           "." + std::to_string(CUBLAS_VER_PATCH);
  }
  std::string model() const override { return name_; }

  void reserve(std::int64_t max_mk, std::int64_t max_kn, std::int64_t max_mn,
               double max_membound_bytes) override {
    grow(a_, a_bytes_, static_cast<std::size_t>(max_mk) * 8);
    grow(b_, b_bytes_, static_cast<std::size_t>(max_kn) * 8);
    grow(c_, c_bytes_, static_cast<std::size_t>(max_mn) * 8);
    std::size_t half = static_cast<std::size_t>(max_membound_bytes / 2) + 256;
    grow(src_, src_bytes_, half);
    grow(dst_, dst_bytes_, half);
  }

  void gemm(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch,
            ExecType t) override {
    for (std::int64_t i = 0; i < batch; ++i) cuda::gemm(h_, a_, b_, c_, m, n, k, t);
  }
  void membound(double bytes) override {
    std::size_t half = static_cast<std::size_t>(bytes / 2);
    if (half)
      ck(cudaMemcpyAsync(dst_, src_, half, cudaMemcpyDeviceToDevice, stream_), "cudaMemcpyAsync");
  }
  void synchronize() override { ck(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }
  double timed_gemm(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch,
                    ExecType t) override {
    cudaEventRecord(e0_, stream_);
    gemm(m, n, k, batch, t);
    cudaEventRecord(e1_, stream_);
    return elapsed();
  }
  double timed_membound(double bytes) override {
    cudaEventRecord(e0_, stream_);
    membound(bytes);
    cudaEventRecord(e1_, stream_);
    return elapsed();
  }
  cublasHandle_t handle() const { return h_; }

 private:
  double elapsed() {
    ck(cudaEventSynchronize(e1_), "cudaEventSynchronize");
    float ms = 0;
    ck(cudaEventElapsedTime(&ms, e0_, e1_), "cudaEventElapsedTime");
    return ms * 1e-3;
  }
  static void grow(void*& p, std::size_t& have, std::size_t want) {
    if (want <= have) return;
    if (p) cudaFree(p);
    p = nullptr;
    ck(cudaMalloc(&p, want),
       "cudaMalloc (the GEMM/memory buffers do not fit: scale the workload down)");
    ck(cudaMemset(p, 0, want), "cudaMemset");
    have = want;
  }
  int dev_ = 0;
  std::string name_;
  cublasHandle_t h_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t e0_ = nullptr, e1_ = nullptr;
  void *a_ = nullptr, *b_ = nullptr, *c_ = nullptr, *src_ = nullptr, *dst_ = nullptr;
  std::size_t a_bytes_ = 0, b_bytes_ = 0, c_bytes_ = 0, src_bytes_ = 0, dst_bytes_ = 0;
};

}  // namespace

std::unique_ptr<ComputeDevice> make_device(int local_rank) {
  return std::make_unique<GpuDevice>(local_rank);
}

}  // namespace cuda
}  // namespace tutti::exec
