// tutti calibrate: Fit the simulator's parameters to measurements.
#include "common.hpp"

namespace tutti::cli {

void setup_calibrate(CLI::App& app, Globals& g) {
  auto* sub = app.add_subcommand("calibrate", "Fit the simulator's parameters to measurements");
  sub->allow_extras();
  sub->callback([&g] { g.run = [] { return not_landed("'tutti calibrate'", 10); }; });
}

}  // namespace tutti::cli
