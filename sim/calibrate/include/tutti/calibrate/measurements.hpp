#pragma once
// Measurement documents (what `tutti exec bench`, `tutti exec replay` and `tutti serve replay`
// write) as calibration reads them: through their schema, schemas/measurements.schema.json
// (embedded at build time), never through exec/'s headers, so that no sim/ library includes exec/.
// A document is checked against the schema first (an InputError naming the file and the key path
// of the first violation, as result readers do); then only what the fits use is taken from it.
// exec/'s strict reader (exec/include/tutti/exec/measurements.hpp) and the schema are kept in
// agreement by tests/exec/measurements_test.cpp.
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tutti::calibrate {

/// One collective sweep (`tutti exec bench --op`): its points as (size in bytes, mean time in s).
struct CollectiveSweep {
  std::string op;       ///< "all_reduce", "all_gather", "reduce_scatter", "alltoall", "sendrecv"
  std::string backend;  ///< "mpi" or "nccl"
  std::string tier;     ///< "intra_node" or "inter_node"
  int ranks = 1, hosts = 1;
  std::vector<std::pair<double, double>> points;  ///< (size_bytes, time_s)
};

/// One GEMM of a compute sweep (`tutti exec bench --gemm`).
struct GemmPoint {
  std::int64_t m = 0, n = 0, k = 0;
  std::string type;          ///< "fp64", "fp32", "tf32", "bf16", "fp16"
  double time_median_s = 0;  ///< Median over iterations, mean over ranks.
};

/// One copy of a compute sweep.
struct CopyPoint {
  double bytes = 0, time_median_s = 0;
};

struct ComputeSweep {
  std::string device;  ///< "cpu" or "gpu"
  std::vector<GemmPoint> gemm;
  std::vector<CopyPoint> membound;
};

/// One op of a replayed Program's stage 0 with its time averaged over the stage's ranks.
struct ReplayedOp {
  std::string kind;                             ///< "gemm", "membound", ...
  std::int64_t m = 0, n = 0, k = 0, batch = 0;  ///< GEMM / attention shape (0: none recorded).
  double bytes = 0;                             ///< As recorded (0: not recorded).
  double time_s = 0;
};

/// A replay (`tutti exec replay`, or `tutti serve replay` with its `serve` record).
struct Replay {
  std::string device;  ///< "cpu" or "gpu"
  std::vector<ReplayedOp> ops;
  std::optional<std::string> serve_phase;  ///< "decode" or "prefill" (serve replays only).
  std::string serve_dtype = "bf16";        ///< The serving dtype (bf16 when not recorded).
};

struct Measurements {
  std::string file;
  std::vector<CollectiveSweep> collectives;
  std::optional<ComputeSweep> compute;
  std::optional<Replay> replay;
};

/// schemas/measurements.schema.json as (file name, text), embedded at build time
/// (cmake/embed_files.cmake).
const std::vector<std::pair<std::string, std::string>>& embedded_measurement_schema();
/// The same, parsed once.
const nlohmann::json& measurements_schema();

/// Reads a parsed measurement document named `file` (in messages). Throws InputError (file, key
/// path, found, expected) when it breaks the schema, has no measurement section, or a replay rank
/// records a number of op times other than its stage's op count.
Measurements read_measurements(const nlohmann::json& doc, const std::string& file);
/// Reads a measurement file (core/config.hpp Doc::load: strict JSON text, regular files only).
Measurements load_measurements(const std::string& path);

}  // namespace tutti::calibrate
