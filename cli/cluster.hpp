#pragma once
// `tutti cluster`'s options, and the trace sizing that `tutti plan --jobs` reaches too.
#include <string>
#include <vector>

#include "common.hpp"

namespace tutti::cli {

struct ClusterOptions {
  std::string cluster, jobs, synthetic, csv, html;
  std::string scheduler = "easy-backfill", placement = "topology", alloc = "node",
              engine = "analytic";
  std::string calibration, repair = "4h", checkpoint_interval = "young", checkpoint_write = "60s",
                           restart;
  std::string reliability = "llama3", fair_share_by = "user";
  std::vector<std::string> schedulers, placements;  // compare
  std::string p90_wait;                             // size
  int max_nodes = 0;                                // size
  bool no_failures = false, no_interference = false, elastic = false;
  int processors_per_gpu = 1, backfill_depth = 500, timeline_points = 200;
};

/// `tutti cluster size`: the smallest node count of `o.cluster` (--set nodes=N) whose run of the
/// trace meets `o.p90_wait`. Returns kOk with the answer, kNo when --max-nodes is not enough.
int run_cluster_size(const Globals& g, const ClusterOptions& o);

}  // namespace tutti::cli
