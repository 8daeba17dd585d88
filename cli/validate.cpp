// tutti validate: Compare predictions with measurements (published cases or live runs).
#include "common.hpp"
#include "validate_live.hpp"

namespace tutti::cli {

void setup_validate(CLI::App& app, Globals& g) {
  auto* sub = app.add_subcommand("validate", "Compare predictions with measurements (published cases or live runs)");
  setup_validate_live(sub, g);  // --live, --measurements (cli/validate_live.cpp)
  sub->callback([&g] {
    if (validate_live_selected()) {
      g.run = [&g] { return run_validate_live_selected(g); };
      return;
    }
    g.run = [] { return not_landed("'tutti validate --cases'", 11); };
  });
}

}  // namespace tutti::cli
