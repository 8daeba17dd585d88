// tutti catalog: List and show hardware catalog entries.
#include "common.hpp"

namespace tutti::cli {

void setup_catalog(CLI::App& app, Globals& g) {
  auto* sub = app.add_subcommand("catalog", "List and show hardware catalog entries");
  sub->allow_extras();
  sub->callback([&g] { g.run = [] { return not_landed("'tutti catalog'", 4); }; });
}

}  // namespace tutti::cli
