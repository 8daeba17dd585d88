// tutti: simulator and capacity planner for GPU clusters that train AI models.
// The only place that maps errors to exit codes: 0 ok, 1 valid "no", 2 usage/input, 70 internal.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <nlohmann/json.hpp>

#include "common.hpp"
#include "tutti/core/error.hpp"
#include "tutti/facility/facility.hpp"

int main(int argc, char** argv) {
  using namespace tutti::cli;
  CLI::App app{
      "tutti: simulate, plan and validate GPU clusters that train AI models.\n"
      "Predicts training time, cost, power and bottlenecks before anything is bought."};
  app.set_version_flag("--version", std::string("tutti ") + TUTTI_VERSION);
  app.require_subcommand(1);
  app.fallthrough();
  Globals g;
  app.add_flag("--json", g.json, "Machine-readable JSON on stdout (diagnostics on stderr)");
  app.add_option("-o,--output", g.output, "Write the main output to this file");
  app.add_flag_callback(
      "-q,--quiet", [&g] { g.verbosity = -1; }, "Only errors on stderr");
  app.add_flag_callback(
      "-v,--verbose", [&g] { ++g.verbosity; }, "More diagnostics on stderr");
  app.add_option("--seed", g.seed, "Seed for every random choice (deterministic output)");
  app.add_option("--set", g.sets, "Override a field of the main input: KEY.PATH=VALUE (repeatable)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);

  setup_simulate(app, g);
  setup_plan(app, g);
  setup_report(app, g);
  setup_topo(app, g);
  setup_workload(app, g);
  setup_exec(app, g);
  setup_calibrate(app, g);
  setup_validate(app, g);
  setup_catalog(app, g);
  setup_serve(app, g);
  setup_cluster(app, g);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? kOk : kUsage;
  }
  try {
    if (!g.run) return not_landed("this subcommand", 2);
    return g.run();
  } catch (const tutti::InputError& e) {
    std::fprintf(stderr, "tutti: error: %s\n", e.what());
    return kUsage;
  } catch (const tutti::NoAnswerError& e) {
    std::fprintf(stderr, "tutti: no answer: %s\n", e.what());
    return kNo;
  } catch (const tutti::InternalError& e) {
    std::fprintf(stderr, "tutti: internal error (a bug, please report it): %s\n", e.what());
    return kInternal;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tutti: internal error (a bug, please report it): %s\n", e.what());
    return kInternal;
  }
}
