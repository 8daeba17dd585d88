// Program replay on GPU ranks: one CUDA stream per Program stream, CUDA events for deps and
// timing, cuBLAS for GEMMs, NCCL communicators split per (stream, group) for collectives and
// ncclSend/ncclRecv on the world communicator for pipeline p2p. See replay.hpp.
#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <vector>

#include "../replay_common.hpp"
#include "cuda_common.hpp"
#include "tutti/exec/replay.hpp"
#include "tutti/exec/session.hpp"

namespace tutti::exec {

using cuda::ck;

namespace {

constexpr std::int64_t kCheckPrefix = 4096;  // elements copied back per op in the check pass

struct GpuCommOp {
  ncclComm_t comm = nullptr;
  int group_size = 1, group_index = 0, peer = -1;
  CollCounts counts;
  int pattern = -1;  // index of the device pattern used to fill the send buffer (check pass)
};

ncclDataType_t nccl_float() {
  return ncclFloat;
}

class GpuReplay {
 public:
  GpuReplay(const Session& s, const Program& p) : p_(p) {
    cuda::select_device();
    rank_ = s.rank();
    RankCoords me = coords_of(p.layout, rank_);
    cls_ = &class_of_stage(p, me.pp);
    world_ = cuda::world_nccl_comm();
    for (auto& st : streams_)
      ck(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "cudaStreamCreate");
    ck(cublasCreate(&blas_), "cublasCreate");
    ck(cublasSetStream(blas_, streams_[0]), "cublasSetStream");
    // Communicators per (stream, group), split in the same order on every rank.
    std::set<std::pair<int, int>> pairs;
    for (const auto& k : p.classes)
      for (const auto& op : k.ops)
        if (op.kind == OpKind::Collective)
          pairs.insert({static_cast<int>(op.stream), static_cast<int>(op.group)});
    for (auto [st, g] : pairs) {
      std::vector<int> ranks = group_ranks(p.layout, rank_, static_cast<GroupDim>(g));
      int color = *std::min_element(ranks.begin(), ranks.end());
      int key = static_cast<int>(std::find(ranks.begin(), ranks.end(), rank_) - ranks.begin());
      ncclComm_t c;
      ck(ncclCommSplit(world_, color, key, &c, nullptr), "ncclCommSplit");
      comms_[{st, g}] = c;
    }
    const auto& ops = cls_->ops;
    co_.resize(ops.size());
    std::int64_t mk = 1, kn = 1, mn = 1;
    double mb = 0;
    std::vector<std::int64_t> send(kNumStreams, 1), recv(kNumStreams, 1);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      GpuCommOp& c = co_[i];
      if (op.kind == OpKind::Collective) {
        c.comm = comms_.at({static_cast<int>(op.stream), static_cast<int>(op.group)});
        ck(ncclCommCount(c.comm, &c.group_size), "ncclCommCount");
        ck(ncclCommUserRank(c.comm, &c.group_index), "ncclCommUserRank");
        c.counts = coll_counts(op.coll, op.bytes, c.group_size);
      } else if (op.kind == OpKind::Send || op.kind == OpKind::Recv) {
        c.comm = world_;
        c.peer = rank_of(p.layout, me.tp, me.cp, me.dp, me.pp + op.peer_delta);
        c.counts = p2p_counts(op.bytes);
      } else if (op.kind == OpKind::Gemm || op.kind == OpKind::Attention) {
        mk = std::max({mk, op.m * op.k, op.m * op.n});
        kn = std::max(kn, op.k * op.n);
        mn = std::max({mn, op.m * op.n, op.m * op.k});
      } else {
        mb = std::max(mb, op.bytes);
      }
      int st = static_cast<int>(op.stream);
      send[st] = std::max(send[st], c.counts.send);
      recv[st] = std::max(recv[st], c.counts.recv);
    }
    alloc(a_, static_cast<std::size_t>(mk) * 8);
    alloc(b_, static_cast<std::size_t>(kn) * 8);
    alloc(c_, static_cast<std::size_t>(mn) * 8);
    alloc(src_, static_cast<std::size_t>(mb / 2) + 256);
    alloc(dst_, static_cast<std::size_t>(mb / 2) + 256);
    for (int st = 0; st < kNumStreams; ++st) {
      alloc(send_[st], static_cast<std::size_t>(send[st]) * 4);
      alloc(recv_[st], static_cast<std::size_t>(recv[st]) * 4);
    }
    start_.resize(ops.size());
    end_.resize(ops.size());
    for (std::size_t i = 0; i < ops.size(); ++i) {
      ck(cudaEventCreate(&start_[i]), "cudaEventCreate");
      ck(cudaEventCreate(&end_[i]), "cudaEventCreate");
    }
    ck(cudaEventCreate(&t0_), "cudaEventCreate");
    type_ = exec_type_for(p.dtype, true);
  }

  ~GpuReplay() {
    cudaDeviceSynchronize();
    for (auto& [k, c] : comms_) ncclCommDestroy(c);
    ncclCommDestroy(world_);
    for (auto* q : {a_, b_, c_, src_, dst_}) cudaFree(q);
    for (int st = 0; st < kNumStreams; ++st) {
      cudaFree(send_[st]);
      cudaFree(recv_[st]);
    }
    for (auto* q : patterns_) cudaFree(q);
    for (auto e : start_) cudaEventDestroy(e);
    for (auto e : end_) cudaEventDestroy(e);
    cudaEventDestroy(t0_);
    cublasDestroy(blas_);
    for (auto st : streams_) cudaStreamDestroy(st);
  }

  const RankClass& cls() const { return *cls_; }

  /// Enqueues one iteration; with `check`, fills send buffers from device patterns and copies
  /// a prefix of every receive buffer back for verification.
  void run(bool check, std::vector<std::vector<float>>* staged) {
    const auto& ops = cls_->ops;
    ck(cudaEventRecord(t0_, streams_[0]), "cudaEventRecord");
    for (int st = 1; st < kNumStreams; ++st)
      ck(cudaStreamWaitEvent(streams_[st], t0_, 0), "cudaStreamWaitEvent");
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      const int sti = static_cast<int>(op.stream);
      cudaStream_t st = streams_[sti];
      for (std::uint32_t d = 0; d < op.dep_count; ++d)
        ck(cudaStreamWaitEvent(st, end_[cls_->deps[op.dep_begin + d]], 0), "cudaStreamWaitEvent");
      if (check && (op.kind == OpKind::Collective || op.kind == OpKind::Send)) fill(i, st);
      ck(cudaEventRecord(start_[i], st), "cudaEventRecord");
      launch(op, co_[i], sti, st);
      ck(cudaEventRecord(end_[i], st), "cudaEventRecord");
      if (check && (op.kind == OpKind::Collective || op.kind == OpKind::Recv)) {
        auto& h = (*staged)[i];
        h.resize(static_cast<std::size_t>(std::min(co_[i].counts.recv, kCheckPrefix)));
        ck(cudaMemcpyAsync(h.data(), recv_[sti], h.size() * 4, cudaMemcpyDeviceToHost, st),
           "cudaMemcpyAsync");
      }
    }
    ck(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  }

  std::int64_t verify(const std::vector<std::vector<float>>& staged, std::int64_t& checked) const {
    std::int64_t wrong = 0;
    for (std::size_t i = 0; i < cls_->ops.size(); ++i) {
      const Op& op = cls_->ops[i];
      const GpuCommOp& c = co_[i];
      if (op.kind == OpKind::Collective) {
        CollCounts k = c.counts;
        k.recv = static_cast<std::int64_t>(staged[i].size());
        wrong += verify_coll(op.coll, k, c.group_index, c.group_size, staged[i].data());
        ++checked;
      } else if (op.kind == OpKind::Recv) {
        wrong +=
            verify_p2p(staged[i].data(), static_cast<std::int64_t>(staged[i].size()), c.peer, 0);
        ++checked;
      }
    }
    return wrong;
  }

  void times(std::vector<double>& start, std::vector<double>& end) const {
    for (std::size_t i = 0; i < start_.size(); ++i) {
      float a = 0, b = 0;
      ck(cudaEventElapsedTime(&a, t0_, start_[i]), "cudaEventElapsedTime");
      ck(cudaEventElapsedTime(&b, t0_, end_[i]), "cudaEventElapsedTime");
      start[i] = a * 1e-3;
      end[i] = b * 1e-3;
    }
  }

 private:
  static void alloc(void*& p, std::size_t bytes) {
    ck(cudaMalloc(&p, bytes),
       "cudaMalloc (the replay's buffers do not fit: scale the workload down)");
    ck(cudaMemset(p, 0, bytes), "cudaMemset");
  }

  void fill(std::size_t i, cudaStream_t st) {
    const Op& op = cls_->ops[i];
    GpuCommOp& c = co_[i];
    const int sti = static_cast<int>(op.stream);
    if (c.pattern < 0) {  // build (once) a device copy of the known values for this op
      std::vector<float> h;
      if (op.kind == OpKind::Send) {
        h.resize(static_cast<std::size_t>(c.counts.send));
        fill_p2p(h.data(), c.counts.send, rank_, 0);
      } else {
        h.resize(static_cast<std::size_t>(std::max(c.counts.send, c.counts.recv)));
        fill_coll(op.coll, c.counts, c.group_index, c.group_size, h.data());
      }
      void* d = nullptr;
      alloc(d, h.size() * 4);
      ck(cudaMemcpy(d, h.data(), h.size() * 4, cudaMemcpyHostToDevice), "cudaMemcpy");
      patterns_.push_back(d);
      pattern_bytes_.push_back(h.size() * 4);
      c.pattern = static_cast<int>(patterns_.size() - 1);
    }
    void* dst =
        op.kind == OpKind::Collective && op.coll == Coll::Broadcast ? recv_[sti] : send_[sti];
    ck(cudaMemcpyAsync(dst, patterns_[c.pattern], pattern_bytes_[c.pattern],
                       cudaMemcpyDeviceToDevice, st),
       "cudaMemcpyAsync");
  }

  void launch(const Op& op, const GpuCommOp& c, int sti, cudaStream_t st) {
    float* sb = static_cast<float*>(send_[sti]);
    float* rb = static_cast<float*>(recv_[sti]);
    switch (op.kind) {
      case OpKind::Gemm:
        for (std::int64_t b = 0; b < op.batch; ++b)
          cuda::gemm(blas_, a_, b_, c_, op.m, op.n, op.k, type_);
        return;
      case OpKind::Attention: {
        std::int64_t reps = attention_repeats(op);
        for (std::int64_t b = 0; b < reps; ++b) {
          cuda::gemm(blas_, a_, b_, c_, op.m, op.n, op.k, type_);
          cuda::gemm(blas_, a_, b_, c_, op.m, op.k, op.n, type_);
        }
        return;
      }
      case OpKind::MemBound:
        if (op.bytes >= 2)
          ck(cudaMemcpyAsync(dst_, src_, static_cast<std::size_t>(op.bytes / 2),
                             cudaMemcpyDeviceToDevice, st),
             "cudaMemcpyAsync");
        return;
      case OpKind::Send:
        ck(ncclSend(sb, c.counts.send, nccl_float(), c.peer, c.comm, st), "ncclSend");
        return;
      case OpKind::Recv:
        ck(ncclRecv(rb, c.counts.recv, nccl_float(), c.peer, c.comm, st), "ncclRecv");
        return;
      case OpKind::Collective:
        break;
    }
    switch (op.coll) {
      case Coll::AllReduce:
        ck(ncclAllReduce(sb, rb, c.counts.send, ncclFloat, ncclSum, c.comm, st), "ncclAllReduce");
        break;
      case Coll::AllGather:
        ck(ncclAllGather(sb, rb, c.counts.block, ncclFloat, c.comm, st), "ncclAllGather");
        break;
      case Coll::ReduceScatter:
        ck(ncclReduceScatter(sb, rb, c.counts.block, ncclFloat, ncclSum, c.comm, st),
           "ncclReduceScatter");
        break;
      case Coll::AllToAll:
        ck(ncclGroupStart(), "ncclGroupStart");
        for (int q = 0; q < c.group_size; ++q) {
          ck(ncclSend(sb + q * c.counts.block, c.counts.block, ncclFloat, q, c.comm, st),
             "ncclSend");
          ck(ncclRecv(rb + q * c.counts.block, c.counts.block, ncclFloat, q, c.comm, st),
             "ncclRecv");
        }
        ck(ncclGroupEnd(), "ncclGroupEnd");
        break;
      case Coll::Broadcast:
        ck(ncclBroadcast(rb, rb, c.counts.recv, ncclFloat, 0, c.comm, st), "ncclBroadcast");
        break;
    }
  }

  const Program& p_;
  int rank_ = 0;
  const RankClass* cls_ = nullptr;
  ncclComm_t world_ = nullptr;
  std::map<std::pair<int, int>, ncclComm_t> comms_;
  cudaStream_t streams_[kNumStreams] = {};
  cublasHandle_t blas_ = nullptr;
  std::vector<GpuCommOp> co_;
  void *a_ = nullptr, *b_ = nullptr, *c_ = nullptr, *src_ = nullptr, *dst_ = nullptr;
  void* send_[kNumStreams] = {};
  void* recv_[kNumStreams] = {};
  std::vector<void*> patterns_;
  std::vector<std::size_t> pattern_bytes_;
  std::vector<cudaEvent_t> start_, end_;
  cudaEvent_t t0_ = nullptr;
  ExecType type_ = ExecType::BF16;
};

}  // namespace

ReplayResult cuda::replay(const Session& s, const Program& p, const ReplayOptions& o,
                          Watchdog* wd) {
  GpuReplay rep(s, p);
  const std::size_t n = rep.cls().ops.size();
  ReplayResult res;
  res.device = "gpu";
  int v = 0;
  ncclGetVersion(&v);
  res.compute_library = "cuBLAS " + std::to_string(CUBLAS_VER_MAJOR) + "." +
                        std::to_string(CUBLAS_VER_MINOR) + "." + std::to_string(CUBLAS_VER_PATCH);
  res.comm_library = cuda::nccl_version_string();
  res.world = s.size();
  res.warmup = o.warmup;
  res.iterations = std::max(1, o.iterations);
  std::int64_t checked = 0, wrong = 0;
  if (wd) wd->kick("GPU replay start");
  if (o.check) {
    std::vector<std::vector<float>> staged(n);
    s.barrier();
    rep.run(true, &staged);
    wrong = rep.verify(staged, checked);
  }
  for (int w = 0; w < o.warmup; ++w) {
    s.barrier();
    rep.run(false, nullptr);
    if (wd) wd->kick("GPU replay warm-up");
  }
  std::vector<double> start(n), end(n);
  auto iterate = [&] {
    auto t0 = std::chrono::steady_clock::now();
    rep.run(false, nullptr);
    double mine_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (wd) wd->kick("GPU replay");
    rep.times(start, end);
    return mine_s;
  };
  timed_iterations(s, rep.cls().stage, iterate, start, end, checked, wrong, res);
  return res;
}

}  // namespace tutti::exec
