// probe_simgrid_platform: load a platform XML with SimGrid and report what it sees.
#include <sstream>

#include "sg_platform.hpp"
#include "tutti/core/error.hpp"
#include "tutti/simgrid/simgrid_engine.hpp"

namespace tutti {

SimgridPlatformProbe probe_simgrid_platform(const std::string& path, const std::string& src_host,
                                            const std::string& dst_host) {
  const std::string out = sg::run_isolated([&]() -> std::string {
    simgrid::s4u::Engine& e = sg::make_engine();
    try {
      e.load_platform(path);
    } catch (const std::exception& ex) {
      throw InputError(path + ": SimGrid could not load the platform: " + ex.what());
    }
    simgrid::s4u::Host* a = e.host_by_name_or_null(src_host);
    simgrid::s4u::Host* b = e.host_by_name_or_null(dst_host);
    if (!a || !b) throw InputError(path + ": no host named '" + (a ? dst_host : src_host) + "'");
    std::vector<simgrid::s4u::Link*> links;
    double lat = 0;
    a->route_to(b, links, &lat);
    std::ostringstream os;
    os.precision(17);
    int links_declared = 0;  // SimGrid adds its own __loopback__ link
    for (auto* l : e.get_all_links()) links_declared += l->get_name() != "__loopback__";
    os << e.get_host_count() << ' ' << links_declared << ' ' << lat << ' ' << links.size();
    for (auto* l : links) os << ' ' << l->get_name();
    return os.str();
  });
  std::istringstream is(out);
  SimgridPlatformProbe p;
  std::size_t n = 0;
  is >> p.host_count >> p.link_count >> p.route_latency_s >> n;
  p.route_links.resize(n);
  for (auto& s : p.route_links) is >> s;
  if (!is) throw InternalError("probe_simgrid_platform: malformed reply from the SimGrid child");
  return p;
}

}  // namespace tutti
