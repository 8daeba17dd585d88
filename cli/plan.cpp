// tutti plan: Plan a hardware purchase for a training deadline and budget.
#include "common.hpp"

namespace tutti::cli {

void setup_plan(CLI::App& app, Globals& g) {
  auto* sub = app.add_subcommand("plan", "Plan a hardware purchase for a training deadline and budget");
  sub->allow_extras();
  sub->callback([&g] { g.run = [] { return not_landed("'tutti plan'", 8); }; });
}

}  // namespace tutti::cli
