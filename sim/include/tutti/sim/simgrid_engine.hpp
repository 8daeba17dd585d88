#pragma once
// The SimGrid reference engine (issue 6): the same Program as the native engine, run on the
// SimGrid 3.32 platform of the same cluster (network model CM02, cross-traffic off, TCP-gamma 0,
// plain max-min sharing). SimGrid is linked privately: this header includes none of it.
//
// Every SimGrid run happens in a forked child process (SimGrid allows one engine per process).
#include <string>
#include <vector>

namespace tutti {

/// What SimGrid itself sees in a platform file (for checking exports).
struct SimgridPlatformProbe {
  int host_count = 0;
  int link_count = 0;                     ///< Declared links (SimGrid's own __loopback__ not counted).
  std::vector<std::string> route_links;  ///< Link names of the route src -> dst, in order.
  double route_latency_s = 0;            ///< Summed latency of that route, as SimGrid computes it.
};

/// Loads the SimGrid platform XML at `path` with simgrid::s4u::Engine (in a child process) and
/// reports its host count, link count, and the route from host `src_host` to host `dst_host`.
/// Throws InputError when SimGrid rejects the file or a host is missing.
SimgridPlatformProbe probe_simgrid_platform(const std::string& path, const std::string& src_host,
                                            const std::string& dst_host);

}  // namespace tutti
