// Result documents read by `tutti report plan|render`: plans and comparisons, rendered to
// Markdown and JSON.
#include <nlohmann/json.hpp>

#include "fuzz_common.hpp"
#include "tutti/core/json_text.hpp"
#include "tutti/reports/compare.hpp"
#include "tutti/reports/plan_report.hpp"
#include "tutti/reports/writers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tutti::fuzz::run(data, size, [](const std::string& text) {
    using namespace tutti;
    nlohmann::json j = parse_json_text(text, "fuzz.json");
    reports::Report rep = j.is_object() && j.contains("architectures")
                              ? reports::build_compare_report(j)
                              : reports::build_plan_report(j);
    (void)reports::write(rep, reports::Format::Markdown);
    (void)reports::write(rep, reports::Format::Json);
  });
}
