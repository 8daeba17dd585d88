// tutti workload: Describe a workload: parameters, FLOPs, memory, Program.
#include "common.hpp"

namespace tutti::cli {

void setup_workload(CLI::App& app, Globals& g) {
  auto* sub = app.add_subcommand("workload", "Describe a workload: parameters, FLOPs, memory, Program");
  sub->allow_extras();
  sub->callback([&g] { g.run = [] { return not_landed("'tutti workload'", 3); }; });
}

}  // namespace tutti::cli
