// tutti simulate: Simulate a training iteration and the whole run on a cluster.
#include "common.hpp"

namespace tutti::cli {

void setup_simulate(CLI::App& app, Globals& g) {
  auto* sub = app.add_subcommand("simulate", "Simulate a training iteration and the whole run on a cluster");
  sub->allow_extras();
  sub->callback([&g] { g.run = [] { return not_landed("'tutti simulate'", 5); }; });
}

}  // namespace tutti::cli
