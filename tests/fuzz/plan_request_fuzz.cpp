// Plan requests: parse and echo (the search itself is covered by the plan tests).
#include <nlohmann/json.hpp>

#include "fuzz_common.hpp"
#include "tutti/core/config.hpp"
#include "tutti/core/json_text.hpp"
#include "tutti/plan/planner.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tutti::fuzz::run(data, size, [](const std::string& text) {
    using namespace tutti;
    Doc d = Doc::parse(text, "fuzz.json");
    PlanRequest r = parse_plan_request(d.json(), "fuzz.json", TUTTI_SOURCE_DIR);
    nlohmann::json echo;
    to_json(echo, r);
    (void)write_json_text(echo);
  });
}
