// tutti validate: compare predictions with measurements.
//   --cases FILE        published measurements (tests/validation/published-public.json form)
#include <nlohmann/json.hpp>

#include "common.hpp"
#include "tutti/sim/validation.hpp"

namespace tutti::cli {

namespace {
struct ValidateArgs {
  std::string cases;
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
  sub->add_option("--cases", a->cases,
                  "Published measurements to predict (e.g. tests/validation/published-public.json)")
      ->check(CLI::ExistingFile);
  sub->add_option("--engine", a->options.engine, "Engine for training cases")
      ->check(CLI::IsMember({"native", "analytic"}));
  sub->add_option("--calibration", a->options.calibration, "Calibration profile (JSON)");
  sub->add_option("--only", a->options.only, "Only cases whose id contains this text");
  sub->add_option("--format", a->format, "Output format")
      ->check(CLI::IsMember({"table", "md", "json"}));
  sub->callback([&g, a] {
    g.run = [&g, a] {
      if (a->cases.empty()) {
        std::fprintf(stderr, "tutti validate: give --cases FILE\n");
        return static_cast<int>(kUsage);
      }
      return run_validate_cases(*a, g);
    };
  });
}

}  // namespace tutti::cli
