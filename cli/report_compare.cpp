#include "report_compare.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#if __has_include("tutti/sim/engine.hpp") && __has_include(                         \
                                                 "tutti/topologies/cluster.hpp") && \
                                                 __has_include("tutti/models/workload.hpp")
#define TUTTI_REPORT_HAVE_ENGINE 1
#else
#define TUTTI_REPORT_HAVE_ENGINE 0
#endif

namespace tutti::cli {

#if !TUTTI_REPORT_HAVE_ENGINE
int run_compare(const Globals&, const CompareOptions&,
                const std::function<int(const reports::Report&)>&) {
  return not_landed("'tutti report compare' (it needs the simulation engine and clusters)", 5);
}
#endif

}  // namespace tutti::cli
