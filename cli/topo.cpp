// tutti topo: Describe a cluster: switches, bisection, bill of materials; export SimGrid platforms.
#include "common.hpp"

namespace tutti::cli {

void setup_topo(CLI::App& app, Globals& g) {
  auto* sub = app.add_subcommand("topo", "Describe a cluster: switches, bisection, bill of materials; export SimGrid platforms");
  sub->allow_extras();
  sub->callback([&g] { g.run = [] { return not_landed("'tutti topo'", 4); }; });
}

}  // namespace tutti::cli
