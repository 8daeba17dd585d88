#pragma once
// `tutti report compare`: runs the same workload on each cluster with the real engine and
// collects the comparison document that reports::build_compare_report() renders.
#include <functional>
#include <string>
#include <vector>

#include "common.hpp"
#include "tutti/reports/document.hpp"

namespace tutti::cli {

struct CompareOptions {
  std::string workload;
  std::vector<std::string> clusters;
  std::string parallel;                           ///< --parallel; empty = the workload's layout.
  std::vector<double> oversubscription{1, 2, 4};  ///< Ratios to sweep; {0} = no sweep.
  std::string engine = "native";
  std::string prices;  ///< --prices FILE: the user's prices on every cluster (prices.hpp).
  /// --variant "LABEL: --set K=V --fail ... --fail-rate ...": each cluster again with these
  /// settings (routing modes, failure scenarios), as one more architecture "NAME [LABEL]".
  std::vector<std::string> variants;
};

/// Simulates, builds the report (with inputs echoed and the reproducing command) and hands it
/// to `emit`. Returns emit's code, or 1 when no architecture could be simulated (the report
/// is still written and says why). Throws InputError for unreadable inputs.
int run_compare(const Globals& g, const CompareOptions& o,
                const std::function<int(const reports::Report&)>& emit);

}  // namespace tutti::cli
