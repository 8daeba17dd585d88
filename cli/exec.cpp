// tutti exec: Run a workload for real over MPI/NCCL, or microbenchmarks.
#include "common.hpp"

namespace tutti::cli {

void setup_exec(CLI::App& app, Globals& g) {
  auto* sub = app.add_subcommand("exec", "Run a workload for real over MPI/NCCL, or microbenchmarks");
  sub->allow_extras();
  sub->callback([&g] { g.run = [] { return not_landed("'tutti exec'", 10); }; });
}

}  // namespace tutti::cli
