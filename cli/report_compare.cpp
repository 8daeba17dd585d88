#include "report_compare.hpp"

namespace tutti::cli {

// The comparison runs the real engine on each cluster; until `simulate(workload, cluster, layout,
// options)` and the cluster loader are in main, it refuses rather than invent numbers.
int run_compare(const Globals&, const CompareOptions&, const std::function<int(const reports::Report&)>&) {
  return not_landed("'tutti report compare' (it needs the simulation engine and cluster files)", 5);
}

}  // namespace tutti::cli
