// Collective microbenchmarks over MPI (nccl-tests conventions, see bench.hpp).
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "replay_common.hpp"
#include "tutti/core/error.hpp"
#include "tutti/exec/bench.hpp"
#include "tutti/exec/session.hpp"
#include "tutti/models/program.hpp"

namespace tutti::exec {

CollOp parse_coll_op(const std::string& s) {
  if (auto op = parse_enum<CollOp>(s)) return *op;
  throw InputError("--op", "", "\"" + s + "\"", "one of " + enum_names<CollOp>(", "));
}

namespace {

/// Element counts of one point: per-rank send and receive elements, nccl-tests' "count".
struct Counts {
  std::int64_t send = 0, recv = 0, count = 0, block = 0;
};

Counts counts_for(CollOp op, std::int64_t elems, int n) {
  Counts c;
  switch (op) {
    case CollOp::AllReduce:
    case CollOp::SendRecv:
      c.send = c.recv = c.count = elems;
      break;
    case CollOp::AllGather:
      c.block = elems / n;
      c.send = c.block;
      c.recv = c.block * n;
      c.count = c.block;
      break;
    case CollOp::ReduceScatter:
      c.block = elems / n;
      c.send = c.block * n;
      c.recv = c.block;
      c.count = c.block;
      break;
    case CollOp::AllToAll:
      c.block = elems / n;
      c.send = c.recv = c.block * n;
      c.count = c.block * n;
      break;
  }
  return c;
}

double point_size_bytes(CollOp op, const Counts& c) {
  switch (op) {
    case CollOp::AllReduce:
    case CollOp::SendRecv:
      return 4.0 * static_cast<double>(c.send);
    case CollOp::AllGather:
      return 4.0 * static_cast<double>(c.recv);
    case CollOp::ReduceScatter:
      return 4.0 * static_cast<double>(c.send);
    case CollOp::AllToAll:
      return 4.0 * static_cast<double>(c.send);
  }
  return 0;
}

void fill(CollOp op, const Counts& c, int r, int n, float* send) {
  for (std::int64_t i = 0; i < c.send; ++i) {
    switch (op) {
      case CollOp::AllReduce:
      case CollOp::AllGather:
        send[i] = static_cast<float>(r + 1 + i % 3);
        break;
      case CollOp::ReduceScatter:
        send[i] = static_cast<float>(r + 1 + i % 3);
        break;
      case CollOp::AllToAll: {
        std::int64_t j = i / c.block, e = i % c.block;
        send[i] = static_cast<float>(r * n + j + (e % 5) * n * n);
        break;
      }
      case CollOp::SendRecv:
        send[i] = static_cast<float>(r + (i % 3) * n);
        break;
    }
  }
}

std::int64_t verify(CollOp op, const Counts& c, int r, int n, const float* recv) {
  std::int64_t wrong = 0;
  const double tri = n * (n + 1) / 2.0;
  for (std::int64_t i = 0; i < c.recv; ++i) {
    double want = 0;
    switch (op) {
      case CollOp::AllReduce:
        want = tri + static_cast<double>(n) * (i % 3);
        break;
      case CollOp::AllGather: {
        std::int64_t j = i / c.block, e = i % c.block;
        want = static_cast<double>(j + 1 + e % 3);
        break;
      }
      case CollOp::ReduceScatter:
        want = tri + static_cast<double>(n) * ((r * c.block + i) % 3);
        break;
      case CollOp::AllToAll: {
        std::int64_t q = i / c.block, e = i % c.block;
        want = static_cast<double>(q * n + r + (e % 5) * n * n);
        break;
      }
      case CollOp::SendRecv:
        want = static_cast<double>((r - 1 + n) % n + (i % 3) * n);
        break;
    }
    if (static_cast<double>(recv[i]) != want) ++wrong;
  }
  return wrong;
}

// Nonblocking calls completed by MPI_Wait: the same code path (Open MPI's libnbc) as the
// replay, whose collectives are nonblocking so that they can overlap compute.
void run_once(CollOp op, const Counts& c, int r, int n, float* send, float* recv) {
  MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  switch (op) {
    case CollOp::AllReduce:
      MPI_Iallreduce(send, recv, static_cast<int>(c.send), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                     &req[0]);
      break;
    case CollOp::AllGather:
      MPI_Iallgather(send, static_cast<int>(c.block), MPI_FLOAT, recv, static_cast<int>(c.block),
                     MPI_FLOAT, MPI_COMM_WORLD, &req[0]);
      break;
    case CollOp::ReduceScatter:
      MPI_Ireduce_scatter_block(send, recv, static_cast<int>(c.block), MPI_FLOAT, MPI_SUM,
                                MPI_COMM_WORLD, &req[0]);
      break;
    case CollOp::AllToAll:
      MPI_Ialltoall(send, static_cast<int>(c.block), MPI_FLOAT, recv, static_cast<int>(c.block),
                    MPI_FLOAT, MPI_COMM_WORLD, &req[0]);
      break;
    case CollOp::SendRecv:
      MPI_Irecv(recv, static_cast<int>(c.recv), MPI_FLOAT, (r - 1 + n) % n, 7, MPI_COMM_WORLD,
                &req[0]);
      MPI_Isend(send, static_cast<int>(c.send), MPI_FLOAT, (r + 1) % n, 7, MPI_COMM_WORLD, &req[1]);
      break;
  }
  MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
}

}  // namespace

CollBenchResult bench_collective_mpi(const Session& s, const CollBenchOptions& o, Watchdog* wd) {
  CollBenchResult res = coll_bench_result(s, o, "mpi");
  const int n = s.size(), r = s.rank();

  // Buffers for the largest point, allocated and touched once.
  const std::int64_t max_elems = static_cast<std::int64_t>(o.max_bytes / 4) + n;
  std::vector<float> send(static_cast<std::size_t>(max_elems), 1.0f),
      recv(static_cast<std::size_t>(max_elems), 0.0f);

  for (double size = o.min_bytes; size <= o.max_bytes;
       size = o.factor > 1 ? size * o.factor : size + o.step_bytes) {
    Counts c = counts_for(o.op, static_cast<std::int64_t>(size / 4), n);
    if (c.send == 0 && c.recv == 0) continue;  // fewer elements than ranks
    CollPoint p;
    p.count = c.count;
    p.size_bytes = point_size_bytes(o.op, c);
    std::int64_t wrong = -1;
    if (wd) wd->kick("collective bench (entering a size)");  // before any rank can block in it
    if (o.check) {
      fill(o.op, c, r, n, send.data());
      run_once(o.op, c, r, n, send.data(), recv.data());
      wrong = verify(o.op, c, r, n, recv.data());
    }
    for (int i = 0; i < o.warmup; ++i) run_once(o.op, c, r, n, send.data(), recv.data());
    if (wd) wd->kick("collective bench warm-up");
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < o.iters; ++i) {
      run_once(o.op, c, r, n, send.data(), recv.data());
      if (wd) wd->kick("collective bench");
    }
    finish_coll_point(s, o, (MPI_Wtime() - t0) / std::max(1, o.iters), wrong, p);
    res.points.push_back(p);
  }
  return res;
}

}  // namespace tutti::exec
