// Program replay on CPU ranks: MPI (nonblocking, one communicator per stream and group) and
// OpenBLAS. See replay.hpp for the contract.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "replay_common.hpp"
#include "tutti/core/error.hpp"
#include "tutti/exec/device.hpp"
#include "tutti/exec/replay.hpp"
#include "tutti/exec/session.hpp"

namespace tutti::exec {

namespace {

struct CommOp {
  MPI_Comm comm = MPI_COMM_NULL;
  int group_size = 1, group_index = 0;  // this rank in the group (ring order)
  int peer = -1;                        // Send/Recv: world rank of the peer
  int tag = 0;
  CollCounts counts;
};

class CpuReplay {
 public:
  CpuReplay(const Session& s, const Program& p, Watchdog* wd) : s_(s), p_(p), wd_(wd) {
    const Layout& l = p.layout;
    rank_ = s.rank();
    RankCoords c = coords_of(l, rank_);
    cls_ = &class_of_stage(p, c.pp);
    dev_ = make_cpu_device();
    build_comms(c);
    reserve();
    stream_ops_.resize(kNumStreams);
    for (std::uint32_t i = 0; i < cls_->ops.size(); ++i)
      stream_ops_[static_cast<int>(cls_->ops[i].stream)].push_back(i);
  }

  ~CpuReplay() {
    for (auto& [key, comm] : comms_) MPI_Comm_free(&comm);
    if (p2p_ != MPI_COMM_NULL) MPI_Comm_free(&p2p_);
  }

  const RankClass& cls() const { return *cls_; }
  std::string library() const { return dev_->library(); }

  /// One iteration. `check`: fill and verify communication buffers. Records into `start`/`end`.
  /// Stream semantics as the engines use them: a collective holds its stream until it completes;
  /// a send/recv is issued and its stream moves on (NCCL group-call style), while ops that
  /// depend on it wait for its completion.
  void run(bool check, std::vector<double>& start, std::vector<double>& end, double t0,
           std::int64_t& checked, std::int64_t& wrong) {
    const auto& ops = cls_->ops;
    const std::size_t n = ops.size();
    std::vector<char> state(n, 0);  // 0 waiting, 1 in flight, 2 done
    std::vector<std::size_t> head(kNumStreams, 0);
    active_.clear();
    areqs_.clear();
    std::size_t done = 0;
    auto ready = [&](std::uint32_t i) {
      const Op& op = ops[i];
      for (std::uint32_t d = 0; d < op.dep_count; ++d)
        if (state[cls_->deps[op.dep_begin + d]] != 2) return false;
      return true;
    };
    auto complete = [&](std::uint32_t i) {
      state[i] = 2;
      end[i] = MPI_Wtime() - t0;
      ++done;
      const OpKind k = ops[i].kind;
      if (k == OpKind::Collective) ++head[static_cast<int>(ops[i].stream)];
      if (check && (k == OpKind::Collective || k == OpKind::Recv)) {
        wrong += verify(i);
        ++checked;
      }
      if (wd_) wd_->kick("replay (waiting for a collective or p2p)");
    };
    auto reap = [&](int count, const int* idx) {
      std::vector<std::uint32_t> finished;
      for (int c = 0; c < count; ++c) finished.push_back(active_[static_cast<std::size_t>(idx[c])]);
      // Compact the active lists (completed requests are MPI_REQUEST_NULL now).
      std::size_t w = 0;
      for (std::size_t r = 0; r < active_.size(); ++r)
        if (areqs_[r] != MPI_REQUEST_NULL) {
          active_[w] = active_[r];
          areqs_[w] = areqs_[r];
          ++w;
        }
      active_.resize(w);
      areqs_.resize(w);
      for (auto i : finished) complete(i);
    };
    std::vector<int> idx;
    while (done < n) {
      bool progressed = false;
      // 1. Issue every ready communication head (cheap, non-blocking).
      for (int st = 1; st < kNumStreams; ++st) {
        while (head[st] < stream_ops_[st].size()) {
          std::uint32_t i = stream_ops_[st][head[st]];
          if (state[i] != 0 || !ready(i)) break;
          if (check) fill(i);
          start[i] = MPI_Wtime() - t0;
          MPI_Request req = MPI_REQUEST_NULL;
          post(i, &req);
          state[i] = 1;
          active_.push_back(i);
          areqs_.push_back(req);
          progressed = true;
          if (ops[i].kind == OpKind::Collective) break;  // holds its stream until done
          ++head[st];                                    // send/recv: the stream moves on
        }
      }
      // 2. Progress and reap communication.
      if (!active_.empty()) {
        int count = 0;
        idx.resize(active_.size());
        MPI_Testsome(static_cast<int>(areqs_.size()), areqs_.data(), &count, idx.data(),
                     MPI_STATUSES_IGNORE);
        if (count > 0 && count != MPI_UNDEFINED) {
          reap(count, idx.data());
          progressed = true;
        }
      }
      if (progressed) continue;  // issue what just became ready before computing
      // 3. Run the compute head when ready.
      if (head[0] < stream_ops_[0].size()) {
        std::uint32_t i = stream_ops_[0][head[0]];
        if (ready(i)) {
          start[i] = MPI_Wtime() - t0;
          compute(ops[i]);
          ++head[0];
          complete(i);
          continue;
        }
      }
      // 4. Nothing to do but wait for communication.
      check_internal(
          !active_.empty(),
          "replay: no op is ready and none in flight (the Program's dependencies form a cycle)");
      int count = 0;
      idx.resize(active_.size());
      MPI_Waitsome(static_cast<int>(areqs_.size()), areqs_.data(), &count, idx.data(),
                   MPI_STATUSES_IGNORE);
      if (count > 0 && count != MPI_UNDEFINED) reap(count, idx.data());
    }
  }

 private:
  void build_comms(const RankCoords& c) {
    (void)c;
    const Layout& l = p_.layout;
    // Every (stream, group) pair used by any class, in a fixed order: MPI_Comm_split is
    // collective over the world, so all ranks split the same pairs in the same order.
    std::set<std::pair<int, int>> pairs;
    bool p2p = false;
    for (const auto& k : p_.classes)
      for (const auto& op : k.ops) {
        if (op.kind == OpKind::Collective)
          pairs.insert({static_cast<int>(op.stream), static_cast<int>(op.group)});
        if (op.kind == OpKind::Send || op.kind == OpKind::Recv) p2p = true;
      }
    for (auto [st, g] : pairs) {
      std::vector<int> ranks = group_ranks(l, rank_, static_cast<GroupDim>(g));
      int color = *std::min_element(ranks.begin(), ranks.end());
      int key = static_cast<int>(std::find(ranks.begin(), ranks.end(), rank_) - ranks.begin());
      MPI_Comm comm = MPI_COMM_NULL;
      MPI_Comm_split(MPI_COMM_WORLD, color, key, &comm);
      comms_[{st, g}] = comm;
    }
    if (p2p) MPI_Comm_dup(MPI_COMM_WORLD, &p2p_);
    int* ub = nullptr;
    int flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    tag_ub_ = flag && ub ? *ub : 32767;
    // Per op communication parameters.
    const auto& ops = cls_->ops;
    comm_ops_.resize(ops.size());
    RankCoords me = coords_of(l, rank_);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      CommOp& co = comm_ops_[i];
      if (op.kind == OpKind::Collective) {
        co.comm = comms_.at({static_cast<int>(op.stream), static_cast<int>(op.group)});
        MPI_Comm_size(co.comm, &co.group_size);
        MPI_Comm_rank(co.comm, &co.group_index);
        if (static_cast<std::uint32_t>(co.group_size) != op.group_size)
          throw InternalError("replay: op '" + p_.names[op.name] + "' names a group of " +
                              std::to_string(op.group_size) + " ranks but group_ranks gives " +
                              std::to_string(co.group_size));
        co.counts = coll_counts(op.coll, op.bytes, co.group_size);
      } else if (op.kind == OpKind::Send || op.kind == OpKind::Recv) {
        int peer_stage = me.pp + op.peer_delta;
        if (peer_stage < 0 || peer_stage >= l.pp)
          throw InternalError("replay: op '" + p_.names[op.name] + "' sends to stage " +
                              std::to_string(peer_stage));
        co.comm = p2p_;
        co.peer = rank_of(l, me.tp, me.cp, me.dp, peer_stage);
        co.tag = static_cast<int>(op.tag % static_cast<std::uint32_t>(tag_ub_));
        co.counts = p2p_counts(op.bytes);
      }
    }
  }

  void reserve() {
    std::int64_t mk = 1, kn = 1, mn = 1;
    double mb = 0;
    std::vector<std::int64_t> send(kNumStreams, 1), recv(kNumStreams, 1);
    for (std::size_t i = 0; i < cls_->ops.size(); ++i) {
      const Op& op = cls_->ops[i];
      switch (op.kind) {
        case OpKind::Gemm:
          mk = std::max(mk, op.m * op.k);
          kn = std::max(kn, op.k * op.n);
          mn = std::max(mn, op.m * op.n);
          break;
        case OpKind::Attention:
          mk = std::max(mk, std::max(op.m * op.k, op.m * op.n));
          kn = std::max(kn, op.k * op.n);
          mn = std::max(mn, std::max(op.m * op.n, op.m * op.k));
          break;
        case OpKind::MemBound:
          mb = std::max(mb, op.bytes);
          break;
        case OpKind::Send:
        case OpKind::Recv:
          break;
        case OpKind::Collective: {
          int st = static_cast<int>(op.stream);
          send[st] = std::max(send[st], comm_ops_[i].counts.send);
          recv[st] = std::max(recv[st], comm_ops_[i].counts.recv);
        }
      }
    }
    dev_->reserve(mk, kn, mn, mb);
    p2p_buf_.resize(cls_->ops.size());
    for (std::size_t i = 0; i < cls_->ops.size(); ++i)
      if (cls_->ops[i].kind == OpKind::Send || cls_->ops[i].kind == OpKind::Recv)
        p2p_buf_[i].assign(static_cast<std::size_t>(comm_ops_[i].counts.send),
                           1.0f);  // touched up front
    send_.resize(kNumStreams);
    recv_.resize(kNumStreams);
    for (int st = 0; st < kNumStreams; ++st) {
      send_[st].assign(static_cast<std::size_t>(send[st]), 1.0f);  // allocated and touched up front
      recv_[st].assign(static_cast<std::size_t>(recv[st]), 0.0f);
    }
  }

  void compute(const Op& op) {
    switch (op.kind) {
      case OpKind::Gemm:
        dev_->gemm(op.m, op.n, op.k, op.batch, ExecType::FP32);
        break;
      case OpKind::Attention: {
        std::int64_t reps = attention_repeats(op);
        for (std::int64_t b = 0; b < reps; ++b) {
          dev_->gemm(op.m, op.n, op.k, 1, ExecType::FP32);  // S = Q K^T
          dev_->gemm(op.m, op.k, op.n, 1, ExecType::FP32);  // O = P V
        }
        break;
      }
      case OpKind::MemBound:
        if (op.bytes > 0) dev_->membound(op.bytes);
        break;
      default:
        throw InternalError("replay: a communication op on the compute stream");
    }
  }

  void post(std::uint32_t i, MPI_Request* req) {
    const Op& op = cls_->ops[i];
    const CommOp& co = comm_ops_[i];
    const int st = static_cast<int>(op.stream);
    float* sb = send_[st].data();
    float* rb = recv_[st].data();
    const int blk = static_cast<int>(co.counts.block);
    switch (op.kind) {
      case OpKind::Send:
        MPI_Isend(p2p_buf_[i].data(), static_cast<int>(co.counts.send), MPI_FLOAT, co.peer, co.tag,
                  co.comm, req);
        return;
      case OpKind::Recv:
        MPI_Irecv(p2p_buf_[i].data(), static_cast<int>(co.counts.recv), MPI_FLOAT, co.peer, co.tag,
                  co.comm, req);
        return;
      case OpKind::Collective:
        break;
      default:
        throw InternalError("replay: post of a compute op");
    }
    switch (op.coll) {
      case Coll::AllReduce:
        MPI_Iallreduce(sb, rb, static_cast<int>(co.counts.send), MPI_FLOAT, MPI_SUM, co.comm, req);
        break;
      case Coll::AllGather:
        MPI_Iallgather(sb, blk, MPI_FLOAT, rb, blk, MPI_FLOAT, co.comm, req);
        break;
      case Coll::ReduceScatter:
        MPI_Ireduce_scatter_block(sb, rb, blk, MPI_FLOAT, MPI_SUM, co.comm, req);
        break;
      case Coll::AllToAll:
        MPI_Ialltoall(sb, blk, MPI_FLOAT, rb, blk, MPI_FLOAT, co.comm, req);
        break;
      case Coll::Broadcast:
        MPI_Ibcast(rb, static_cast<int>(co.counts.recv), MPI_FLOAT, 0, co.comm, req);
        break;
    }
  }

  void fill(std::uint32_t i) {
    const Op& op = cls_->ops[i];
    const CommOp& co = comm_ops_[i];
    const int st = static_cast<int>(op.stream);
    if (op.kind == OpKind::Send) {
      fill_p2p(p2p_buf_[i].data(), co.counts.send, rank_, co.tag);
    } else if (op.kind == OpKind::Collective) {
      if (op.coll == Coll::Broadcast)
        fill_coll(op.coll, co.counts, co.group_index, co.group_size, recv_[st].data());
      else
        fill_coll(op.coll, co.counts, co.group_index, co.group_size, send_[st].data());
    }
  }

  std::int64_t verify(std::uint32_t i) {
    const Op& op = cls_->ops[i];
    const CommOp& co = comm_ops_[i];
    const int st = static_cast<int>(op.stream);
    if (op.kind == OpKind::Recv)
      return verify_p2p(p2p_buf_[i].data(), co.counts.recv, co.peer, co.tag);
    return verify_coll(op.coll, co.counts, co.group_index, co.group_size, recv_[st].data());
  }

  const Session& s_;
  const Program& p_;
  Watchdog* wd_;
  int rank_ = 0;
  const RankClass* cls_ = nullptr;
  std::unique_ptr<ComputeDevice> dev_;
  std::map<std::pair<int, int>, MPI_Comm> comms_;
  MPI_Comm p2p_ = MPI_COMM_NULL;
  int tag_ub_ = 32767;
  std::vector<CommOp> comm_ops_;
  std::vector<std::vector<std::uint32_t>> stream_ops_;
  std::vector<std::vector<float>> send_, recv_;
  std::vector<std::vector<float>> p2p_buf_;  // one per Send/Recv op: several may be in flight
  std::vector<std::uint32_t> active_;        // ops in flight
  std::vector<MPI_Request> areqs_;           // their requests
};

}  // namespace

ReplayResult replay_cpu(const Session& s, const Program& p, const ReplayOptions& o, Watchdog* wd) {
  check_internal(p.world == s.size(),
                 "replay_cpu: world size differs from the Program (caller must check)");
  CpuReplay rep(s, p, wd);
  const std::size_t n = rep.cls().ops.size();
  ReplayResult res;
  res.device = "cpu";
  res.compute_library = rep.library();
  res.comm_library = "MPI: " + Session::mpi_library_version();
  res.world = s.size();
  res.warmup = o.warmup;
  res.iterations = std::max(1, o.iterations);
  std::vector<double> start(n, 0), end(n, 0);
  std::int64_t checked = 0, wrong = 0;
  if (wd) wd->kick("replay start");
  if (o.check) {
    s.barrier();
    rep.run(true, start, end, MPI_Wtime(), checked, wrong);
  }
  for (int w = 0; w < o.warmup; ++w) {
    s.barrier();
    rep.run(false, start, end, MPI_Wtime(), checked, wrong);
  }
  auto iterate = [&] {
    double t0 = MPI_Wtime();
    rep.run(false, start, end, t0, checked, wrong);
    return MPI_Wtime() - t0;
  };
  timed_iterations(s, rep.cls().stage, iterate, start, end, checked, wrong, res);
  return res;
}

}  // namespace tutti::exec
