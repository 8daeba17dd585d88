// tutti validate: compare predictions with measurements.
//   --cases FILE [--cases FILE2]  published measurements (tests/validation/published-public.json
//   form)
//   --live / --measurements FILE  a live replay or recorded measurements (cli/validate_live.cpp)
#include <nlohmann/json.hpp>

#include "common.hpp"
#include "tutti/serve/validation.hpp"
#include "tutti/validation/validation.hpp"
#include "validate_live.hpp"

namespace tutti::cli {

namespace {
struct ValidateArgs {
  std::vector<std::string> cases;
  std::string format = "table";
  ValidationOptions options;
};

int run_validate_cases(const ValidateArgs& a, const Globals& g) {
  ValidationReport r = validate_cases(a.cases, a.options);
  if (g.json || a.format == "json") {
    emit_json(g, to_json(r));
  } else {
    emit(g, to_table(r, a.format == "md"));
  }
  return kOk;
}
}  // namespace

void setup_validate(CLI::App& app, Globals& g) {
  auto* sub = app.add_subcommand(
      "validate", "Compare predictions with measurements (published cases or live runs)");
  auto a = std::make_shared<ValidateArgs>();
  sub->add_option(
         "--cases", a->cases,
         "Published measurements to predict (e.g. tests/validation/published-public.json); "
         "repeatable: the files are read and scored together (case ids unique across them)")
      ->check(CLI::ExistingFile)
      ->take_all();
  sub->add_option("--engine", a->options.engine, "Engine for training cases (--cases)")
      ->check(CLI::IsMember({"native", "analytic"}));
  sub->add_option("--only", a->options.only, "Only cases whose id contains this text (--cases)");
  sub->add_option("--format", a->format, "Output format of --cases")
      ->check(CLI::IsMember({"table", "md", "json"}));
  setup_validate_live(sub, g);  // --live, --measurements (cli/validate_live.cpp)
  sub->callback([&g, a] {
    if (validate_live_selected()) {
      g.run = [&g] { return run_validate_live_selected(g); };
      return;
    }
    g.run = [&g, a] {
      if (a->cases.empty()) {
        std::fprintf(stderr, "tutti validate: give --cases FILE, --live or --measurements FILE\n");
        return static_cast<int>(kUsage);
      }
      a->options.calibration = validate_calibration();
      a->options.serving = serve::predict_validation_case;  // serving cases: the serve simulator
      return run_validate_cases(*a, g);
    };
  });
}

}  // namespace tutti::cli
