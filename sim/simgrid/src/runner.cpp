// The SimGrid reference engine: collectives and whole Programs replayed flow by flow on SimGrid
// (simgrid_engine.hpp). Everything runs in maestro: kernel timers (flow latencies, NCCL fixed
// latencies) and completion callbacks start the next activities, so no actor stacks are needed
// and each comm starts at the exact simulated date its dependencies allow.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <map>
#include <simgrid/kernel/Timer.hpp>
#include <sstream>
#include <tuple>

#include "sg_platform.hpp"
#include "tutti/core/error.hpp"
#include "tutti/models/workload.hpp"
#include "tutti/sim/attribution.hpp"
#include "tutti/sim/compute_model.hpp"
#include "tutti/sim/network.hpp"
#include "tutti/sim/op_graph.hpp"
#include "tutti/sim/slots.hpp"
#include "tutti/simgrid/simgrid_engine.hpp"
#include "tutti/topologies/cluster.hpp"

namespace tutti {

namespace sg4 = simgrid::s4u;
using simgrid::kernel::timer::Timer;

namespace {

// Host speed of the GPU hosts. Execs carry op_time_s * kHostFlops flops, so their SimGrid
// duration is op_time_s whatever the GPU's nominal rate.
constexpr double kHostFlops = 1e12;

/// One SimGrid world in the child: platform, flow replay of collective plans, and (optionally)
/// the Program's ranks.
class World {
 public:
  World(const Topology& topo, const CalibrationProfile& profile, std::uint64_t seed)
      : topo_(topo), net_(topo, profile), seed_(seed), engine_(sg::make_engine()) {
    std::vector<double> cap(net_.num_links());
    for (std::uint32_t l = 0; l < cap.size(); ++l) cap[l] = net_.capacity_Bps(l);
    zone_ = new sg::TopologyZone(topo, kHostFlops, cap, seed);
    zone_->get_iface()->seal();
    link_bytes_.assign(net_.num_links(), 0.0);
    sg4::Activity::on_completion_cb([this](sg4::Activity const& a) { on_done(a); });
  }

  /// Starts a collective plan now; `on_finish(inst)` runs when its last phase is done.
  std::uint32_t start_plan(const CollectivePlan* plan,
                           std::function<void(std::uint32_t)> on_finish) {
    const std::uint32_t id = take_slot(insts_, free_insts_);
    Inst& in = insts_[id];
    in.plan = plan;
    in.phase = 0;
    in.step = 0;
    in.pending = 0;
    in.on_finish = std::move(on_finish);
    if (plan->fixed_latency_s > 0)
      Timer::set(now() + plan->fixed_latency_s, [this, id] { run_step(id); });
    else
      run_step(id);
    return id;
  }

  /// Starts an Exec of `seconds` on GPU `rank`; `on_finish` runs when it is done.
  void start_exec(int rank, double seconds, std::function<void()> on_finish) {
    ++execs_;
    if (!(seconds > 0)) {
      Timer::set(now(), std::move(on_finish));
      return;
    }
    sg4::ExecPtr x = sg4::Exec::init();
    x->set_flops_amount(seconds * kHostFlops);
    x->set_host(zone_->gpus()[rank]);
    x->set_data(new_tag(Tag{0, 0, std::move(on_finish), x}));
    x->start();
  }

  double run() {
    auto t0 = std::chrono::steady_clock::now();
    engine_.run();
    wall_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return now();
  }

  static double now() { return sg4::Engine::get_clock(); }
  double flows() const { return flows_; }
  double execs() const { return execs_; }
  double wall_s() const { return wall_s_; }
  const std::vector<double>& link_bytes() const { return link_bytes_; }
  const FlowNetwork& net() const { return net_; }

 private:
  struct Inst {
    const CollectivePlan* plan = nullptr;
    std::size_t phase = 0;
    int step = 0;
    std::size_t pending = 0;
    std::function<void(std::uint32_t)> on_finish;
  };
  struct Tag {
    int kind = 0;  // 0 exec, 1 comm
    std::uint32_t inst = 0;
    std::function<void()> on_exec_done;
    sg4::ActivityPtr activity;  // keeps the s4u object alive until it completes
  };

  void* new_tag(Tag t) {
    const std::uint32_t i = take_slot(tags_, free_tags_);
    tags_[i] = std::move(t);
    return reinterpret_cast<void*>(static_cast<std::uintptr_t>(i) + 1);
  }

  void run_step(std::uint32_t id) {
    for (;;) {
      Inst& in = insts_[id];
      if (in.phase >= in.plan->phases.size()) {
        auto fin = std::move(in.on_finish);
        in.on_finish = nullptr;
        free_insts_.push_back(id);
        if (fin) fin(id);
        return;
      }
      const CollPhase& ph = in.plan->phases[in.phase];
      std::size_t n = 0;
      for (const CollFlow& f : ph.flows)
        if (f.src_gpu != f.dst_gpu)
          n += static_cast<std::size_t>(topo_.paths(f.src_gpu, f.dst_gpu));
      if (n == 0 || ph.repeat <= 0) {  // nothing crosses a link: the phase takes no time
        in.phase++;
        in.step = 0;
        continue;
      }
      in.pending = n;
      for (std::size_t k = 0; k < ph.flows.size(); ++k) {
        const CollFlow& f = ph.flows[k];
        if (f.src_gpu == f.dst_gpu) continue;
        // Adaptive routing / spraying: one comm of bytes / np per equal-cost path (as the native
        // engine), each on its own explicit route (TopologyZone::select_path).
        const int np = topo_.paths(f.src_gpu, f.dst_gpu);
        for (int part = 0; part < np; ++part) {
          topo_.route_path(f.src_gpu, f.dst_gpu, flow_hash(seed_, f.src_gpu, f.dst_gpu),
                           np > 1 ? part : -1, path_);
          const double lat = net_.path_latency_s(path_.data(), path_.size());
          for (std::uint32_t l : path_) link_bytes_[l] += f.bytes / np;
          ++flows_;
          if (lat > 0)
            Timer::set(now() + lat, [this, id, k, part, np] { start_comm(id, k, part, np); });
          else
            start_comm(id, k, part, np);
        }
      }
      return;
    }
  }

  void start_comm(std::uint32_t id, std::size_t k, int part, int np) {
    Inst& in = insts_[id];
    const CollFlow& f = in.plan->phases[in.phase].flows[k];
    const auto bytes = static_cast<std::uint64_t>(std::llround(f.bytes / np));
    if (bytes == 0) {  // a flow of no bytes ends when its latency is paid
      flow_done(id);
      return;
    }
    if (np > 1) zone_->select_path(f.src_gpu, f.dst_gpu, part);
    sg4::CommPtr c =
        sg4::Comm::sendto_async(zone_->gpus()[f.src_gpu], zone_->gpus()[f.dst_gpu], bytes);
    zone_->select_path(-1, -1, -1);
    c->set_data(new_tag(Tag{1, id, nullptr, c}));
  }

  void flow_done(std::uint32_t id) {
    Inst& in = insts_[id];
    check_internal(in.pending > 0, "simgrid: flow completion without a pending flow");
    if (--in.pending > 0) return;
    if (++in.step >= in.plan->phases[in.phase].repeat) {
      in.step = 0;
      in.phase++;
    }
    run_step(id);
  }

  void on_done(sg4::Activity const& a) {
    void* d = a.get_data<void>();
    if (!d) return;
    const std::uint32_t i = static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(d) - 1);
    Tag t = std::move(tags_[i]);
    tags_[i] = Tag{};
    free_tags_.push_back(i);
    // The activity whose callback runs must outlive it: release it two generations later.
    if (graveyard_.size() > 4096) {
      old_graveyard_.clear();
      std::swap(old_graveyard_, graveyard_);
    }
    graveyard_.push_back(std::move(t.activity));
    if (t.kind == 1)
      flow_done(t.inst);
    else
      t.on_exec_done();
  }

  const Topology& topo_;
  FlowNetwork net_;
  std::uint64_t seed_;
  sg4::Engine& engine_;
  sg::TopologyZone* zone_ = nullptr;
  std::deque<Inst> insts_;
  std::vector<std::uint32_t> free_insts_;
  std::vector<Tag> tags_;
  std::vector<std::uint32_t> free_tags_;
  std::vector<sg4::ActivityPtr> graveyard_, old_graveyard_;
  std::vector<std::uint32_t> path_;
  std::vector<double> link_bytes_;
  double flows_ = 0, execs_ = 0, wall_s_ = 0;
};

// ---- serialisation of child results ---------------------------------------------------------

void put(std::ostringstream& os, double v) {
  os << v << ' ';
}
double get(std::istringstream& is) {
  double v = 0;
  is >> v;
  if (!is) throw InternalError("simgrid: malformed result from the SimGrid child");
  return v;
}
std::ostringstream out_stream() {
  std::ostringstream os;
  os.precision(17);
  return os;
}

void put_stats(std::ostringstream& os, const World& w) {
  put(os, w.flows());
  put(os, w.execs());
  put(os, w.wall_s());
  put(os, sg::peak_rss_bytes());
}
void get_stats(std::istringstream& is, SimgridStats* s) {
  SimgridStats t;
  t.flows = get(is);
  t.execs = get(is);
  t.wall_s = get(is);
  t.peak_rss_bytes = get(is);
  if (s) *s = t;
}

// ---- Program runner -------------------------------------------------------------------------

/// A rank class's op graph (op_graph.hpp, shared with the native engine) and the class itself.
struct ClassInfo : OpGraph {
  const RankClass* rc = nullptr;
};

class ProgramRun {
 public:
  ProgramRun(const Program& p, const SimCluster& c, const CalibrationProfile& prof,
             const ProgramSimOptions& o)
      : prog_(p),
        cl_(c),
        prof_(prof),
        opt_(o),
        topo_(*c.topology),
        ctx_(make_collective_context(topo_, prof, c.nvls, c.sharp, p)) {}

  void build();
  std::string run();  // in the child: simulate, return the serialised result
  double flow_count();

 private:
  int per_stage() const { return prog_.layout.tp * prog_.layout.cp * prog_.layout.dp; }
  std::uint32_t class_of(int rank) const { return class_of_stage_.at(rank / per_stage()); }
  std::size_t slot(int rank, std::uint32_t op) const { return offset_[rank] + op; }
  const CollectivePlan* plan_for(Coll coll, double bytes, GroupDim dim,
                                 const std::vector<int>& group);
  const CollectivePlan* p2p_for(int src, int dst, double bytes);
  void release(int r, std::uint32_t i);
  void drain();
  void start_op(int r, std::uint32_t i);
  void complete_op(int r, std::uint32_t i);
  void begin(const CollectivePlan* plan, std::vector<std::pair<int, std::uint32_t>> parts);

  const Program& prog_;
  const SimCluster& cl_;
  const CalibrationProfile& prof_;
  const ProgramSimOptions& opt_;
  const Topology& topo_;
  CollectiveContext ctx_;
  std::vector<ClassInfo> cls_;
  std::vector<std::uint32_t> class_of_stage_;
  std::map<std::pair<std::uint16_t, std::uint32_t>, std::uint32_t> xexpected_;
  std::vector<std::size_t> offset_;
  std::vector<std::uint32_t> indeg_;
  std::vector<double> start_, end_, rendezvous_;
  ReadyOps<std::pair<int, std::uint32_t>> ready_;
  std::map<std::tuple<int, int, int, double, std::vector<int>>, std::unique_ptr<CollectivePlan>>
      plans_;
  std::map<std::pair<int, std::uint32_t>, std::vector<std::pair<int, std::uint32_t>>> arrivals_;
  std::map<std::tuple<std::uint16_t, std::uint32_t, int>,
           std::vector<std::pair<int, std::uint32_t>>>
      xarrivals_;
  std::map<std::tuple<int, int, std::uint32_t>, std::pair<int, std::uint32_t>> p2p_wait_;
  World* world_ = nullptr;
  std::size_t done_ = 0, total_ = 0;
};

void ProgramRun::build() {
  const Layout& L = prog_.layout;
  if (prog_.world != L.gpus())
    throw InternalError("program: world " + std::to_string(prog_.world) + " != layout GPUs " +
                        std::to_string(L.gpus()));
  if (prog_.world > topo_.num_gpus())
    throw InputError("the program needs " + std::to_string(prog_.world) + " GPUs but cluster " +
                     cl_.name + " has " + std::to_string(topo_.num_gpus()));
  cls_.resize(prog_.classes.size());
  class_of_stage_.assign(L.pp, 0xffffffffu);
  for (std::size_t c = 0; c < prog_.classes.size(); ++c) {
    const RankClass& rc = prog_.classes[c];
    check_internal(rc.stage >= 0 && rc.stage < L.pp, "program: class stage out of range");
    class_of_stage_[rc.stage] = static_cast<std::uint32_t>(c);
    ClassInfo& s = cls_[c];
    static_cast<OpGraph&>(s) = build_op_graph(rc);
    s.rc = &rc;
    for (std::size_t i = 0; i < rc.ops.size(); ++i) {
      const Op& op = rc.ops[i];
      if (op.kind == OpKind::Collective && op.group == GroupDim::PP)
        ++xexpected_[{op.name, s.occurrence[i]}];
    }
  }
  for (int st = 0; st < L.pp; ++st)
    check_internal(class_of_stage_[st] != 0xffffffffu,
                   "program: a pipeline stage has no rank class");
  offset_.assign(prog_.world + 1, 0);
  for (int r = 0; r < prog_.world; ++r)
    offset_[r + 1] = offset_[r] + cls_[class_of(r)].rc->ops.size();
  total_ = offset_[prog_.world];
}

const CollectivePlan* ProgramRun::plan_for(Coll coll, double bytes, GroupDim dim,
                                           const std::vector<int>& group) {
  auto key = std::make_tuple(0, static_cast<int>(coll), static_cast<int>(dim), bytes, group);
  auto it = plans_.find(key);
  if (it != plans_.end()) return it->second.get();
  auto p = std::make_unique<CollectivePlan>(plan_collective(coll, bytes, group, ctx_));
  return plans_.emplace(std::move(key), std::move(p)).first->second.get();
}

const CollectivePlan* ProgramRun::p2p_for(int src, int dst, double bytes) {
  auto key = std::make_tuple(1, src, dst, bytes, std::vector<int>{});
  auto it = plans_.find(key);
  if (it != plans_.end()) return it->second.get();
  auto p = std::make_unique<CollectivePlan>(plan_p2p(src, dst, bytes, ctx_));
  p->fixed_latency_s = prof_.nccl.p2p_latency_s;  // as the native engine
  return plans_.emplace(std::move(key), std::move(p)).first->second.get();
}

double ProgramRun::flow_count() {
  const Layout& L = prog_.layout;
  double flows = 0;
  auto plan_flows = [](const CollectivePlan& p) {
    double n = 0;
    for (const auto& ph : p.phases) {
      double k = 0;
      for (const auto& f : ph.flows) k += f.src_gpu != f.dst_gpu;
      n += k * ph.repeat;
    }
    return n;
  };
  for (std::size_t c = 0; c < cls_.size(); ++c) {
    const RankClass& rc = *cls_[c].rc;
    const int first = rc.stage * per_stage();
    std::map<std::tuple<int, int, double>, double>
        per_op;  // (coll, dim, bytes) -> flows of all groups
    for (const Op& op : rc.ops) {
      if (op.kind == OpKind::Send) {
        flows += per_stage();
        continue;
      }
      if (op.kind != OpKind::Collective || op.group == GroupDim::PP) continue;
      auto key = std::make_tuple(static_cast<int>(op.coll), static_cast<int>(op.group), op.bytes);
      auto it = per_op.find(key);
      if (it == per_op.end()) {
        double n = 0;
        std::vector<char> seen(per_stage(), 0);
        for (int r = first; r < first + per_stage(); ++r) {
          if (seen[r - first]) continue;
          std::vector<int> g = group_ranks(L, r, op.group);
          for (int x : g) seen[x - first] = 1;
          n += plan_flows(*plan_for(op.coll, op.bytes, op.group, g));
        }
        it = per_op.emplace(key, n).first;
      }
      flows += it->second;
    }
  }
  return flows;
}

void ProgramRun::release(int r, std::uint32_t i) {
  ready_.release(indeg_[slot(r, i)], {r, i}, "simgrid");
}

void ProgramRun::drain() {
  ready_.drain([this](std::pair<int, std::uint32_t> k) { start_op(k.first, k.second); });
}

void ProgramRun::complete_op(int r, std::uint32_t i) {
  const ClassInfo& s = cls_[class_of(r)];
  end_[slot(r, i)] = World::now();
  ++done_;
  if (opt_.progress) opt_.progress(done_, total_);
  release_successors(s, i, [&](std::uint32_t j) { release(r, j); });
}

void ProgramRun::begin(const CollectivePlan* plan,
                       std::vector<std::pair<int, std::uint32_t>> parts) {
  for (auto [r, i] : parts) rendezvous_[slot(r, i)] = World::now();
  world_->start_plan(plan, [this, parts = std::move(parts)](std::uint32_t) {
    for (auto [r, i] : parts) complete_op(r, i);
    drain();
  });
}

void ProgramRun::start_op(int r, std::uint32_t i) {
  const std::uint32_t c = class_of(r);
  const ClassInfo& s = cls_[c];
  const Op& op = s.rc->ops[i];
  start_[slot(r, i)] = World::now();
  if (is_compute(op.kind)) {
    const double t = op_time_s(op, cl_.gpu, prof_) * opt_.compute_slowdown;
    world_->start_exec(r, t, [this, r, i] {
      complete_op(r, i);
      drain();
    });
    return;
  }
  const Layout& L = prog_.layout;
  if (op.kind == OpKind::Collective) {
    if (op.group == GroupDim::PP) {
      const int j = r % per_stage();
      auto key = std::make_tuple(op.name, s.occurrence[i], j);
      auto& parts = xarrivals_[key];
      parts.push_back({r, i});
      if (parts.size() < xexpected_[{op.name, s.occurrence[i]}]) return;
      std::vector<int> g;
      for (auto [pr, pi] : parts) g.push_back(pr);
      auto p = std::move(parts);
      xarrivals_.erase(key);
      begin(plan_for(op.coll, op.bytes, op.group, g), std::move(p));
      return;
    }
    std::vector<int> g = group_ranks(L, r, op.group);
    const int leader = *std::min_element(g.begin(), g.end());
    auto key = std::make_pair(leader, i);
    auto& parts = arrivals_[key];
    parts.push_back({r, i});
    if (parts.size() < g.size()) return;
    auto p = std::move(parts);
    arrivals_.erase(key);
    begin(plan_for(op.coll, op.bytes, op.group, g), std::move(p));
    return;
  }
  // Send / Recv: rendezvous with the peer stage's op of the same tag; the stream goes on.
  const int stage = s.rc->stage;
  const int peer_stage = stage + op.peer_delta;
  if (peer_stage < 0 || peer_stage >= L.pp)
    throw InternalError("program: send/recv to stage " + std::to_string(peer_stage) +
                        " that does not exist");
  const int peer = r + op.peer_delta * per_stage();
  if (s.stream_next[i] >= 0) release(r, static_cast<std::uint32_t>(s.stream_next[i]));
  const int src = op.kind == OpKind::Send ? r : peer, dst = op.kind == OpKind::Send ? peer : r;
  auto key = std::make_tuple(src, dst, op.tag);
  auto it = p2p_wait_.find(key);
  if (it == p2p_wait_.end()) {
    p2p_wait_.emplace(key, std::make_pair(r, i));
    return;
  }
  auto other = it->second;
  p2p_wait_.erase(it);
  const Op& oop = cls_[class_of(other.first)].rc->ops[other.second];
  check_internal(oop.kind != op.kind, "program: two sends (or two recvs) share a tag");
  const double bytes = op.kind == OpKind::Send ? op.bytes : oop.bytes;
  begin(p2p_for(src, dst, bytes), {{other.first, other.second}, {r, i}});
}

std::string ProgramRun::run() {
  World world(topo_, prof_, opt_.seed);
  world_ = &world;
  indeg_.resize(total_);
  start_.assign(total_, -1);
  end_.assign(total_, -1);
  rendezvous_.assign(total_, -1);
  for (int r = 0; r < prog_.world; ++r) {
    const ClassInfo& s = cls_[class_of(r)];
    std::copy(s.indeg0.begin(), s.indeg0.end(),
              indeg_.begin() + static_cast<std::ptrdiff_t>(offset_[r]));
  }
  // Ranks in order, ops in reverse so that the LIFO ready list starts them in program order.
  for (int r = prog_.world - 1; r >= 0; --r) {
    const ClassInfo& s = cls_[class_of(r)];
    for (std::size_t i = s.indeg0.size(); i-- > 0;)
      if (s.indeg0[i] == 0) ready_.push({r, static_cast<std::uint32_t>(i)});
  }
  simgrid::kernel::timer::Timer::set(0.0, [this] { drain(); });
  world.run();
  if (done_ != total_) {
    for (int r = 0; r < prog_.world; ++r) {
      const ClassInfo& s = cls_[class_of(r)];
      for (std::uint32_t i = 0; i < s.rc->ops.size(); ++i)
        if (end_[slot(r, i)] < 0)
          throw InternalError("program deadlocks under SimGrid: rank " + std::to_string(r) +
                              " op " + std::to_string(i) + " (" +
                              prog_.names.at(s.rc->ops[i].name) + ", " +
                              to_string(s.rc->ops[i].kind) + ") never " +
                              (start_[slot(r, i)] >= 0 ? "finished" : "started"));
    }
  }
  // Iteration time and the rank that finishes last (ties: lowest rank).
  double iter = 0;
  int crit = 0;
  for (int r = 0; r < prog_.world; ++r)
    for (std::size_t k = offset_[r]; k < offset_[r + 1]; ++k)
      if (end_[k] > iter + 1e-15) {
        iter = end_[k];
        crit = r;
      }
  // Breakdown on the critical rank, by the rules every engine with op timings shares.
  auto timeline = [&](int rr) {
    const std::size_t o = offset_[rr];
    return OpTimeline{cls_[class_of(rr)].rc, start_.data() + o, end_.data() + o,
                      rendezvous_.data() + o};
  };
  OpTimeline peer_tl;
  const PeerTimeline peer = [&](int delta) -> const OpTimeline* {
    const int pr = crit + delta * per_stage();
    if (pr < 0 || pr >= prog_.world) return nullptr;
    peer_tl = timeline(pr);
    return &peer_tl;
  };
  const Attribution at = attribute_timeline(timeline(crit), peer, iter);
  Breakdown b = at.breakdown;
  const double gemm = at.gemm_busy_s, mem = at.memory_busy_s, busy = at.comm_busy_s;
  // MoE parts: of the rank class (its first rank) with the most MoE busy time, as the native
  // engine reports them.
  {
    double moe_best = 0;
    std::vector<char> seen(cls_.size(), 0);
    for (int rr = 0; rr < prog_.world; ++rr) {
      const std::uint32_t c = class_of(rr);
      if (seen[c]) continue;
      seen[c] = 1;
      double tot = 0;
      const EnumArray<MoePart, double> m = moe_busy(timeline(rr), &tot);
      if (tot > moe_best) {
        moe_best = tot;
        b.moe_s = m;
      }
    }
  }

  std::ostringstream os = out_stream();
  put_stats(os, world);
  put(os, iter);
  put(os, b.compute_s);
  for (double x : b.exposed_comm_s) put(os, x);
  put(os, b.bubble_s);
  put(os, b.other_s);
  put(os, gemm);
  put(os, mem);
  put(os, busy);
  for (double x : b.moe_s) put(os, x);
  const auto& lb = world.link_bytes();
  std::size_t used = 0;
  for (double x : lb) used += x > 0;
  put(os, static_cast<double>(used));
  for (std::uint32_t l = 0; l < lb.size(); ++l)
    if (lb[l] > 0) {
      put(os, l);
      put(os, lb[l]);
    }
  return os.str();
}

}  // namespace

double simulate_collectives_simgrid(const std::vector<CollectivePlan>& plans, const Topology& topo,
                                    const CalibrationProfile& profile, std::uint64_t seed,
                                    std::vector<double>* finish_s, SimgridStats* stats) {
  const std::string out = sg::run_isolated([&]() -> std::string {
    World world(topo, profile, seed);
    std::vector<double> fin(plans.size(), 0);
    simgrid::kernel::timer::Timer::set(0.0, [&] {
      for (std::size_t p = 0; p < plans.size(); ++p)
        world.start_plan(&plans[p], [&fin, p](std::uint32_t) { fin[p] = World::now(); });
    });
    world.run();
    std::ostringstream os = out_stream();
    put_stats(os, world);
    for (double f : fin) put(os, f);
    return os.str();
  });
  std::istringstream is(out);
  get_stats(is, stats);
  std::vector<double> fin(plans.size());
  double t = 0;
  for (double& f : fin) {
    f = get(is);
    t = std::max(t, f);
  }
  if (finish_s) *finish_s = fin;
  return t;
}

double simgrid_flows_per_cpu_second(int gpus) {
  return 134e3 * std::pow(64.0 / std::max(gpus, 1), 0.92);
}

double simgrid_flow_count(const Program& program, const SimCluster& cluster,
                          const CalibrationProfile& profile) {
  ProgramRun run(program, cluster, profile, ProgramSimOptions{});
  run.build();
  return run.flow_count();
}

SimResult simulate_program_simgrid(const Program& program, const SimCluster& cluster,
                                   const CalibrationProfile& profile,
                                   const ProgramSimOptions& options, SimgridStats* stats) {
  check_internal(cluster.topology != nullptr, "simulate_program_simgrid: cluster without topology");
  if (!(options.compute_slowdown >= 1.0))
    throw InputError("compute_slowdown", "compute_slowdown",
                     std::to_string(options.compute_slowdown), ">= 1");
  ProgramRun run(program, cluster, profile, options);
  run.build();
  const double flows = run.flow_count();
  const double rate = simgrid_flows_per_cpu_second(program.world);
  const double est_s = flows / rate;
  char est[200];
  std::snprintf(
      est, sizeof est,
      "%.3g flows, about %.3g CPU-minutes of SimGrid at %.3gk flows per CPU-second (fit of "
      "bench/simgrid.md, measured at 64-256 GPUs)",
      flows, est_s / 60, rate / 1e3);
  if (program.world > kSimgridMaxGpus)
    throw InputError("--engine simgrid: " + std::to_string(program.world) +
                     " GPUs is beyond the SimGrid engine's " + std::to_string(kSimgridMaxGpus) +
                     "-GPU limit (" + est + "); use --engine native, which runs it in seconds");
  if (est_s > kSimgridMaxMinutes * 60)
    throw InputError(std::string("--engine simgrid: this iteration needs ") + est +
                     ", more than the " + std::to_string(static_cast<int>(kSimgridMaxMinutes)) +
                     "-minute limit; use --engine native, or fewer GPUs / micro-batches");
  auto wall0 = std::chrono::steady_clock::now();
  const std::string out = sg::run_isolated([&]() -> std::string { return run.run(); });
  std::istringstream is(out);
  get_stats(is, stats);
  SimResult r;
  r.engine = "simgrid";
  r.iteration_time_s = get(is);
  r.breakdown.compute_s = get(is);
  for (double& x : r.breakdown.exposed_comm_s) x = get(is);
  r.breakdown.bubble_s = get(is);
  r.breakdown.other_s = get(is);
  r.gemm_busy_s = get(is);
  r.memory_busy_s = get(is);
  r.comm_busy_s = get(is);
  for (double& x : r.breakdown.moe_s) x = get(is);
  const auto used = static_cast<std::size_t>(get(is));
  const Topology& topo = *cluster.topology;
  const double iter = r.iteration_time_s;
  std::vector<std::pair<std::uint32_t, double>> lb(used);
  for (auto& [l, b] : lb) {
    l = static_cast<std::uint32_t>(get(is));
    b = get(is);
  }
  auto util = [&](const std::pair<std::uint32_t, double>& x) {
    return x.second / topo.link_bundle(x.first) / (topo.links()[x.first].bandwidth_Bps * iter);
  };
  std::stable_sort(lb.begin(), lb.end(), [&](const auto& a, const auto& b) {
    const double ua = util(a), ub = util(b);
    return ua != ub ? ua > ub : a.first < b.first;
  });
  if (lb.size() > static_cast<std::size_t>(std::max(0, options.max_bottleneck_links)))
    lb.resize(static_cast<std::size_t>(std::max(0, options.max_bottleneck_links)));
  for (const auto& x : lb) {
    const Link& L = topo.links()[x.first];
    LinkUse u;
    u.link = x.first;
    u.tier = L.tier;
    u.name = fabric_link_name(topo, x.first);
    u.utilization = iter > 0 ? util(x) : 0;
    u.bytes = x.second / topo.link_bundle(x.first);  // per cable (Topology::link_bundle)
    r.bottleneck_links.push_back(u);
  }
  finish_result(r, program, cluster, profile, options);
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return r;
}

SimResult simulate_simgrid(const Workload& w, const Cluster& c, const Layout& l,
                           const SimOptions& o) {
  if (l.gpus() > c.gpus())
    throw InputError("the layout " + to_string(l) + " needs " + std::to_string(l.gpus()) +
                     " GPUs but cluster " + c.name + " has " + std::to_string(c.gpus()) +
                     "; reduce dp/tp/pp or use a larger cluster");
  check_layout(w, l, c.gpu.hbm_bytes);
  CalibrationProfile loaded;
  const CalibrationProfile* prof = &default_calibration();
  if (!o.calibration.empty()) {
    loaded = load_calibration(o.calibration);
    prof = &loaded;
  }
  check_dtype_supported(w.file, w.training.dtype, {&c.gpu}, *prof);
  const Program p = expand_program(w, l);
  ProgramSimOptions po;
  po.compute_slowdown = o.compute_slowdown;
  po.seed = o.seed;
  po.tokens_to_train = w.model.token_model() ? tokens_to_train(w) : 0;
  po.samples_to_train = w.training.samples_to_train;
  po.progress = o.progress;
  SimResult r = simulate_program_simgrid(p, sim_cluster(c), *prof, po);
  r.memory_per_gpu_bytes = memory_per_gpu(w, l).total_bytes;
  return r;
}

}  // namespace tutti
