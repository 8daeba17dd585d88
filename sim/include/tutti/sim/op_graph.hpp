#pragma once
// The op dependency graph of a rank class and the ready list that walks it: the one op-completion
// loop of the discrete-event engines. The native engine (engine.cpp) and the SimGrid engine
// (simgrid/runner.cpp) both build a class's graph with build_op_graph, count an op's dependencies
// down with ReadyOps::release, start ready ops with ReadyOps::drain and, when an op completes,
// release what waits on it with release_successors. So the two engines cannot disagree on when an
// op may start.
#include <cstdint>
#include <vector>

#include "tutti/core/error.hpp"
#include "tutti/models/program.hpp"
#include "tutti/sim/attribution.hpp"

namespace tutti {

/// What every timeline of one rank class shares, per op: its completion successors (the ops that
/// list it as a dependency, CSR form), the next op on its stream (-1 none), its indegree before
/// the run (dependencies + stream predecessor) and the occurrence index of its name in the class
/// (how collectives of the same name are matched across classes). done_next: the stream successor
/// that the op's completion releases: stream_next, except -1 for a send/recv (those release their
/// stream when they are issued, so that a pipeline stage can post its next message).
struct OpGraph {
  std::vector<std::uint32_t> succ_off, succ;
  std::vector<std::int32_t> stream_next, done_next;
  std::vector<std::uint32_t> indeg0, occurrence;
};

/// The graph of `rc`. Throws InternalError for a dependency range out of bounds or an op that
/// depends on a later op.
OpGraph build_op_graph(const RankClass& rc);

/// Calls release(j) for each op j that waits for op `i` of g's class to complete: its successors,
/// then the next op of its stream unless op `i` is a send/recv (OpGraph::done_next).
template <class Release>
void release_successors(const OpGraph& g, std::uint32_t i, Release&& release) {
  for (std::uint32_t k = g.succ_off[i]; k < g.succ_off[i + 1]; ++k) release(g.succ[k]);
  if (g.done_next[i] >= 0) release(static_cast<std::uint32_t>(g.done_next[i]));
}

/// The ops whose dependencies are all met, started last in, first out (seed it in reverse program
/// order so that the ops start in program order). `Key` names an op in the engine's terms
/// (class or rank, op index).
template <class Key>
class ReadyOps {
 public:
  void push(Key k) { ready_.push_back(k); }

  /// Counts down one dependency of op `k` (whose remaining count is `indeg`); the op is ready when
  /// none is left. `who` names the engine in the InternalError of an underflow.
  void release(std::uint32_t& indeg, Key k, const char* who) {
    if (indeg == 0) throw InternalError(std::string(who) + ": dependency count underflow");
    if (--indeg == 0) ready_.push_back(k);
  }

  /// Starts ready ops (start(key)) until none is left; start may make more ops ready.
  template <class Start>
  void drain(Start&& start) {
    while (!ready_.empty()) {
      Key k = ready_.back();
      ready_.pop_back();
      start(k);
    }
  }

  /// The list itself, for engines that seed it in bulk.
  std::vector<Key>& list() { return ready_; }

 private:
  std::vector<Key> ready_;
};

}  // namespace tutti
