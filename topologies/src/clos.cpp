// Folded-Clos fabrics: fat-tree, rail-optimized (SuperPOD) and dual-plane, 1 to 3 switch tiers.
//
// Link ids are laid out so that route() computes them (no search):
//   access   : base_acc + 2 * (nic * planes + plane)            (NIC -> leaf; +1 leaf -> NIC)
//   leaf up  : base_lu  + 2 * (leaf * U + u)                    (leaf -> spine; +1 down)
//   spine up : base_su  + 2 * (spine * V + v)                   (spine -> core; +1 down)
// Leaf port u goes to pod spine u % S (parallel copy u / S); spine port v goes to core v % C of
// the core group that serves spine position j (core group j links only spines at position j of
// every pod), so a route up through position j comes down through position j.
#include "clos.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "node_layer.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/units.hpp"

namespace tutti::detail {

namespace {

class ClosFabric final : public NodeLayer {
 public:
  std::string describe() const override { return description_; }

  // Sizing (per plane).
  int planes_ = 1, L_ = 0, U_ = 0, S_ = 0, PL_ = 0, pods_ = 1, V_ = 0, C_ = 0, tiers_ = 1;
  int D_ = 0;  // leaf down ports (fat-tree) / nodes per SU (rails)
  bool rails_ = false;
  bool rail_only_ = false;  // RailOnly: each rail its own network (spines serve one rail)
  Routing routing_ = Routing::Ecmp;
  std::uint32_t leaf_dev_ = 0, spine_dev_ = 0, core_dev_ = 0;
  std::uint32_t acc_base_ = 0, lu_base_ = 0, su_base_ = 0;
  std::string description_;

  int leaf_of(int nic) const {  // within a plane
    if (!rails_) return nic / D_;
    int node = nic / nics_per_node_, rail = nic % nics_per_node_;
    return (node / D_) * nics_per_node_ + rail;
  }
  std::uint32_t spine_index(int plane, int pod, int j) const {
    return static_cast<std::uint32_t>((plane * pods_ + pod) * S_ + j);
  }

 protected:
  void route_fabric(int a, int b, std::uint64_t hash,
                    std::vector<std::uint32_t>& out) const override {
    route_fabric_path(a, b, hash, -1, out);
  }
  // Adaptive routing / spraying on a healthy fabric: every switch spreads each flow evenly over
  // its equal-cost output ports, so a flow loads each of the P access cables of its NIC with
  // 1/P of it, each of the P x U uplinks of its leaf position (and the P x U downlinks of the
  // destination's) with 1/(P U), and, across pods, each of the P x S x V spine-to-core cables of
  // its pod (and the P x S x V core-to-spine cables into the destination pod) with 1/(P S V)
  // (spine j gets 1/S of it over its U / S parallel cables, then V uplinks; core j,c sends what
  // reached it down its V / C cables). Every cable of such a bundle is crossed by the same flows
  // at the same share, so its max-min constraint is the same: the flow is one flow over one
  // representative cable per bundle (plane 0, uplink 0, spine 0, core 0), whose capacity is the
  // bundle's (link_bundle). Exact for this fluid model; one flow per flow, as cheap as ECMP.
  bool fluid() const { return splits_flows(routing_) && dead_link_.empty(); }
  double link_bundle(std::uint32_t l) const override {
    if (!fluid() || l < acc_base_) return 1;
    if (l < lu_base_) return planes_;
    if (l < su_base_) return static_cast<double>(planes_) * U_;
    return static_cast<double>(planes_) * S_ * V_;
  }
  void route_fluid(int a, int b, std::vector<std::uint32_t>& out) const {
    const auto P = static_cast<std::uint32_t>(planes_);
    out.push_back(acc_base_ + 2 * (static_cast<std::uint32_t>(a) * P));
    const int la = leaf_of(a), lb = leaf_of(b);
    if (la != lb) {
      out.push_back(leaf_up(la, 0));
      const int pa = la / PL_, pb = lb / PL_;
      if (pa != pb) {
        out.push_back(spine_up(0, pa, 0, 0));
        out.push_back(spine_up(0, pb, 0, 0) + 1);
      }
      out.push_back(leaf_up(lb, 0) + 1);
    }
    out.push_back(acc_base_ + 2 * (static_cast<std::uint32_t>(b) * P) + 1);
  }
  // Adaptive routing / spraying with failures: one path per surviving (plane, leaf uplink).
  int fabric_paths(int a, int b) const override {
    if (!splits_flows(routing_) || fluid()) return 1;
    {
      Choices ch;
      choices(a, b, ch);
      if (ch.first.empty()) unreachable(a, b);
      return static_cast<int>(ch.first.size());
    }
  }
  int max_paths() const override {
    return splits_flows(routing_) && !fluid() ? planes_ * std::max(U_, 1) : 1;
  }

  // ECMP (a hash picks the plane, the leaf uplink, the spine uplink and the parallel cables
  // down) or d-mod-k; adaptive/spray on a healthy fabric: the bundles' representative cables
  // (route_fluid); with failures (route_failed), part >= 0 is path `part` of a split flow: plane
  // and leaf uplink among those left, the core hops hashed per subflow.
  void route_fabric_path(int a, int b, std::uint64_t hash, int part,
                         std::vector<std::uint32_t>& out) const override {
    if (!dead_link_.empty()) {
      route_failed(a, b, hash, part, out);
      return;
    }
    if (fluid()) {
      route_fluid(a, b, out);
      return;
    }
    const bool dm = routing_ == Routing::DModK;
    const auto ub = static_cast<std::uint64_t>(b);
    const std::uint64_t h = hash;
    auto pick = [&](int n, std::uint64_t salt, std::uint64_t dkey) -> std::uint32_t {
      if (n <= 1) return 0;
      return static_cast<std::uint32_t>((dm ? dkey : mix(h, salt)) % static_cast<std::uint64_t>(n));
    };
    const int p = static_cast<int>(pick(planes_, 0, ub));
    const auto P = static_cast<std::uint32_t>(planes_);
    out.push_back(acc_base_ +
                  2 * (static_cast<std::uint32_t>(a) * P + static_cast<std::uint32_t>(p)));
    const int la = p * L_ + leaf_of(a), lb = p * L_ + leaf_of(b);
    if (la != lb) {
      const std::uint64_t U = static_cast<std::uint64_t>(U_);
      const std::uint32_t u = pick(U_, 1, ub);
      const int j = static_cast<int>(u) % S_;
      const int par1 = U_ / S_;
      out.push_back(lu_base_ +
                    2 * (static_cast<std::uint32_t>(la) * static_cast<std::uint32_t>(U_) + u));
      const int pa = (la - p * L_) / PL_, pb = (lb - p * L_) / PL_;
      if (pa != pb) {
        const std::uint32_t v = pick(V_, 2, ub / U);
        const int c = static_cast<int>(v) % C_;
        const int par2 = V_ / C_;
        const auto V = static_cast<std::uint32_t>(V_);
        out.push_back(su_base_ + 2 * (spine_index(p, pa, j) * V + v));
        const std::uint32_t m = pick(par2, 3, ub / (U * static_cast<std::uint64_t>(V_)));
        out.push_back(su_base_ +
                      2 * (spine_index(p, pb, j) * V + m * static_cast<std::uint32_t>(C_) +
                           static_cast<std::uint32_t>(c)) +
                      1);
      }
      const std::uint32_t k = pick(par1, 4, ub / (U * static_cast<std::uint64_t>(std::max(V_, 1))));
      out.push_back(lu_base_ +
                    2 * (static_cast<std::uint32_t>(lb) * static_cast<std::uint32_t>(U_) +
                         k * static_cast<std::uint32_t>(S_) + static_cast<std::uint32_t>(j)) +
                    1);
    }
    out.push_back(acc_base_ +
                  2 * (static_cast<std::uint32_t>(b) * P + static_cast<std::uint32_t>(p)) + 1);
  }

  // ---- Failures ------------------------------------------------------------------------------
  // A failed cable is dead in both directions; a failed switch kills every link into it. Routes
  // take the same decisions as without failures (plane, leaf uplink u, spine uplink v, core
  // downlink copy m, spine downlink copy k), each among the choices that still lead to the
  // destination, and pick among those with the same key (the flow hash, or the destination under
  // d-mod-k) modulo their number: ECMP over the equal-cost paths that remain. With no failure the
  // choices are the full sets, so the routes are the healthy ones. Cost: O(P x U x V) per route,
  // paid only by a topology with failures.
 public:
  std::vector<char> dead_link_;  // per directed link (empty: no failures)

  bool up(std::uint32_t l) const { return !dead_link_[l]; }
  std::uint32_t leaf_up(int leaf, int u) const {
    return lu_base_ + 2 * (static_cast<std::uint32_t>(leaf) * static_cast<std::uint32_t>(U_) +
                           static_cast<std::uint32_t>(u));
  }
  std::uint32_t spine_up(int p, int pod, int j, int v) const {
    return su_base_ + 2 * (spine_index(p, pod, j) * static_cast<std::uint32_t>(V_) +
                           static_cast<std::uint32_t>(v));
  }
  // The first-level choices of a flow a -> b that still reach b: (plane, leaf uplink u; -1 when
  // a and b share the leaf).
  struct Choices {
    std::vector<std::pair<int, int>> first;
  };
  // Spine uplinks v (and core downlink copies m) from spine j of pod pa that reach spine j of pod
  // pb.
  void core_choices(int p, int pa, int pb, int j, std::vector<std::pair<int, int>>& vm) const {
    vm.clear();
    const int par2 = V_ / C_;
    for (int v = 0; v < V_; ++v) {
      if (!up(spine_up(p, pa, j, v))) continue;
      for (int m = 0; m < par2; ++m)
        if (up(spine_up(p, pb, j, m * C_ + v % C_) + 1)) vm.push_back({v, m});
    }
  }
  void down_choices(int lb, int j, std::vector<int>& ks) const {
    ks.clear();
    for (int k = 0; k < U_ / S_; ++k)
      if (up(leaf_up(lb, k * S_ + j) + 1)) ks.push_back(k);
  }
  void choices(int a, int b, Choices& ch) const {
    ch.first.clear();
    const auto P = static_cast<std::uint32_t>(planes_);
    std::vector<std::pair<int, int>> vm;
    std::vector<int> ks;
    for (int p = 0; p < planes_; ++p) {
      if (!up(acc_base_ +
              2 * (static_cast<std::uint32_t>(a) * P + static_cast<std::uint32_t>(p))) ||
          !up(acc_base_ + 2 * (static_cast<std::uint32_t>(b) * P + static_cast<std::uint32_t>(p)) +
              1))
        continue;
      const int la = p * L_ + leaf_of(a), lb = p * L_ + leaf_of(b);
      if (la == lb) {
        ch.first.push_back({p, -1});
        continue;
      }
      const int pa = (la - p * L_) / PL_, pb = (lb - p * L_) / PL_;
      for (int u = 0; u < U_; ++u) {
        if (!up(leaf_up(la, u))) continue;
        const int j = u % S_;
        down_choices(lb, j, ks);
        if (ks.empty()) continue;
        if (pa != pb) {
          core_choices(p, pa, pb, j, vm);
          if (vm.empty()) continue;
        }
        ch.first.push_back({p, u});
      }
    }
  }
  [[noreturn]] void unreachable(int a, int b) const {
    throw InputError(
        "--fail", "", fmt::format("no path left from nic{} to nic{}", a, b),
        "failures that leave every pair the job uses connected (fail fewer links or switches)");
  }
  void route_failed(int a, int b, std::uint64_t hash, int part,
                    std::vector<std::uint32_t>& out) const {
    Choices ch;
    choices(a, b, ch);
    if (ch.first.empty()) unreachable(a, b);
    const bool dm = routing_ == Routing::DModK;
    const bool split = part >= 0;
    const auto ub = static_cast<std::uint64_t>(b);
    const std::uint64_t h = split ? mix(hash, 1000 + static_cast<std::uint64_t>(part)) : hash;
    auto pick = [&](std::size_t n, std::uint64_t salt, std::uint64_t dkey) -> std::size_t {
      if (n <= 1) return 0;
      return static_cast<std::size_t>((dm ? dkey : mix(h, salt)) % n);
    };
    // Plane, then uplink, among the surviving first-level choices.
    std::pair<int, int> pu;
    if (split) {
      pu = ch.first[static_cast<std::size_t>(part) % ch.first.size()];
    } else {
      std::vector<int> planes;
      for (const auto& c : ch.first)
        if (planes.empty() || planes.back() != c.first) planes.push_back(c.first);
      const int p = planes[pick(planes.size(), 0, ub)];
      std::vector<int> us;
      for (const auto& c : ch.first)
        if (c.first == p) us.push_back(c.second);
      pu = {p, us[pick(us.size(), 1, ub)]};
    }
    const int p = pu.first, u = pu.second;
    const auto P = static_cast<std::uint32_t>(planes_);
    out.push_back(acc_base_ +
                  2 * (static_cast<std::uint32_t>(a) * P + static_cast<std::uint32_t>(p)));
    if (u >= 0) {
      const int la = p * L_ + leaf_of(a), lb = p * L_ + leaf_of(b);
      const int j = u % S_;
      const std::uint64_t U = static_cast<std::uint64_t>(U_);
      out.push_back(leaf_up(la, u));
      const int pa = (la - p * L_) / PL_, pb = (lb - p * L_) / PL_;
      if (pa != pb) {
        std::vector<std::pair<int, int>> vm;
        core_choices(p, pa, pb, j, vm);
        std::vector<int> vs, ms;  // uplinks v with a way down, then that v's downlink copies m
        for (const auto& x : vm)
          if (vs.empty() || vs.back() != x.first) vs.push_back(x.first);
        const int v = vs[pick(vs.size(), 2, ub / U)];
        for (const auto& x : vm)
          if (x.first == v) ms.push_back(x.second);
        const int m = ms[pick(ms.size(), 3, ub / (U * static_cast<std::uint64_t>(V_)))];
        out.push_back(spine_up(p, pa, j, v));
        out.push_back(spine_up(p, pb, j, m * C_ + v % C_) + 1);
      }
      std::vector<int> ks;
      down_choices(lb, j, ks);
      // Split: subflow i takes the i-th surviving downlink copy (round robin), so the copies left
      // share the flow evenly whatever died on the way up.
      const std::size_t ki =
          split ? static_cast<std::size_t>(part) % ks.size()
                : pick(ks.size(), 4, ub / (U * static_cast<std::uint64_t>(std::max(V_, 1))));
      out.push_back(leaf_up(lb, ks[ki] * S_ + j) + 1);
    }
    out.push_back(acc_base_ +
                  2 * (static_cast<std::uint32_t>(b) * P + static_cast<std::uint32_t>(p)) + 1);
  }

  std::shared_ptr<const Topology> with_failures(
      const std::vector<std::uint32_t>& links,
      const std::vector<std::uint32_t>& switches) const override {
    auto t = std::make_shared<ClosFabric>(*this);
    if (t->dead_link_.empty()) t->dead_link_.assign(links_.size(), 0);
    for (std::uint32_t l : links) {
      if (l >= links_.size() || l < acc_base_)
        throw InputError(
            "--fail", "link", std::to_string(l),
            fmt::format("a scale-out link id ({} to {})", acc_base_, links_.size() - 1));
      const std::uint32_t c = acc_base_ + ((l - acc_base_) & ~1u);  // the cable: both directions
      t->dead_link_[c] = t->dead_link_[c + 1] = 1;
    }
    for (std::uint32_t d : switches) {
      if (d >= devices_.size() || devices_[d].kind != DeviceKind::Switch)
        throw InputError("--fail", "switch", std::to_string(d), "a switch of the fabric");
      for (std::uint32_t l = acc_base_; l < links_.size(); ++l)
        if (links_[l].src == d || links_[l].dst == d) t->dead_link_[l] = 1;
    }
    // Nothing down: the healthy fabric (its routes, and adaptive/spray's bundles).
    if (std::find(t->dead_link_.begin(), t->dead_link_.end(), 1) == t->dead_link_.end())
      t->dead_link_.clear();
    return t;
  }
};

// Smallest divisor d of n with d * radix >= need (0 if none).
int smallest_divisor_covering(int n, long long need, int radix) {
  for (int d = 1; d <= n; ++d)
    if (n % d == 0 && static_cast<long long>(d) * radix >= need) return d;
  return 0;
}

std::string ports_text(const SwitchSpec& s, int radix, double bw) {
  return fmt::format("\"{}\" ({} ports at {})", s.id, radix, gbps(bw));
}

}  // namespace

std::shared_ptr<const Topology> build_clos(const FabricHardware& hw, const FabricSpec& spec,
                                           FabricFacts& facts, const std::string& file) {
  auto t = std::make_shared<ClosFabric>();
  t->build_nodes(hw, spec);
  ClosFabric& f = *t;
  f.planes_ = spec.planes;
  f.rails_ = spec.kind != FabricKind::FatTree;
  f.rail_only_ = spec.kind == FabricKind::RailOnly;
  f.routing_ = spec.routing;
  const double B = spec.link_bw_Bps;  // line rate per port
  const double eff = hw.transport.efficiency;
  const int E = f.nics_total();
  const int R = hw.node.nics;
  const double r = spec.oversubscription, sr = spec.spine_oversubscription;

  auto radix_of = [&](const SwitchSpec& s, const char* key) {
    int k = s.radix_at(B);
    if (k < 2)
      throw InputError(file, std::string("fabric.") + key,
                       fmt::format("\"{}\" (ports of {}, breakout down to {})", s.id,
                                   gbps(s.port_bw_Bps), gbps(s.min_port_bw_Bps)),
                       fmt::format("a switch with ports at the fabric link speed of {}", gbps(B)));
    return k;
  };
  const int kl = radix_of(hw.leaf, "leaf_switch");

  // All endpoints on one switch: that switch is the whole fabric (rails or not); no spines.
  if (!f.rail_only_ && spec.tiers != 2 && spec.tiers != 3 && E <= kl &&
      (spec.leaf_down_ports <= 0 || E <= spec.leaf_down_ports))
    f.rails_ = false;
  if (f.rail_only_ && spec.tiers == 3)
    throw InputError(
        file, "fabric.tiers", "3",
        "1 or 2: a rail-only fabric is one switch per rail, or a 2-tier Clos per rail");

  // Leaves.
  if (f.rail_only_) {
    // Rail-only (Wang et al., arXiv:2307.12169): a rail is one switch while the nodes fit its
    // ports, else a 2-tier Clos of leaves with nodes_per_su node links each.
    const int one = hw.nodes <= kl && spec.tiers != 2;
    f.D_ = spec.nodes_per_su > 0 ? spec.nodes_per_su
           : one                 ? hw.nodes
                                 : static_cast<int>(std::floor(kl * r / (r + 1) + 1e-9));
    f.L_ = (hw.nodes + f.D_ - 1) / f.D_ * R;
  } else if (f.rails_) {
    f.D_ = spec.nodes_per_su;
    f.L_ = (hw.nodes + f.D_ - 1) / f.D_ * R;
  } else {
    f.D_ = spec.leaf_down_ports > 0 ? spec.leaf_down_ports
                                    : static_cast<int>(std::floor(kl * r / (r + 1) + 1e-9));
    f.L_ = (E + f.D_ - 1) / f.D_;
  }
  // Uplinks serve the down ports in use: a rail leaf of a partly filled scalable unit is cabled
  // up for the SU fraction populated (halves: 1/2, 1/4, ... of nodes_per_su, so a 31-node SU
  // keeps the full 32-node uplinks of the reference design, and 2 nodes do not get 32 each).
  int down_used = f.D_;
  if (f.rails_)
    while (down_used % 2 == 0 && down_used / 2 >= hw.nodes) down_used /= 2;
  else
    down_used = std::min(f.D_, E);
  f.U_ = static_cast<int>(std::ceil(down_used / r - 1e-9));
  if (f.L_ == 1 && spec.tiers != 2 && spec.tiers != 3) f.U_ = 0;  // one switch is the whole fabric
  if (f.rail_only_ && f.L_ == R && spec.tiers != 2) f.U_ = 0;     // one switch per rail
  if (f.D_ + f.U_ > kl) {
    throw InputError(
        file, "fabric.leaf_switch", ports_text(hw.leaf, kl, B),
        fmt::format("a leaf switch with at least {} ports for {} {} + {} uplinks at {}:1 "
                    "(lower fabric.{}, raise fabric.oversubscription or pick a larger switch)",
                    f.D_ + f.U_, f.D_, f.rails_ ? "node links per rail leaf" : "NIC links", f.U_, r,
                    f.rails_ ? "nodes_per_su" : "leaf_down_ports"));
  }
  if (spec.tiers == 1 && f.L_ > (f.rail_only_ ? R : 1))
    throw InputError(file, "fabric.tiers", "1",
                     fmt::format("2 or 3: {} endpoints need {} leaf switches", E, f.L_));

  f.tiers_ = f.U_ == 0 ? 1 : 2;
  int ks = 0, kc = 0;
  if (f.U_ > 0) {
    ks = radix_of(hw.spine, "spine_switch");
    // Rail-only: each rail's spines serve that rail's leaves only.
    const int LS = f.rail_only_ ? f.L_ / R : f.L_;
    bool two = LS <= ks && spec.tiers != 3;
    if (f.rail_only_ && !two)
      throw InputError(
          file, "fabric.spine_switch", ports_text(hw.spine, ks, B),
          fmt::format("a spine with at least {} ports: {} leaves per rail exceed a 2-tier rail "
                      "(fewer nodes, larger switches or a rail_optimized fabric)",
                      LS, LS));
    if (spec.tiers == 2 && !two)
      throw InputError(file, "fabric.tiers", "2",
                       fmt::format("3: {} leaves exceed what {}-port spines reach in 2 tiers ({})",
                                   f.L_, ks, ks));
    if (two) {
      f.tiers_ = 2;
      f.pods_ = 1;
      f.PL_ = f.L_;
      // Fewest spines that hold every uplink, with each leaf's U uplinks spread evenly (S | U).
      // When U has no such divisor (U prime, say), take the fewest spines S and round U up to a
      // multiple of S, giving back leaf down ports if the leaf is full (fat-tree only; the ratio
      // only improves): so oversubscription never needs more spines than 1:1.
      const int s_min = static_cast<int>((static_cast<long long>(LS) * f.U_ + ks - 1) / ks);
      f.S_ = smallest_divisor_covering(f.U_, static_cast<long long>(LS) * f.U_, ks);
      for (int S = std::max(1, s_min); !f.rails_ && spec.leaf_down_ports <= 0 && S < f.S_; ++S) {
        const int U = (f.U_ + S - 1) / S * S;
        const int D = std::min(f.D_, kl - U);
        if (D < 1) break;
        const int L = (E + D - 1) / D;
        if (static_cast<long long>(L) * (U / S) > ks || L > ks) continue;
        f.S_ = S, f.U_ = U, f.D_ = D, f.L_ = L;
        f.PL_ = L;
        break;
      }
      if (f.S_ == 0) f.S_ = f.U_;
    } else {
      f.tiers_ = 3;
      kc = radix_of(hw.core, "core_switch");
      int ds = static_cast<int>(std::floor(ks * sr / (sr + 1) + 1e-9));
      f.PL_ = f.rails_ ? ds / R * R : ds;
      if (f.PL_ < 1 || (f.rails_ && f.PL_ < R))
        throw InputError(
            file, "fabric.spine_switch", ports_text(hw.spine, ks, B),
            fmt::format("a spine switch with at least {} down ports (one per rail leaf of a "
                        "scalable unit)",
                        R));
      f.S_ = f.U_;
      f.V_ = static_cast<int>(std::ceil(f.PL_ / sr - 1e-9));
      if (f.PL_ + f.V_ > ks)
        throw InputError(file, "fabric.spine_switch", ports_text(hw.spine, ks, B),
                         fmt::format("at least {} ports ({} leaves per pod + {} uplinks)",
                                     f.PL_ + f.V_, f.PL_, f.V_));
      f.pods_ = (f.L_ + f.PL_ - 1) / f.PL_;
      f.C_ = smallest_divisor_covering(f.V_, static_cast<long long>(f.pods_) * f.V_, kc);
      if (f.C_ == 0)
        throw InputError(
            file, "fabric.core_switch", ports_text(hw.core, kc, B),
            fmt::format("a core switch with at least {} ports: {} pods of {} leaves exceed a "
                        "3-tier fabric of this radix (fewer nodes or a larger radix)",
                        f.pods_, f.pods_, f.PL_));
    }
  }

  // Devices.
  const int P = f.planes_;
  const int spines = f.tiers_ >= 2 ? f.pods_ * f.S_ * (f.rail_only_ ? R : 1) : 0;
  const int cores = f.tiers_ == 3 ? f.S_ * f.C_ : 0;
  f.leaf_dev_ = static_cast<std::uint32_t>(f.devices().size());
  for (int i = 0; i < P * f.L_; ++i)
    f.add_device(DeviceKind::Switch, static_cast<std::uint32_t>(i), 0, 0);
  f.spine_dev_ = static_cast<std::uint32_t>(f.devices().size());
  for (int i = 0; i < P * spines; ++i)
    f.add_device(DeviceKind::Switch, static_cast<std::uint32_t>(i), 1, 0);
  f.core_dev_ = static_cast<std::uint32_t>(f.devices().size());
  for (int i = 0; i < P * cores; ++i)
    f.add_device(DeviceKind::Switch, static_cast<std::uint32_t>(i), 2, 0);

  // Links.
  const double bw = B * eff;
  const double hop = hw.transport.per_hop_latency_s, cab = hw.cable_latency_s;
  const double to_leaf = cab + hw.leaf.latency_s + hop, to_spine = cab + hw.spine.latency_s + hop,
               to_core = cab + hw.core.latency_s + hop, to_nic = cab + hw.nic.latency_s;
  std::vector<long long> leaf_used(static_cast<std::size_t>(P * f.L_), 0);
  std::vector<long long> spine_used(static_cast<std::size_t>(P * spines), 0);
  std::vector<long long> core_used(static_cast<std::size_t>(P * cores), 0);
  f.reserve_links(2 * (static_cast<std::size_t>(E) * P + static_cast<std::size_t>(P) * f.L_ * f.U_ +
                       (f.tiers_ == 3 ? static_cast<std::size_t>(P) * spines * f.V_ : 0)));
  f.acc_base_ = static_cast<std::uint32_t>(f.links().size());
  for (int i = 0; i < E; ++i)
    for (int p = 0; p < P; ++p) {
      int l = p * f.L_ + f.leaf_of(i);
      ++leaf_used[l];
      f.add_cable(f.nic_device(i), f.leaf_dev_ + static_cast<std::uint32_t>(l), bw, to_leaf, bw,
                  to_nic, Tier::Access);
    }
  f.lu_base_ = static_cast<std::uint32_t>(f.links().size());
  for (int l = 0; l < P * f.L_; ++l) {
    int p = l / f.L_, pod = (l % f.L_) / std::max(f.PL_, 1);
    for (int u = 0; u < f.U_; ++u) {
      std::uint32_t s =
          f.rail_only_ ? static_cast<std::uint32_t>(p * spines + (l % f.L_) % R * f.S_ + u % f.S_)
                       : f.spine_index(p, pod, u % f.S_);
      ++leaf_used[l];
      ++spine_used[s];
      f.add_cable(f.leaf_dev_ + static_cast<std::uint32_t>(l), f.spine_dev_ + s, bw, to_spine, bw,
                  to_leaf, Tier::LeafSpine);
    }
  }
  f.su_base_ = static_cast<std::uint32_t>(f.links().size());
  if (f.tiers_ == 3) {
    // Spines of a pod past the last leaf still exist (pods are built whole) but a partial pod's
    // spines carry fewer leaf links.
    for (int s = 0; s < P * spines; ++s) {
      int p = s / spines, j = s % f.S_;
      for (int v = 0; v < f.V_; ++v) {
        int c = p * cores + j * f.C_ + v % f.C_;
        ++spine_used[s];
        ++core_used[c];
        f.add_cable(f.spine_dev_ + static_cast<std::uint32_t>(s),
                    f.core_dev_ + static_cast<std::uint32_t>(c), bw, to_core, bw, to_spine,
                    Tier::SpineCore);
      }
    }
  }
  for (auto used : spine_used)
    if (used > ks) throw InternalError("clos: spine over-subscribed its ports");
  for (auto used : core_used)
    if (used > kc) throw InternalError("clos: core over-subscribed its ports");

  // Facts.
  auto group = [&](const char* role, const SwitchSpec& s, int k,
                   const std::vector<long long>& used) {
    SwitchGroup g;
    g.role = role, g.switch_id = s.id, g.count = static_cast<int>(used.size()), g.radix = k;
    int per_cage = std::max(1, k / std::max(s.cages, 1));
    for (auto u : used) g.ports_used += u, g.cages_used += (u + per_cage - 1) / per_cage;
    return g;
  };
  facts.tiers = f.tiers_;
  facts.link_bw_Bps = B;
  facts.node_ports = static_cast<long long>(E) * P;
  facts.switches.push_back(group("leaf", hw.leaf, kl, leaf_used));
  if (spines) facts.switches.push_back(group("spine", hw.spine, ks, spine_used));
  if (cores) facts.switches.push_back(group("core", hw.core, kc, core_used));
  facts.cables.push_back({Tier::Access, static_cast<long long>(E) * P, B});
  if (f.U_) facts.cables.push_back({Tier::LeafSpine, static_cast<long long>(P) * f.L_ * f.U_, B});
  if (cores)
    facts.cables.push_back({Tier::SpineCore, static_cast<long long>(P) * spines * f.V_, B});
  double bis = E * B / 2;
  if (f.U_) bis = std::min(bis, static_cast<double>(f.L_) * f.U_ * B / 2);
  if (cores) bis = std::min(bis, static_cast<double>(spines) * f.V_ * B / 2);
  facts.bisection_Bps = bis * P;
  const char* name = f.L_ == 1 && f.tiers_ == 1           ? "single switch"
                     : spec.kind == FabricKind::FatTree   ? "fat-tree"
                     : spec.kind == FabricKind::DualPlane ? "dual-plane rail-optimized fat-tree"
                     : spec.kind == FabricKind::RailOnly  ? "rail-only"
                                                          : "rail-optimized fat-tree";
  std::string sizes = fmt::format("{} leaf", P * f.L_);
  if (spines) sizes += fmt::format(", {} spine", P * spines);
  if (cores) sizes += fmt::format(", {} core", P * cores);
  f.description_ =
      fmt::format("{}, {} tier{} ({}), {}:1{}{}, {}", name, f.tiers_, f.tiers_ > 1 ? "s" : "",
                  sizes, r, f.rails_ ? fmt::format(", {} nodes per SU", f.D_) : "",
                  P > 1 ? fmt::format(", {} planes", P) : "",
                  std::string(to_string(spec.routing)) + (spec.pxn ? ", PXN" : ""));
  facts.description = f.description_;
  return t;
}

}  // namespace tutti::detail
