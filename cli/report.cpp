// tutti report: Write reports comparing network architectures or rendering a plan.
#include "common.hpp"

namespace tutti::cli {

void setup_report(CLI::App& app, Globals& g) {
  auto* sub = app.add_subcommand("report", "Write reports comparing network architectures or rendering a plan");
  sub->allow_extras();
  sub->callback([&g] { g.run = [] { return not_landed("'tutti report'", 9); }; });
}

}  // namespace tutti::cli
