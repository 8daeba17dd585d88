// tutti validate: Compare predictions with measurements (published cases or live runs).
#include "common.hpp"

namespace tutti::cli {

void setup_validate(CLI::App& app, Globals& g) {
  auto* sub = app.add_subcommand("validate", "Compare predictions with measurements (published cases or live runs)");
  sub->allow_extras();
  sub->callback([&g] { g.run = [] { return not_landed("'tutti validate'", 11); }; });
}

}  // namespace tutti::cli
