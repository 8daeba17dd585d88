// SimGrid platform of a tutti Topology (routing zone on Topology::route) and process isolation.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <stdexcept>

#include "sg_platform.hpp"
#include "tutti/core/error.hpp"
#include "tutti/sim/engine.hpp"

namespace tutti::sg {

namespace kr = simgrid::kernel::routing;
namespace sg4 = simgrid::s4u;

std::vector<std::string> engine_args() {
  return {"tutti",
          "--cfg=network/model:CM02",
          "--cfg=network/crosstraffic:0",
          "--cfg=network/TCP-gamma:0",
          "--cfg=network/weight-S:0",
          "--cfg=contexts/guard-size:0",
          "--log=root.thres:critical",
          "--log=no_loc"};
}

sg4::Engine& make_engine() {
  static std::vector<std::string> args = engine_args();
  static std::vector<char*> argv;
  argv.clear();
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  return *new sg4::Engine(&argc, argv.data());  // lives until the child's _exit
}

double peak_rss_bytes() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) * 1024.0;
}

TopologyZone::TopologyZone(const Topology& topo, double gpu_flops,
                           const std::vector<double>& capacity_Bps, std::uint64_t seed)
    : kr::NetZoneImpl("tutti"), topo_(topo), seed_(seed) {
  const int n = topo.num_gpus();
  gpus_.reserve(n);
  for (int r = 0; r < n; ++r) {
    sg4::Host* h = create_host("gpu" + std::to_string(r), {gpu_flops});
    // The native engine lets compute ops of different streams overlap on one GPU without
    // slowing each other; enough cores keep SimGrid's CPU model from sharing them.
    h->set_core_count(kNumStreams + 2);
    h->seal();
    const unsigned long id = h->get_netpoint()->id();
    if (gpu_by_netpoint_.size() <= id) gpu_by_netpoint_.resize(id + 1, -1);
    gpu_by_netpoint_[id] = r;
    gpus_.push_back(h);
  }
  const auto& links = topo.links();
  check_internal(capacity_Bps.size() == links.size(), "TopologyZone: one capacity per link");
  links_.reserve(links.size());
  for (std::size_t i = 0; i < links.size(); ++i) {
    std::string name(1, 'L');
    name += std::to_string(i);
    sg4::Link* l = create_link(name, {capacity_Bps[i]});
    l->set_sharing_policy(sg4::Link::SharingPolicy::SHARED);
    l->set_latency(0.0);
    l->seal();
    links_.push_back(l);
  }
  path_.reserve(64);
}

int TopologyZone::gpu_of(const kr::NetPoint* p) const {
  const unsigned long id = p->id();
  const int r = id < gpu_by_netpoint_.size() ? gpu_by_netpoint_[id] : -1;
  if (r < 0)
    throw InternalError("SimGrid asked a route from or to a point that is not a GPU: " +
                        p->get_name());
  return r;
}

void TopologyZone::get_local_route(const kr::NetPoint* src, const kr::NetPoint* dst,
                                   kr::Route* into, double* latency) {
  const int s = gpu_of(src), d = gpu_of(dst);
  if (s == d) return;
  if (sel_part_ >= 0 && s == sel_src_ && d == sel_dst_)
    topo_.route_path(s, d, flow_hash(seed_, s, d), sel_part_, path_);
  else
    topo_.route(s, d, flow_hash(seed_, s, d), path_);
  for (std::uint32_t l : path_) {
    into->link_list_.push_back(links_[l]->get_impl());
    if (latency) *latency += links_[l]->get_latency();
  }
}

std::string run_isolated(const std::function<std::string()>& child) {
  int fds[2];
  if (pipe(fds) != 0) throw InternalError(std::string("pipe failed: ") + std::strerror(errno));
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw InternalError(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    close(fds[0]);
    std::string out;
    try {
      out.assign(1, 'K');
      out += child();
    } catch (const InputError& e) {
      out = std::string("I") + e.what();
    } catch (const std::exception& e) {
      out = std::string("E") + e.what();
    } catch (...) {
      out = "Eunknown exception in the SimGrid child";
    }
    const char* p = out.data();
    std::size_t left = out.size();
    while (left > 0) {
      const ssize_t w = write(fds[1], p, left);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) _exit(3);
      p += w;
      left -= static_cast<std::size_t>(w);
    }
    close(fds[1]);
    std::fflush(nullptr);
    _exit(0);
  }
  close(fds[1]);
  std::string in;
  char buf[1 << 16];
  for (;;) {
    const ssize_t r = read(fds[0], buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    in.append(buf, static_cast<std::size_t>(r));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status))
    throw InternalError("the SimGrid run died with signal " + std::to_string(WTERMSIG(status)) +
                        (in.empty() ? std::string() : " after: " + in.substr(0, 200)));
  if (in.empty())
    throw InternalError("the SimGrid run ended without a result (exit status " +
                        std::to_string(WEXITSTATUS(status)) + ")");
  if (in[0] == 'I') throw InputError(in.substr(1));
  if (in[0] != 'K') throw InternalError("SimGrid run failed: " + in.substr(1));
  return in.substr(1);
}

}  // namespace tutti::sg
