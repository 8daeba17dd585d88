// Collective microbenchmarks over NCCL (nccl-tests conventions, see bench.hpp).
#include <algorithm>
#include <vector>

#include "../replay_common.hpp"
#include "cuda_common.hpp"
#include "tutti/exec/bench.hpp"
#include "tutti/exec/session.hpp"

namespace tutti::exec {

using cuda::ck;

namespace {
void launch(CollOp op, const CollCounts& c, int r, int n, const float* send, float* recv,
            ncclComm_t comm, cudaStream_t st) {
  switch (op) {
    case CollOp::AllReduce:
      ck(ncclAllReduce(send, recv, c.send, ncclFloat, ncclSum, comm, st), "ncclAllReduce");
      break;
    case CollOp::AllGather:
      ck(ncclAllGather(send, recv, c.block, ncclFloat, comm, st), "ncclAllGather");
      break;
    case CollOp::ReduceScatter:
      ck(ncclReduceScatter(send, recv, c.block, ncclFloat, ncclSum, comm, st), "ncclReduceScatter");
      break;
    case CollOp::AllToAll:
      ck(ncclGroupStart(), "ncclGroupStart");
      for (int p = 0; p < n; ++p) {
        ck(ncclSend(send + p * c.block, c.block, ncclFloat, p, comm, st), "ncclSend");
        ck(ncclRecv(recv + p * c.block, c.block, ncclFloat, p, comm, st), "ncclRecv");
      }
      ck(ncclGroupEnd(), "ncclGroupEnd");
      break;
    case CollOp::SendRecv:
      ck(ncclGroupStart(), "ncclGroupStart");
      ck(ncclSend(send, c.send, ncclFloat, (r + 1) % n, comm, st), "ncclSend");
      ck(ncclRecv(recv, c.recv, ncclFloat, (r - 1 + n) % n, comm, st), "ncclRecv");
      ck(ncclGroupEnd(), "ncclGroupEnd");
      break;
  }
}
}  // namespace

CollBenchResult cuda::bench_collective(const Session& s, const CollBenchOptions& o, Watchdog* wd) {
  CollBenchResult res = coll_bench_result(s, o, "nccl");
  cuda::select_device();
  const int n = s.size(), r = s.rank();
  ncclComm_t comm = cuda::world_nccl_comm();
  cudaStream_t st;
  ck(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "cudaStreamCreate");
  const std::size_t max_elems =
      static_cast<std::size_t>(o.max_bytes / 4) + static_cast<std::size_t>(n);
  float *send = nullptr, *recv = nullptr;
  ck(cudaMalloc(&send, max_elems * 4), "cudaMalloc");
  ck(cudaMalloc(&recv, max_elems * 4), "cudaMalloc");
  ck(cudaMemset(send, 0, max_elems * 4), "cudaMemset");
  ck(cudaMemset(recv, 0, max_elems * 4), "cudaMemset");
  std::vector<float> host(max_elems);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (double size = o.min_bytes; size <= o.max_bytes;
       size = o.factor > 1 ? size * o.factor : size + o.step_bytes) {
    auto elems = static_cast<std::int64_t>(size / 4);
    if (elems < (o.op == CollOp::AllReduce || o.op == CollOp::SendRecv ? 1 : n)) continue;
    CollCounts c =
        o.op == CollOp::SendRecv ? p2p_counts(size) : coll_counts(*to_coll(o.op), size, n);
    CollPoint p;
    p.count = o.op == CollOp::AllGather || o.op == CollOp::ReduceScatter ? c.block : c.send;
    p.size_bytes = 4.0 * static_cast<double>(o.op == CollOp::AllGather ? c.recv : c.send);
    std::int64_t wrong = -1;
    if (o.check) {
      if (o.op == CollOp::SendRecv)
        fill_p2p(host.data(), c.send, r, 0);
      else
        fill_coll(*to_coll(o.op), c, r, n, host.data());
      ck(cudaMemcpy(send, host.data(), static_cast<std::size_t>(c.send) * 4,
                    cudaMemcpyHostToDevice),
         "cudaMemcpy");
      launch(o.op, c, r, n, send, recv, comm, st);
      ck(cudaStreamSynchronize(st), "cudaStreamSynchronize");
      ck(cudaMemcpy(host.data(), recv, static_cast<std::size_t>(c.recv) * 4,
                    cudaMemcpyDeviceToHost),
         "cudaMemcpy");
      wrong = o.op == CollOp::SendRecv ? verify_p2p(host.data(), c.recv, (r - 1 + n) % n, 0)
                                       : verify_coll(*to_coll(o.op), c, r, n, host.data());
    }
    for (int i = 0; i < o.warmup; ++i) launch(o.op, c, r, n, send, recv, comm, st);
    ck(cudaStreamSynchronize(st), "cudaStreamSynchronize");
    if (wd) wd->kick("NCCL bench warm-up");
    s.barrier();
    cudaEventRecord(e0, st);
    for (int i = 0; i < o.iters; ++i) launch(o.op, c, r, n, send, recv, comm, st);
    cudaEventRecord(e1, st);
    ck(cudaEventSynchronize(e1), "cudaEventSynchronize");
    if (wd) wd->kick("NCCL bench");
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    finish_coll_point(s, o, ms * 1e-3 / std::max(1, o.iters), wrong, p);
    res.points.push_back(p);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaFree(send);
  cudaFree(recv);
  ncclCommDestroy(comm);
  cudaStreamDestroy(st);
  return res;
}

}  // namespace tutti::exec
