#pragma once
// Chrome / Perfetto traces of a simulated iteration (JSON trace-event format), and the filters that
// keep one small enough to open: which ranks, which ops, which iterations.
//
// Layout of a trace: one process per traced rank (pid = global rank, named "rank 5: stage 0, tp 5
// cp 0 dp 0 ..."), one track per stream of that rank (compute, comm_tp, ..., named after the
// stream), and the rank's sends and receives on their own tracks per peer stage ("send to stage 1",
// "recv from stage 0"). A track never holds two overlapping slices: a slice that would overlap
// another on its track goes to a further lane of it ("send to stage 1 (2)"), so every track nests.
// Times are whole nanoseconds written as microseconds (ts and dur with three decimals), so slices
// that touch in the simulation touch in the file, with no overlap from rounding.
//
// Ranks of one engine timeline run in lock-step (engine.hpp, symmetry): every traced rank of a
// timeline shows that timeline. The engines simulate one iteration; iteration k of the run is drawn
// as that iteration shifted by k iteration times (time to train assumes the same).
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tutti/models/program.hpp"

namespace tutti {

/// What to trace. Empty lists mean the defaults.
struct TraceFilter {
  /// Inclusive ranges of global ranks. Empty: one rank per engine timeline (its first rank).
  std::vector<std::pair<long long, long long>> ranks;
  /// Op kinds to keep. Empty (and `names` empty): every op.
  std::vector<OpKind> kinds;
  /// Op names to keep ("attn.qkv"), or name prefixes ending in '*' ("moe.*").
  std::vector<std::string> names;
  /// Inclusive ranges of iteration indices (0 = the first). Empty: iteration 0 only.
  std::vector<std::pair<long long, long long>> iterations;
};

/// The trace an engine writes (ProgramSimOptions::trace, SimOptions::trace).
struct TraceOptions {
  std::string path;  ///< Output file; empty = no trace.
  TraceFilter filter;
  /// Above this estimated size the engine refuses to simulate (InputError naming --trace, which
  /// suggests the filters) unless `force`. Bytes.
  double max_bytes = kDefaultMaxBytes;
  bool force = false;
  /// Receives one line with the size estimate before the simulation runs (the CLI prints it on
  /// stderr); may be empty.
  std::function<void(const std::string&)> note;

  static constexpr double kDefaultMaxBytes = 100e6;
};

/// Parses an index list such as "0-7,64" (ranges inclusive, in any order, overlaps allowed) into
/// ranges. Throws InputError naming `flag` for an empty list, a negative or non-numeric bound, or
/// a range whose end is before its start.
std::vector<std::pair<long long, long long>> parse_index_ranges(const std::string& text,
                                                                const std::string& flag);

/// The three trace flags' values (empty strings: that filter's default). `ops` is a comma list of
/// op kinds (gemm, attention, membound, collective, send, recv), the groups "compute"
/// (gemm, attention, membound) and "p2p" (send, recv), and op names or name prefixes ("moe.*").
/// Throws InputError naming --trace-ranks, --trace-ops or --trace-iterations for bad syntax;
/// whether a rank exists or a name occurs in the Program is checked by estimate_trace.
TraceFilter parse_trace_filter(const std::string& ranks, const std::string& ops,
                               const std::string& iterations);

/// One engine timeline and the ranks it stands for: [first_rank, first_rank + nranks).
struct TraceTimeline {
  const RankClass* rc = nullptr;
  int first_rank = 0;
  int nranks = 1;
  const double* start_s = nullptr;  ///< Per op, as OpTimeline (unused by estimate_trace).
  const double* end_s = nullptr;
  const double* rendezvous_s = nullptr;  ///< A communication op's transfer start (-1: none).
};

/// What a filtered trace will hold.
struct TraceEstimate {
  std::uint64_t ranks = 0;   ///< Traced ranks (processes).
  std::uint64_t events = 0;  ///< Op slices.
  double bytes = 0;          ///< Approximate file size.
};

/// Counts what `filter` selects among `timelines` (which must cover every rank of `program`).
/// Throws InputError naming --trace-ranks for a rank outside the program's world, --trace-ops for
/// a name that no op of the program carries, and --trace-iterations for an iteration at or past
/// `run_iterations` (the run's iteration count; 0 = not known, no bound).
TraceEstimate estimate_trace(const Program& program, const std::vector<TraceTimeline>& timelines,
                             const TraceFilter& filter, double run_iterations = 0);

/// Estimates the trace, passes the estimate to options.note, and throws InputError when it is over
/// options.max_bytes and not options.force. Engines call it before they simulate.
void check_trace(const Program& program, const std::vector<TraceTimeline>& timelines,
                 const TraceOptions& options, double run_iterations = 0);

/// Writes the trace of `timelines` (timed: start_s, end_s, rendezvous_s set) with `filter`; the
/// iteration lasts `iteration_s`. Throws InputError when the file cannot be written.
void write_trace(const std::string& path, const Program& program,
                 const std::vector<TraceTimeline>& timelines, const TraceFilter& filter,
                 double iteration_s);

}  // namespace tutti
