// Testing hooks of the execution backend's subcommands (hidden options). Kept apart from the
// other files: <csignal> defines macros (si_value) that collide with core/units.hpp names.
#include <unistd.h>

#include <csignal>
#include <cstdio>

#include "exec_shared.hpp"

namespace tutti::cli {

void debug_fault(int rank, int die_rank, int hang_rank) {
  if (die_rank == rank) {
    std::fprintf(stderr, "tutti: rank %d: --debug-die-rank: dying now\n", rank);
    std::fflush(stderr);
    std::raise(SIGKILL);
  }
  if (hang_rank == rank) {
    std::fprintf(stderr, "tutti: rank %d: --debug-hang-rank: hanging now\n", rank);
    std::fflush(stderr);
    for (;;) pause();  // the watchdog (on this rank and its peers) must end the job
  }
}

}  // namespace tutti::cli
