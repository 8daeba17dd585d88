// Direct (router-based) fabrics: dragonfly and torus.
//
// Dragonfly (Kim, Dally, Scott, Abts, ISCA'08): `groups` groups of `routers_per_group` routers,
// all-to-all local links inside a group, `global_links_per_router` global ports per router. Group
// G's global channel c (owned by router c / h) goes to group (G + c % (g-1) + 1) mod g, so every
// pair of groups is joined by m = floor(a*h / (g-1)) channels. Minimal routing: local, global,
// local (at most one global hop); the channel among the m is picked by the flow hash (ECMP) or
// by the destination (d-mod-k).
//   local  link ids: base_local + (G*a + i) * (a-1) + (j < i ? j : j-1)   (router i -> j)
//   global link ids: base_global + G * m(g-1) + c                         (channel c of group G)
// Torus: routers on a 2D/3D grid with wrap-around; dimension-order routing along the shorter
// way (ties split by the flow hash).
//   link ids: base + (router * ndims + dim) * 2 + dir                     (dir 0 = +, 1 = -)
#include <fmt/format.h>

#include <algorithm>

#include "clos.hpp"
#include "node_layer.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/units.hpp"

namespace tutti::detail {

namespace {

int router_radix(const FabricHardware& hw, double B, const std::string& file) {
  int k = hw.leaf.radix_at(B);
  if (k < 2)
    throw InputError(file, "fabric.leaf_switch", "\"" + hw.leaf.id + "\"",
                     fmt::format("a router with ports at the fabric link speed of {}", gbps(B)));
  return k;
}

SwitchGroup router_group(const FabricHardware& hw, int k, const std::vector<long long>& used) {
  SwitchGroup g;
  g.role = "router", g.switch_id = hw.leaf.id, g.count = static_cast<int>(used.size()), g.radix = k;
  int per_cage = std::max(1, k / std::max(hw.leaf.cages, 1));
  for (auto u : used) g.ports_used += u, g.cages_used += (u + per_cage - 1) / per_cage;
  return g;
}

struct Routers {
  std::uint32_t r0;  ///< Device id of the first router.
  double to_r;       ///< Latency of a hop into a router (cable + router + transport per hop), s.
};

// Adds `routers` routers after the node layer's devices and an access cable from each NIC i to
// router i / p (counted in used[i / p]); the first access link's id goes to acc_base.
Routers add_routers(NodeLayer& f, const FabricHardware& hw, long long routers, int p, double bw,
                    std::vector<long long>& used, std::uint32_t& acc_base) {
  const std::uint32_t r0 = static_cast<std::uint32_t>(f.devices().size());
  for (long long r = 0; r < routers; ++r)
    f.add_device(DeviceKind::Switch, static_cast<std::uint32_t>(r), 0, 0);
  const double to_r = hw.cable_latency_s + hw.leaf.latency_s + hw.transport.per_hop_latency_s;
  const double to_nic = hw.cable_latency_s + hw.nic.latency_s;
  acc_base = static_cast<std::uint32_t>(f.links().size());
  for (int i = 0, E = f.nics_total(); i < E; ++i) {
    ++used[i / p];
    f.add_cable(f.nic_device(i), r0 + static_cast<std::uint32_t>(i / p), bw, to_r, bw, to_nic,
                Tier::Access);
  }
  return {r0, to_r};
}

class Dragonfly final : public NodeLayer {
 public:
  std::string describe() const override { return description_; }
  int g_ = 1, a_ = 1, p_ = 1, h_ = 0, m_ = 0;
  Routing routing_ = Routing::Ecmp;
  std::uint32_t acc_base_ = 0, loc_base_ = 0, glob_base_ = 0;
  std::string description_;

  std::uint32_t local(int G, int i, int j) const {
    return loc_base_ + static_cast<std::uint32_t>((G * a_ + i) * (a_ - 1) + (j < i ? j : j - 1));
  }

 protected:
  void route_fabric(int a, int b, std::uint64_t hash,
                    std::vector<std::uint32_t>& out) const override {
    out.push_back(acc_base_ + 2 * static_cast<std::uint32_t>(a));
    const int ra = a / p_, rb = b / p_;
    if (ra != rb) {
      const int Ga = ra / a_, Gb = rb / a_, ia = ra % a_, ib = rb % a_;
      if (Ga == Gb) {
        out.push_back(local(Ga, ia, ib));
      } else {
        const std::uint64_t key =
            routing_ == Routing::DModK ? static_cast<std::uint64_t>(b) : mix(hash, 7);
        const int k = static_cast<int>(key % static_cast<std::uint64_t>(m_));
        const int d = ((Gb - Ga) % g_ + g_) % g_;
        const int c = k * (g_ - 1) + d - 1;
        const int c_back = k * (g_ - 1) + (g_ - d - 1);
        const int i1 = c / h_, i2 = c_back / h_;
        if (ia != i1) out.push_back(local(Ga, ia, i1));
        out.push_back(glob_base_ + static_cast<std::uint32_t>(Ga * m_ * (g_ - 1) + c));
        if (i2 != ib) out.push_back(local(Gb, i2, ib));
      }
    }
    out.push_back(acc_base_ + 2 * static_cast<std::uint32_t>(b) + 1);
  }
};

class Torus final : public NodeLayer {
 public:
  std::string describe() const override { return description_; }
  std::vector<int> dims_;
  int p_ = 1;
  std::uint32_t acc_base_ = 0, tor_base_ = 0;
  std::string description_;

 protected:
  void route_fabric(int a, int b, std::uint64_t hash,
                    std::vector<std::uint32_t>& out) const override {
    out.push_back(acc_base_ + 2 * static_cast<std::uint32_t>(a));
    int ra = a / p_, rb = b / p_;
    const int nd = static_cast<int>(dims_.size());
    int cur = ra, stride = 1;
    for (int d = 0; d < nd; ++d) {
      const int K = dims_[d];
      const int ca = (cur / stride) % K, cb = (rb / stride) % K;
      const int delta = ((cb - ca) % K + K) % K;
      if (delta != 0) {
        bool fwd = delta < K - delta || (delta == K - delta && (mix(hash, 11 + d) & 1));
        int steps = fwd ? delta : K - delta;
        int c = ca;
        for (int s = 0; s < steps; ++s) {
          out.push_back(tor_base_ + static_cast<std::uint32_t>((cur * nd + d) * 2 + (fwd ? 0 : 1)));
          int nc = fwd ? (c + 1) % K : (c + K - 1) % K;
          cur += (nc - c) * stride;
          c = nc;
        }
      }
      stride *= K;
    }
    out.push_back(acc_base_ + 2 * static_cast<std::uint32_t>(b) + 1);
  }
};

}  // namespace

std::shared_ptr<const Topology> build_dragonfly(const FabricHardware& hw, const FabricSpec& spec,
                                                FabricFacts& facts, const std::string& file) {
  auto t = std::make_shared<Dragonfly>();
  t->build_nodes(hw, spec);
  Dragonfly& f = *t;
  f.g_ = spec.groups, f.a_ = spec.routers_per_group, f.p_ = spec.nics_per_router;
  f.h_ = spec.global_links_per_router, f.routing_ = spec.routing;
  const double B = spec.link_bw_Bps, bw = B * hw.transport.efficiency;
  const int E = f.nics_total();
  const int k = router_radix(hw, B, file);
  const int need = f.p_ + (f.a_ - 1) + f.h_;
  if (need > k)
    throw InputError(file, "fabric.leaf_switch",
                     fmt::format("\"{}\" ({} ports at this speed)", hw.leaf.id, k),
                     fmt::format("a router with at least {} ports ({} NICs + {} local + {} global)",
                                 need, f.p_, f.a_ - 1, f.h_));
  const int routers = f.g_ * f.a_;
  if (static_cast<long long>(routers) * f.p_ < E)
    throw InputError(file, "fabric.groups", std::to_string(f.g_),
                     fmt::format("enough routers for {} NICs: groups x routers_per_group x "
                                 "nics_per_router >= {}",
                                 E, E));
  if (f.g_ > 1 && f.g_ > f.a_ * f.h_ + 1)
    throw InputError(
        file, "fabric.groups", std::to_string(f.g_),
        fmt::format("at most routers_per_group x global_links_per_router + 1 = {} (every "
                    "pair of groups needs a global link)",
                    f.a_ * f.h_ + 1));
  f.m_ = f.g_ > 1 ? f.a_ * f.h_ / (f.g_ - 1) : 0;
  std::vector<long long> used(static_cast<std::size_t>(routers), 0);
  const auto [r0, to_r] = add_routers(f, hw, routers, f.p_, bw, used, f.acc_base_);
  f.loc_base_ = static_cast<std::uint32_t>(f.links().size());
  for (int G = 0; G < f.g_; ++G)
    for (int i = 0; i < f.a_; ++i) {
      used[G * f.a_ + i] += f.a_ - 1;
      for (int j = 0; j < f.a_; ++j)
        if (i != j)
          f.add_link(Link{r0 + static_cast<std::uint32_t>(G * f.a_ + i),
                          r0 + static_cast<std::uint32_t>(G * f.a_ + j), bw, to_r, Tier::Local});
    }
  f.glob_base_ = static_cast<std::uint32_t>(f.links().size());
  const int mc = f.m_ * (f.g_ - 1);
  for (int G = 0; G < f.g_ && f.g_ > 1; ++G)
    for (int c = 0; c < mc; ++c) {
      int d = c % (f.g_ - 1) + 1, kk = c / (f.g_ - 1);
      int G2 = (G + d) % f.g_;
      int c_back = kk * (f.g_ - 1) + (f.g_ - d - 1);
      ++used[G * f.a_ + c / f.h_];
      f.add_link(Link{r0 + static_cast<std::uint32_t>(G * f.a_ + c / f.h_),
                      r0 + static_cast<std::uint32_t>(G2 * f.a_ + c_back / f.h_), bw, to_r,
                      Tier::Global});
    }
  facts.tiers = 1;
  facts.link_bw_Bps = B;
  facts.node_ports = E;
  facts.switches.push_back(router_group(hw, k, used));
  facts.cables.push_back({Tier::Access, E, B});
  facts.cables.push_back({Tier::Local, static_cast<long long>(f.g_) * f.a_ * (f.a_ - 1) / 2, B});
  facts.cables.push_back({Tier::Global, static_cast<long long>(f.g_) * mc / 2, B});
  double half = static_cast<double>(f.g_ / 2) * ((f.g_ + 1) / 2);
  facts.bisection_Bps = std::min(E * B / 2, half * f.m_ * B);
  f.description_ = fmt::format(
      "dragonfly, {} groups x {} routers, {} NICs + {} global links per router, "
      "{} links per group pair, minimal routing ({})",
      f.g_, f.a_, f.p_, f.h_, f.m_, to_string(spec.routing));
  facts.description = f.description_;
  return t;
}

std::shared_ptr<const Topology> build_torus(const FabricHardware& hw, const FabricSpec& spec,
                                            FabricFacts& facts, const std::string& file) {
  auto t = std::make_shared<Torus>();
  t->build_nodes(hw, spec);
  Torus& f = *t;
  f.dims_ = spec.dims;
  f.p_ = spec.nics_per_router;
  const double B = spec.link_bw_Bps, bw = B * hw.transport.efficiency;
  const int E = f.nics_total();
  const int nd = static_cast<int>(f.dims_.size());
  const int k = router_radix(hw, B, file);
  if (f.p_ + 2 * nd > k)
    throw InputError(file, "fabric.leaf_switch",
                     fmt::format("\"{}\" ({} ports at this speed)", hw.leaf.id, k),
                     fmt::format("a router with at least {} ports ({} NICs + {} torus links)",
                                 f.p_ + 2 * nd, f.p_, 2 * nd));
  long long routers = 1;
  for (int d : f.dims_) routers *= d;
  if (routers * f.p_ < E)
    throw InputError(file, "fabric.dims", fmt::format("{} routers", routers),
                     fmt::format("at least {} routers for {} NICs at {} per router",
                                 (E + f.p_ - 1) / f.p_, E, f.p_));
  std::vector<long long> used(static_cast<std::size_t>(routers), 2 * nd);
  const auto [r0, to_r] = add_routers(f, hw, routers, f.p_, bw, used, f.acc_base_);
  f.tor_base_ = static_cast<std::uint32_t>(f.links().size());
  for (long long r = 0; r < routers; ++r) {
    long long stride = 1;
    for (int d = 0; d < nd; ++d) {
      const int K = f.dims_[d];
      const int c = static_cast<int>((r / stride) % K);
      long long plus = r + ((c + 1) % K - c) * stride, minus = r + ((c + K - 1) % K - c) * stride;
      f.add_link(Link{r0 + static_cast<std::uint32_t>(r), r0 + static_cast<std::uint32_t>(plus), bw,
                      to_r, Tier::Torus});
      f.add_link(Link{r0 + static_cast<std::uint32_t>(r), r0 + static_cast<std::uint32_t>(minus),
                      bw, to_r, Tier::Torus});
      stride *= K;
    }
  }
  int kmax = *std::max_element(f.dims_.begin(), f.dims_.end());
  facts.tiers = 1;
  facts.link_bw_Bps = B;
  facts.node_ports = E;
  facts.switches.push_back(router_group(hw, k, used));
  facts.cables.push_back({Tier::Access, E, B});
  facts.cables.push_back({Tier::Torus, routers * nd, B});
  facts.bisection_Bps = std::min(E * B / 2, 2.0 * static_cast<double>(routers / kmax) * B);
  std::string dims;
  for (int d : f.dims_) {
    if (!dims.empty()) dims += 'x';
    dims += std::to_string(d);
  }
  f.description_ = fmt::format(
      "{}D torus {} of routers, {} NICs per router, dimension-order routing", nd, dims, f.p_);
  facts.description = f.description_;
  return t;
}

}  // namespace tutti::detail
