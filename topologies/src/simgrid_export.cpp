// SimGrid platform export (XML, version 4.1). See simgrid_export.hpp.
#include "tutti/topologies/simgrid_export.hpp"

#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "tutti/core/error.hpp"
#include "tutti/topologies/cluster.hpp"

namespace tutti {

namespace {
std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}
// Text safe inside an XML comment: no "--" anywhere, no trailing '-' (the comment closes with
// "-->").
std::string xml_comment_text(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '-' && !out.empty() && out.back() == '-') out += ' ';
    out += c;
  }
  if (!out.empty() && out.back() == '-') out += ' ';
  return out;
}
}  // namespace

std::uint64_t simgrid_export_hash(int src, int dst) {
  // splitmix64 of the pair: the same pair always takes the same ECMP path.
  std::uint64_t z = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(src)) << 32) |
                    static_cast<std::uint32_t>(dst);
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::string simgrid_device_name(const Topology& topo, std::uint32_t device) {
  const Device& d = topo.devices().at(device);
  // Switches by level and index ("sw1-4"); every other device as the outputs name it.
  if (d.kind == DeviceKind::Switch)
    return "sw" + std::to_string(d.level) + "-" + std::to_string(d.index);
  return fabric_device_name(d);
}

void write_simgrid_platform(const Topology& topo, double gpu_flops, std::ostream& out,
                            const RouteHash& hash) {
  const int n = topo.num_gpus();
  if (n > kSimgridExportMaxGpus)
    throw InputError("--export simgrid: the cluster has " + std::to_string(n) +
                     " GPUs; the SimGrid export lists every GPU pair's route and is limited to " +
                     std::to_string(kSimgridExportMaxGpus) + " GPUs (" +
                     std::to_string(static_cast<long long>(n) * (n - 1)) + " routes asked)");
  // The network model options travel as a <config> element (SimGrid applies them when it loads
  // the file) rather than as "--cfg=..." text in a comment: XML forbids "--" inside a comment.
  out << "<?xml version='1.0'?>\n"
         "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
         "<!-- Written by tutti: "
      << xml_comment_text(topo.describe())
      << ". One host per GPU, one link per directed tutti link (SHARED: it carries one direction),"
         " routes = tutti's routing for every GPU pair. The config element below sets the network"
         " model tutti's SimGrid engine uses (CM02, no cross traffic, TCP gamma 0). -->\n"
         "<platform version=\"4.1\">\n"
         "  <config id=\"tutti\">\n"
         "    <prop id=\"network/model\" value=\"CM02\"/>\n"
         "    <prop id=\"network/crosstraffic\" value=\"0\"/>\n"
         "    <prop id=\"network/TCP-gamma\" value=\"0\"/>\n"
         "  </config>\n"
         "  <zone id=\"tutti\" routing=\"Full\">\n";
  const std::string speed = num(gpu_flops) + "f";
  for (int r = 0; r < n; ++r)
    out << "    <host id=\"gpu" << r << "\" speed=\"" << speed << "\"/>\n";
  const auto& devs = topo.devices();
  for (std::uint32_t i = 0; i < devs.size(); ++i)
    if (devs[i].kind != DeviceKind::GPU)
      out << "    <router id=\"" << simgrid_device_name(topo, i) << "\"/>\n";
  const auto& links = topo.links();
  for (std::size_t i = 0; i < links.size(); ++i) {
    const Link& l = links[i];
    // A link standing for a bundle of cables (adaptive/spray, Topology::link_bundle) carries
    // the bundle's bandwidth: routes name it for every flow of the bundle.
    out << "    <link id=\"L" << i << "\" bandwidth=\""
        << num(l.bandwidth_Bps * topo.link_bundle(static_cast<std::uint32_t>(i)))
        << "Bps\" latency=\"" << num(l.latency_s) << "s\" sharing_policy=\"SHARED\">\n"
        << "      <prop id=\"from\" value=\"" << simgrid_device_name(topo, l.src) << "\"/>\n"
        << "      <prop id=\"to\" value=\"" << simgrid_device_name(topo, l.dst) << "\"/>\n"
        << "      <prop id=\"tier\" value=\"" << to_string(l.tier) << "\"/>\n"
        << "    </link>\n";
  }
  std::vector<std::uint32_t> path;
  path.reserve(64);
  std::string line;
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d) {
      if (s == d) continue;
      topo.route(s, d, hash ? hash(s, d) : simgrid_export_hash(s, d), path);
      line = "    <route src=\"gpu" + std::to_string(s) + "\" dst=\"gpu" + std::to_string(d) +
             "\" symmetrical=\"NO\">";
      for (std::uint32_t l : path) line += "<link_ctn id=\"L" + std::to_string(l) + "\"/>";
      line += "</route>\n";
      out << line;
    }
  out << "  </zone>\n</platform>\n";
}

void write_simgrid_platform(const Cluster& cluster, std::ostream& out, const RouteHash& hash) {
  check_internal(cluster.topology != nullptr, "write_simgrid_platform: cluster without topology");
  double flops = cluster.gpu.peak(DType::BF16);
  if (!(flops > 0)) flops = cluster.gpu.peak(DType::FP32);
  if (!(flops > 0)) flops = 1e12;  // a rank with no catalog FLOP rate (CPU nodes): 1 TFLOP/s
  write_simgrid_platform(*cluster.topology, flops, out, hash);
}

}  // namespace tutti
