#include "tutti/reports/columns.hpp"

#include <doctest/doctest.h>

#include <set>
#include <string>

#include "tutti/core/error.hpp"

using namespace tutti;
using namespace tutti::reports;

TEST_CASE("columns: each key is registered once and names its unit") {
  std::set<std::string_view> keys;
  for (const ColumnDef& c : column_registry()) {
    CAPTURE(c.key);
    CHECK(keys.insert(c.key).second);
    CHECK(!c.label.empty());
    std::string k(c.key);
    auto ends = [&](std::string_view s) { return k.size() >= s.size() && k.ends_with(s); };
    switch (c.unit) {
      case Unit::Seconds:
        CHECK(ends("_s"));
        break;
      case Unit::Usd:
        CHECK(k.find("usd") != std::string::npos);
        break;
      case Unit::Watts:
        CHECK(ends("_W"));
        break;
      case Unit::Joules:
        CHECK(k.find("_J") != std::string::npos);
        break;
      case Unit::Bytes:
        CHECK((ends("_bytes") || ends("_B")));
        break;
      case Unit::Percent:
        CHECK(ends("_pct"));
        break;
      default:
        break;
    }
  }
}

TEST_CASE("columns: a column takes its header and unit from the registry") {
  Column c = column("time_to_train_s", "Before failures");
  CHECK(c.key == "time_to_train_s");
  CHECK(c.label == "Time to train");
  CHECK(c.unit == Unit::Seconds);
  CHECK(c.help == "Before failures");
  Column d = column_as("capex_usd", "Cluster capex");
  CHECK(d.label == "Cluster capex");
  CHECK(d.unit == Unit::Usd);
  CHECK(d.help.empty());
  CHECK_THROWS_AS(column("no_such_column"), InternalError);
}
