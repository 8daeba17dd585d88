// Native flow-level discrete-event engine (engine.hpp). The why of the main choices:
//  * one timeline per rank class and group of data-parallel replicas: the replicas of a group
//    meet the same link loads (an equitable partition of replicas, flows and links,
//    replica_groups), so their ranks are in lock-step; replicas that ECMP collisions set apart
//    run timelines of their own;
//  * a phase's lock-step steps run as macro flows, paced in chunks of steps where the contention
//    moves a collective's bottleneck from flow to flow (Pace);
//  * a collective op of a class starts that collective in every group of the class: all their
//    flows are routed (fabric traffic of all groups contends), except when every flow stays inside
//    a node: then only the representative node's flows are simulated;
//  * with one timeline per stage, flows that stay inside a node run in one node of the stage (the
//    others mirror it exactly, Des::route) when nothing else shares those nodes' links, and so do
//    the rail flows of the node-limited all-to-all in one EP group of the stage when no other flow
//    crosses those links while they run;
//  * where the traffic between nodes and the links it crosses map onto themselves when every GPU is
//    replaced by the next GPU of its node (the rails of a rail-symmetric fabric under spraying,
//    adaptive or d-mod-k routing), only the flows from each node's first GPU are simulated, the
//    links every rail shares at 1/(GPUs per node) of their capacity (Des::quotient_rails);
//  * routed flow sets are memoised per (class, collective, bytes) so a repeated collective costs
//    one copy of precomputed paths into the network, not a re-plan and re-route;
//  * a collective whose flows cross only links no other timeline's flows cross (a tensor-parallel
//    group inside a node) and that runs alone on them takes the duration of its first such run
//    instead of simulating its flows again ("Private runs", before Des::hold_links).
#include "tutti/sim/engine.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <memory>
#include <new>
#include <queue>
#include <set>
#include <span>
#include <tuple>
#include <unordered_map>

#include "tutti/core/error.hpp"
#include "tutti/sim/attribution.hpp"
#include "tutti/sim/compute_model.hpp"
#include "tutti/sim/equitable.hpp"
#include "tutti/sim/huge_pages.hpp"
#include "tutti/sim/network.hpp"
#include "tutti/sim/op_graph.hpp"
#include "tutti/sim/quad_heap.hpp"
#include "tutti/sim/slots.hpp"
#include "tutti/sim/trace.hpp"
#include "tutti/topologies/failures.hpp"

namespace tutti {

namespace {

/// CPU time of the calling thread, s (TUTTI_ENGINE_STATS: wall times mislead on a shared machine).
double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

/// Pacing of a phase's `repeat` lock-step steps (a ring's 2(n-1) steps). A set of macro flows
/// (every flow's bytes and latency x k) stands for k steps exactly while one flow of the set stays
/// the slowest: each step then ends with that flow, and so does the macro set. When contention
/// moves the bottleneck from one flow to another (collectives that share only some links, and
/// start or end at different times), each real step still waits for its slowest flow (NCCL: a hop
/// forwards only what it has received; SimGrid: a barrier per step), a sum of per-step maxima that
/// merged macro flows would undercut (a maximum of sums). So a paced phase runs in chunks of
/// steps: the chunk doubles from one step while the bottleneck stays put, up to 1/kMinChunks of
/// the phase (which bounds what a move inside a chunk can cost), and starts again from one step
/// after a move. The bottleneck is tracked per merged collective (group), at rate changes at
/// least 1/kChecks of a chunk apart, while every flow of the chunk is sending. Which runs are
/// paced: RoutedPlan::paced. Cost (405B on 16,384 GPUs): 1.6x the flow re-rates of unpaced macro
/// flows, the same iteration time to 1e-15.
struct Pace {
  static constexpr int kMinChunks = 16;  // a paced phase of R steps: chunks of at most ceil(R/16)
  static constexpr double kMove = 1e-3;  // a bottleneck move smaller than this is not one
  FlowNetwork::SetId set = 0;
  const double* bytes = nullptr;          // step bytes of each flow of the current chunk
  const std::uint32_t* groups = nullptr;  // flow offsets of each group (collective) in the set
  std::uint32_t ngroups = 0;
  std::vector<std::int32_t> bott;  // per group: flow index of its bottleneck (-1: not seen)
  int step = 0, chunk = 0, next = 1;
  bool paced = true;   // run in chunks (else: each phase as one set of macro flows)
  bool moved = false;  // the bottleneck has moved in this instance
  bool watched = false, listed = false;
  double next_check = 0;  // checks are at least 1/kChecks of a chunk's duration apart
  static constexpr double kChecks = 16;

  void reset(bool pace) {
    step = chunk = 0;
    next = 1;
    paced = pace;
    moved = watched = false;  // `listed` stays: the instance may still be in the watch list
    bott.clear();
  }
  void new_phase() {
    step = 0;
    next = 1;
    bott.clear();
  }
  /// Steps of the next chunk, `left` steps remaining of `repeat`, when the largest group (one
  /// collective's flows) has `flows` flows.
  int take(int left, int repeat, std::uint32_t flows) {
    if (!paced || flows < 2 || repeat <= 1) return chunk = left;
    const int cap = std::max(1, (repeat + kMinChunks - 1) / kMinChunks);
    chunk = std::min({left, next, cap});
    next = std::min(2 * next, cap);
    return chunk;
  }
  /// Starts watching a chunk of `repeat` steps on `set`.
  void watch(FlowNetwork::SetId s, const double* b, const std::uint32_t* g, std::uint32_t ng,
             std::uint32_t max_group, int repeat) {
    set = s;
    bytes = b;
    groups = g;
    ngroups = ng;
    if (bott.size() != ng) bott.assign(ng, -1);
    watched = paced && repeat > 1 && max_group > 1;
    next_check = 0;
  }
  /// After a rate change: within a group, has another flow become slower than its bottleneck?
  /// Judged only while every flow of the chunk is sending. A move re-arms the chunking: the next
  /// chunk is one step again.
  void check(const FlowNetwork& net, double now) {
    if (!watched || now < next_check) return;
    const std::uint32_t base = groups[0], n = groups[ngroups];  // flow f is the set's f - base
    for (std::uint32_t f = base; f < n; ++f)
      if (!(net.flow_rate(set, f - base) > 0)) return;
    double nc = FlowNetwork::kNever;
    for (std::uint32_t g = 0; g < ngroups; ++g) {
      if (groups[g + 1] - groups[g] < 2) continue;
      double worst = 0, tb = -1;
      std::int32_t arg = -1;
      for (std::uint32_t f = groups[g]; f < groups[g + 1]; ++f) {
        const double t = bytes[f] / net.flow_rate(set, f - base);
        if (t > worst) {
          worst = t;
          arg = static_cast<std::int32_t>(f);
        }
        if (static_cast<std::int32_t>(f) == bott[g]) tb = t;
      }
      if (bott[g] >= 0 && tb < worst * (1 - kMove)) {
        moved = true;
        next = 1;
      }
      if (bott[g] < 0 || tb < worst * (1 - kMove)) bott[g] = arg;
      nc = std::min(nc, now + worst * chunk / kChecks);
    }
    next_check = nc;
  }
};

/// Flows of one phase, routed: CSR paths.
struct RoutedPhase {
  std::vector<std::uint32_t> offsets;  // size flows+1
  std::vector<std::uint32_t> links;
  std::vector<double> bytes;          // bytes of one step
  std::vector<std::uint32_t> groups;  // flow offsets of each merged collective (size plans+1)
  std::uint32_t max_group = 0;        // flows of the largest group
  int repeat = 1;                     // lock-step steps (paced by Pace)
  // Mirrored flows (Des::route): not simulated, their bytes only counted on their links. CSR
  // paths; shadow_groups: flow offsets of each group, like groups.
  std::vector<std::uint32_t> shadow_offsets{0}, shadow_links, shadow_groups;
  std::vector<double> shadow_bytes;
  // EP-group mirroring (Des::route, Des::units_begin): per group (CSR, size plans+1), the
  // distinct links its flows between nodes of one EP group cross (simulated and mirrored alike),
  // and the distinct links its other flows between nodes cross; unit_block: the EP group (block)
  // of each group's unit links (-1: none). Per mirrored flow: the index of the simulated flow it
  // mirrors (its image; kNoImage for a node's flows), and runs of mirrored flows of one block.
  // Empty unless EP groups are mirrored.
  static constexpr std::uint32_t kNoImage = 0xffffffffu;
  struct Run {
    int block;
    std::uint32_t first, last;
  };
  std::vector<std::uint32_t> unit_links, unit_groups{0}, cross_links, cross_groups{0}, shadow_image;
  std::vector<int> unit_block;
  std::vector<Run> unit_runs;
  // Per simulated flow: source GPU, destination GPU, subflow (Des::quotient_rails reads them; kept
  // only until it has run).
  std::vector<std::int32_t> ends;
};
// Its first cache line holds what every run's begin_comm and end_run read (alignas(64)).
struct alignas(64) RoutedPlan {
  // Pacing, learnt over the plan's runs per neighbourhood: the tiers this plan crosses that other
  // communication in flight crosses when a run starts (a Tier bit mask). A run is paced unless a
  // paced run under the same neighbourhood saw no bottleneck move and no other communication
  // begin on one of its other tiers while it ran; runs under that neighbourhood then go as macro
  // flows (a plan repeats under the same neighbours: the same layer's collective, micro-batch
  // after micro-batch). A macro-flow run that sees such a neighbour begin forgets the
  // neighbourhood. Learnt per plan alone (one flag), a ZeRO-3 gather whose first runs saw no move
  // ran as macro flows beside the TP collectives it overlaps later (tiny-gpt tp=2,zero=3,
  // reshard=0 was 1.4% long against SimGrid; now equal). Cost: 405B on 16,384 GPUs +11% re-rates.
  // The quiet neighbourhoods as a set of masks (< 2^8: one bit each, Des::kTiers).
  mutable std::array<std::uint64_t, 4> quiet{};
  bool is_quiet(std::uint64_t sig) const { return quiet[sig >> 6] >> (sig & 63) & 1; }
  void set_quiet(std::uint64_t sig, bool on) const {
    const std::uint64_t bit = std::uint64_t{1} << (sig & 63);
    quiet[sig >> 6] = on ? quiet[sig >> 6] | bit : quiet[sig >> 6] & ~bit;
  }
  std::uint32_t tiers = 0;    // bit t: a flow crosses a link of Tier t
  std::int32_t owner = -1;    // private runs, below
  std::uint32_t ngroups = 0;  // merged collectives of the first phase (0: no phase)
  mutable std::uint32_t owned_epoch = 0;
  mutable std::array<double, 2> memo_s{-1, -1};
  // The rest.
  double fixed_latency_s = 0;
  std::vector<RoutedPhase> phases;
  CollAlgo algo = CollAlgo::Ring;
  NcclProto proto = NcclProto::Simple;
  // Private runs (Des::begin_comm): the timeline whose node-private links this plan's flows cross
  // (-1: none, the plan is not a candidate), the duration of an undisturbed run per paced flag
  // (-1: not known yet; -2: never taken: a run moved its bottleneck), the runs taken from the memo
  // (their bytes are counted on the links at the end, Des::run), and the Des::cross_epoch_ at
  // which every link of the plan was last seen held by its owner (0: never): owner, memo_s,
  // memo_count and owned_epoch.
  // Private plans: the distinct links of all phases' flows, sorted (the per-run checks and
  // counts of Des::begin_comm, end_private and end_memo only ask whether a count is > 0, so a
  // link counted once per run is the same as once per crossing flow).
  std::vector<std::uint32_t> own_links;
  mutable std::uint64_t memo_count = 0;
  bool units = false;  // has flows of EP groups (runs as one instance: Des::begin_comm)
};

/// What the timelines of one rank class share (op_graph.hpp): per op, its completion successors
/// (deps), the next op on its stream, its indegree before the run, and the occurrence index of its
/// name.
struct ClassOps : OpGraph {
  // Per op: its collective's plan slot, one per distinct (collective, group, bytes) of the class's
  // collectives outside GroupDim::PP (ClassState::slot_plans; 0 for other ops).
  std::vector<std::uint32_t> plan_slot;
  std::uint32_t plan_slots = 0;
  std::vector<OpKind> kind;  // per op (start_op reads a compute op's kind and duration only)
};

struct ClassState {
  const RankClass* rc = nullptr;
  int first_rank = 0;
  int nranks = 0;   // ranks this timeline stands for (Des::ranks_of; first_rank is the first)
  int replica = 0;  // replica group (Des::rgroups_) this timeline runs; its ranks: Des::ranks_of
  const ClassOps* ops = nullptr;  // the rank class's op tables (shared by its timelines)
  // Per op, what the run reads and writes as the op is released, starts, meets its peers and
  // completes, in one 32-byte record: an op and its successors (usually the next ops) share a
  // cache line or two, where five arrays per timeline cost a miss each with thousands of
  // timelines interleaved (405B on 16,384 GPUs: 2,048 timelines, 9.35 M ops).
  struct OpState {
    double start = -1, end = -1, rendezvous = -1;
    std::uint32_t indeg = 0;
    std::uint8_t started = 0;
  };
  OpState* st = nullptr;  // rc->ops.size() records in Des::op_pool_
  // The times of st, copied out when the run ends (Des::unpack) for the attribution and traces.
  std::vector<double> start, end, rendezvous;
  // The plans this timeline has used (a few: its collectives and transfers), scanned before the
  // engine's plan maps (a map look-up per collective was 5.6% of a 16,384-GPU run).
  struct PlanRef {
    int coll, group;     // group -1: a transfer to timeline `peer`
    std::uint32_t peer;  // transfers: the receiving timeline
    double bytes;
    const RoutedPlan* plan;
  };
  std::vector<PlanRef> plans;
  // Per plan slot of its class (ClassOps::plan_slot), the plan found for it (nullptr: not yet): a
  // collective's start then reads its plan without scanning `plans`.
  std::vector<const RoutedPlan*> slot_plans;
  const RoutedPlan* find_plan(int coll, int group, std::uint32_t peer, double bytes) const {
    for (const PlanRef& r : plans)
      if (r.coll == coll && r.group == group && r.peer == peer && r.bytes == bytes) return r.plan;
    return nullptr;
  }
};

struct Event {
  double t;
  std::uint64_t seq;
  std::uint32_t kind;  // 0 op done, 1 comm latency done, 2 memoised private run done
  std::uint32_t a, b;
  bool operator<(const Event& o) const { return t != o.t ? t < o.t : seq < o.seq; }
};

/// The engine's event queue: a 4-ary min-heap by (t, seq). seq is unique, so that order is total
/// and the events pop in the same order as from any other heap (std::priority_queue before); a
/// node's four children share a cache line, and a sift has half the levels of a binary heap.
class EventHeap {
 public:
  bool empty() const { return h_.empty(); }
  const Event& top() const { return h_[0]; }
  void push(const Event& e) {
    h_.push_back(e);
    quad_heap::sift_up(h_, h_.size() - 1, Place{h_});
  }
  void pop() {
    h_.front() = h_.back();
    h_.pop_back();
    if (!h_.empty()) quad_heap::sift_down(h_, 0, Place{h_});
  }

 private:
  struct Place {
    std::vector<Event>& h;
    void operator()(std::size_t i, const Event& e) const { h[i] = e; }
  };
  std::vector<Event> h_;
};

/// A paced run of a plan that merges several collectives (the groups of a rank class) runs one
/// instance per collective, so that each is paced by its own steps (SimGrid and NCCL have no
/// barrier between different communicators); the op completes when the last one does.
constexpr int kTiers = 8;  // Tier values (topology.hpp)
static_assert(kTiers <= 8, "RoutedPlan::quiet holds masks of up to 8 tiers");
using TierCounts = std::array<std::uint64_t, kTiers>;

/// A run of a plan with an owner timeline (RoutedPlan::owner), simulated: whether its duration
/// may be memoised when it ends (it began alone on its links; Des::begin_comm).
struct PrivateRun {
  std::int32_t owner = -1;  // -1: not a private-plan run
  bool record = false;      // began alone on links its owner holds
  std::uint64_t seq = 0;    // its number among private runs (Des::priv_seq_)
  double t0 = 0;
};

struct Join {
  std::uint32_t pending = 0;
  bool moved = false;
  bool paced = false;     // the run is paced
  std::uint64_t sig = 0;  // neighbourhood at its start (RoutedPlan::quiet)
  TierCounts begins{};    // Des::tier_begins_ at its start
  std::vector<std::pair<std::uint32_t, std::uint32_t>> participants;  // (class, op)
  PrivateRun priv;
};

struct CommInstance {
  static constexpr std::uint32_t kAll = 0xffffffffu;
  const RoutedPlan* plan = nullptr;
  std::size_t phase = 0;
  Pace pace;
  std::uint32_t group = kAll;  // the one merged collective this instance runs (kAll: all of them)
  std::uint32_t join = kAll;   // its Join when the plan runs as one instance per collective
  bool paced = false;          // as Join's, when join == kAll
  std::uint64_t sig = 0;
  TierCounts begins{};
  std::vector<std::pair<std::uint32_t, std::uint32_t>> participants;  // (class, op)
  PrivateRun priv;
  // EP-group mirroring (Des::units_begin), for the set in flight: its id, the blocks whose flows
  // it perturbs (cross flows on their links), the blocks whose flows it runs for real.
  FlowNetwork::SetId set = 0;
  std::vector<int> heats, real;
  int unit_stage = -1;  // the stage of its EP-group flows (-1: none)
};

/// A run taken from the memo (Des::begin_comm): not simulated; it ends at its start + the memo.
struct MemoRun {
  const RoutedPlan* plan = nullptr;
  bool paced = false;
  std::uint64_t sig = 0;
  TierCounts begins{};
  std::vector<std::pair<std::uint32_t, std::uint32_t>> participants;  // (class, op)
};

class Des {
 public:
  Des(const Program& p, const SimCluster& c, const CalibrationProfile& prof,
      const ProgramSimOptions& o, int mirror, bool memo, bool rails)
      : mirror_(mirror),
        memo_(memo),
        rails_(rails ? 1 : 0),
        prog_(p),
        cl_(c),
        prof_(prof),
        opt_(o),
        topo_(*c.topology),
        net_(topo_, prof),
        ctx_(make_collective_context(topo_, prof, c.nvls, c.sharp, p)) {}

  SimResult run();

 private:
  // Mirroring (Des::route): 2 nodes and EP groups, 1 nodes only, 0 off; requested, then kept on
  // by build() only where it applies.
  int mirror_;
  bool memo_;  // private runs from the memo (begin_comm)
  // Rail quotient (Des::quotient_rails): 0 off, 1 candidate (route records the flows' ends), 2 on.
  int rails_;
  // Per link, with rails_ 2: kNotRail not a link of the quotient; kOwn a link the representatives
  // cross (its own bytes); kShared a link every rail shares (g times its own bytes); else the link
  // whose bytes it carries (its orbit's representative link). Des::route throws RailsBroken for a
  // path across any but kNotRail; Des::bottlenecks fills in the bytes.
  static constexpr std::int64_t kNotRail = -1, kShared = -2, kOwn = -3;
  std::vector<std::int64_t> rail_link_;
  std::size_t rail_images_ = 0;   // flows left to rail symmetry, over all plans
  std::size_t rail_shared_ = 0;   // links every rail shares (at 1/g of their capacity)
  const char* rail_why_ = "off";  // why quotient_rails did not apply ("": it did)
  void quotient_rails();
  void build();
  void release(std::uint32_t c, std::uint32_t i);
  void start_op(std::uint32_t c, std::uint32_t i);
  void complete_op(std::uint32_t c, std::uint32_t i);
  void drain_ready();
  using OpRef = std::pair<std::uint32_t, std::uint32_t>;  // (class, op)
  // parts: copied into the run's slot, whose vector keeps its capacity (no allocation per run).
  void begin_comm(const RoutedPlan* plan, std::span<const OpRef> parts);
  void start_phase(std::uint32_t inst);
  void on_set_done(std::uint64_t tag);
  void check_pacing();
  const RoutedPlan* collective_plan(std::uint32_t c, const Op& op);
  /// collective_plan for op `i` of timeline c, cached per (timeline, plan slot of op i).
  const RoutedPlan* op_plan(std::uint32_t c, std::uint32_t i, const Op& op) {
    const RoutedPlan*& p = cls_[c].slot_plans[cls_[c].ops->plan_slot[i]];
    if (p == nullptr) p = collective_plan(c, op);
    return p;
  }
  const RoutedPlan* p2p_plan(std::uint32_t src_class, std::uint32_t dst_class, double bytes);
  RoutedPlan route(const std::vector<CollectivePlan>& plans, bool local_only, int rep_node,
                   int stage = -1, std::int32_t owner = -1);
  void hold_links(std::int32_t owner);
  bool owns_links(const RoutedPlan& plan) const;
  void end_private(const PrivateRun& pr, const RoutedPlan* plan, bool paced, bool moved);
  void end_memo(std::uint32_t id);
  void count_memo_bytes();
  void route_all();
  void own_links(std::int32_t owner);
  void units_begin(std::uint32_t id, std::uint32_t g0, std::uint32_t g1);
  void units_end(std::uint32_t id, std::uint32_t g0, std::uint32_t g1);
  void heat(int block);
  void make_real(std::uint32_t id, int block);
  std::vector<std::vector<int>> groups_of(const std::vector<int>& ranks, GroupDim dim);
  std::vector<int> ranks_of(std::uint32_t c) const;
  std::vector<std::vector<int>> replica_groups(bool strict, bool any_ep,
                                               std::size_t* strict_n = nullptr);
  static bool dp_like(GroupDim d) {
    return d == GroupDim::DP || d == GroupDim::DPxCP || d == GroupDim::EP || d == GroupDim::EDP ||
           d == GroupDim::DPShard || d == GroupDim::DPReplica;
  }
  bool crosses_replicas(GroupDim d) const { return replicas_ > 1 && dp_like(d); }
  void push(double t, std::uint32_t kind, std::uint32_t a, std::uint32_t b) {
    events_.push({t, seq_++, kind, a, b});
  }
  void unpack();
  void breakdown(SimResult& r, double iter);
  void bottlenecks(SimResult& r, double iter);
  std::vector<TraceTimeline> trace_timelines() const;

  const Program& prog_;
  const SimCluster& cl_;
  const CalibrationProfile& prof_;
  const ProgramSimOptions& opt_;
  const Topology& topo_;
  FlowNetwork net_;
  CollectiveContext ctx_;
  std::vector<ClassState> cls_;
  EventHeap events_;
  // Per timeline (cls_ index), what completing, releasing and starting an op read, compact (a
  // few cache lines for all timelines, where ClassState is scattered): its op records, its class's
  // graph and ops, and its class's compute-op durations (computed on first use; -1: not yet).
  struct Hot {
    ClassState::OpState* st;
    const OpGraph* ops;
    const RankClass* rc;
    double* op_s;
    const OpKind* kind;
  };
  std::vector<Hot> tl_;
  std::vector<std::vector<double>> op_s_;  // per rank class: compute ops' durations (Hot::op_s)
  // Per rank class, the op records (ClassState::st) of its timelines, one after the other: a few
  // large blocks that huge pages can back (huge_pages.hpp).
  std::vector<HugeVector<ClassState::OpState>> op_pool_;
  std::uint64_t seq_ = 0;
  double now_ = 0;
  ReadyOps<std::pair<std::uint32_t, std::uint32_t>> ready_;
  std::vector<CommInstance> insts_;
  TierCounts tier_live_{};    // communication runs in flight that cross each tier
  TierCounts tier_begins_{};  // communication runs begun so far that cross each tier
  std::vector<std::uint32_t> free_insts_;
  std::vector<std::uint32_t> watch_;  // instances whose current chunk's bottleneck is watched
  std::vector<Join> joins_;
  std::vector<std::uint32_t> free_joins_;
  std::uint32_t new_instance(const RoutedPlan* plan, bool paced, std::uint32_t group,
                             std::uint32_t join);
  void end_run(const RoutedPlan* plan, bool paced, std::uint64_t sig, const TierCounts& begins,
               bool moved);
  std::map<std::tuple<std::uint32_t, int, int, double>, std::unique_ptr<RoutedPlan>> coll_cache_;
  std::map<std::tuple<std::uint32_t, std::uint32_t, double>, std::unique_ptr<RoutedPlan>>
      p2p_cache_;
  // p2p rendezvous: (src stage, dst stage, tag) -> (class, op) of the side that arrived first.
  std::map<std::tuple<int, int, std::uint32_t, int>, std::pair<std::uint32_t, std::uint32_t>>
      p2p_wait_;
  // Collectives across the replica timelines of a stage: (base class, op) -> arrivals so far.
  std::map<std::pair<std::uint32_t, std::uint32_t>,
           std::vector<std::pair<std::uint32_t, std::uint32_t>>>
      rcoll_;
  int replicas_ = 1;        // timelines per rank class: replica groups (rgroups_.size())
  double group_s_ = 0;      // wall time of replica_groups
  double group_cpu_s_ = 0;  // its CPU time (this thread's; the machine may be shared)
  std::vector<std::string> approximations_;  // SimResult::approximations
  std::vector<std::vector<int>> rgroups_;  // data-parallel indices of each replica group, ascending
  // cross-class (PP-dimension) collectives: (name, occurrence) -> participants so far.
  std::map<std::tuple<std::uint16_t, std::uint32_t, int>,
           std::vector<std::pair<std::uint32_t, std::uint32_t>>>
      xcoll_;
  std::map<std::pair<std::uint16_t, std::uint32_t>, std::uint32_t> xcoll_expected_;
  std::vector<ClassOps> class_ops_;  // per rank class (prog_.classes)
  std::vector<std::uint32_t> path_;
  std::size_t done_ops_ = 0, total_ops_ = 0;
  // Mirroring (Des::route): on while every check holds; link_node_ per link: -1 unused, a node
  // whose node-internal flows cross it, kCross (crossed by a flow between nodes that is no EP
  // group's own), or kBlock - b (crossed by the flows between nodes of EP group block b, and
  // perhaps by kCross flows: Des::heat).
  static constexpr std::int32_t kCross = -2, kBlock = -3;
  std::vector<std::int32_t> link_node_;
  int block_nodes_ = 1;   // nodes per mirrored EP group (1: EP groups are not mirrored)
  int stage_blocks_ = 1;  // EP groups (blocks) per stage
  // Per link, flow sets in flight that cross it with cross flows; per block, the sets in flight
  // that perturb it (cross flows on its links, or its own flows run for real); the instances
  // whose sets in flight have EP-group flows (units_begin).
  std::vector<std::uint32_t> cross_busy_, hot_;
  std::vector<std::uint32_t> unit_sets_;
  // The correspondence of a mirrored unit's links with its representative's (Des::route, (b)):
  // image_of_[l] the representative's link that link l mirrors (-1: none yet); image_ (unit code
  // << 32 | representative's link) -> the unit's link.
  std::vector<std::int64_t> image_of_;
  std::unordered_map<std::uint64_t, std::uint32_t> image_;
  std::size_t mirrored_ = 0;   // flows mirrored, over all routed plans
  std::size_t made_real_ = 0;  // mirrored flows of EP groups run for real (make_real), all runs
  // Private runs (begin_comm): link_owner_ per link: -1 unused, the timeline whose private plans
  // alone cross it, or kCross (crossed by another timeline's flows or a non-private plan's).
  std::vector<std::int32_t> link_owner_;
  std::vector<MemoRun> memo_runs_;
  std::vector<const RoutedPlan*> memo_plans_;  // plans with runs taken from the memo
  std::uint32_t cross_epoch_ = 1;              // bumped whenever a held link becomes kCross
  // Per link: private runs in flight on it taken from the memo, and simulated ones; the number
  // (priv_seq_) of the last private run that began on it (or of its becoming kCross).
  std::vector<std::uint32_t> memo_busy_, sim_busy_;
  std::vector<std::uint64_t> last_begin_;
  std::uint64_t priv_seq_ = 0;
  std::vector<std::uint32_t> free_memo_;
  std::size_t memo_taken_ = 0;       // runs taken from the memo
  std::uint64_t flows_started_ = 0;  // flows put into the network (TUTTI_ENGINE_STATS)
};

/// Thrown when a private run taken from the memo turns out not to have been alone on its links
/// (Des::begin_comm): the run starts again with every run simulated.
struct MemoBroken {};

/// Thrown when a check of mirroring fails: the run starts again with mirroring at level `retry`
/// (1: nodes only, 0: off; below the level that failed).
struct MirrorBroken {
  int retry;
};

/// Thrown when a plan routed after Des::quotient_rails crosses a link of the rail quotient: the
/// run starts again with every rail simulated.
struct RailsBroken {};

// Replica groups. A rank class stands for the tp*cp*dp ranks of a stage; with d-mod-k routing
// every data-parallel replica sees the same contention, but with ECMP hashing the transfers of
// different replicas collide on different links, each replica then runs its own pipeline (a rank
// goes on when its own transfer is done), and one lock-stepped class would make every micro-batch
// wait for the slowest replica (a sum of maxima instead of a maximum of sums). So the replicas are
// grouped, and each class runs one timeline per group: the groups are the replica classes
// of the coarsest equitable partition (colour refinement, as 1-WL) of the graph of replicas, the
// flows the program can put on the fabric and the links they cross:
//  * flows: every send/recv pair's flows and every replica-private collective's flows (owned by
//    their replica), and with strict_replica_groups the flows of the collectives over DP-like
//    groups too (owned by none: they join every replica of a stage); first coloured by (transfer
//    or collective phase, bytes), links by (capacity, latency), the capacity being the bandwidth
//    times Topology::link_bundle (adaptive routing / spraying on a Clos fabric: one flow per
//    transfer over one representative cable per bundle of equally loaded cables, whose capacity is
//    the bundle's; the graph is then the FlowNetwork's, and the argument below holds unchanged);
//  * refined until stable: a flow by its owner's colour and the multiset of its links' colours, a
//    link by the multiset of its flows' colours, a replica by the multiset of its flows' colours.
// Why exact: in a stable colouring every link of a colour carries the same number of flows of each
// flow colour, and every flow of a colour crosses the same number of links of each link colour,
// and this stays true of any union of flow colours (the flows active at a moment, when replicas of
// a colour are in the same state). Max-min progressive filling then raises flows of a colour
// alike and saturates links of a colour together, so flows of a colour get equal rates (and equal
// latencies: links of a colour have equal latency), and by induction over events the replicas of a
// colour start and finish every op together: one timeline for them is the per-replica simulation.
// That proof needs the strict graph. The default leaves the DP-like collectives' flows out: with
// them, almost every replica of a large fabric is set apart by where the DP rings cross its
// transfers' links (d-mod-k 1:1 at 8,192 GPUs: 128 strict groups of 512 where the transfers alone
// give one, with the same iteration to 1e-9, tests/sim/replica_groups_test.cpp); a run whose
// default groups are coarser than the strict ones says so in SimResult::approximations.
// How (equitable.cpp): the stable colouring is computed as the coarsest equitable partition
// (classes of flows, links and replicas, each element of a class having the same number of edges
// into every class; the same partition as the round-by-round refinement, which rebuilt and
// renumbered every signature each round, tests/sim/equitable_test.cpp), by splitting classes
// against splitter classes, exact counts only (no hashing). One graph serves both calls: built
// once with the DP-like collectives' flows marked late, refined without them (the default groups),
// then refined on with them from that partition (the strict count): the strict graph's coarsest
// equitable partition, restricted to the other elements, is equitable for the default graph (the
// late flows have colours of their own and no owner), so it refines the default one, and refining
// on from the default partition reaches it. Strict groups are not computed when the default ones
// already give every replica its own. Cost: O((E + V) log V) for E hops and owned flows, V
// elements, plus routing every flow once (405B at 16,384 GPUs, 103k flows and 480k hops, both
// partitions: 0.05-0.06 s CPU on the shared 2-core machine, against 0.34-0.37 s for the two
// round-by-round calls before, bench/engine.md).
// Not grouped (one lock-stepped timeline per class): dp = 1, and expert parallelism (ep > 1):
// there the replicas of a stage stay in lock-step, which is exact only when they meet the same
// contention; when their transfers set them apart the run says so in its approximations.
std::vector<std::vector<int>> Des::replica_groups(bool strict, bool any_ep, std::size_t* strict_n) {
  const Layout& L = prog_.layout;
  const int dp = L.dp;
  std::vector<std::vector<int>> one(1);
  for (int d = 0; d < dp; ++d) one[0].push_back(d);
  if (dp < 2 || (L.ep != 1 && !any_ep)) return one;
  std::vector<std::vector<int>> each(dp);
  for (int d = 0; d < dp; ++d) each[d] = {d};
  if (opt_.per_replica) return each;
  const int ps = L.tp * L.cp * dp, span = L.tp * L.cp;
  // Flows: CSR paths, owner replica (-1: none), initial colour from (family, bytes), late (the
  // DP-like collectives' flows, for the strict groups: built once for both partitions).
  const bool late = strict || strict_n != nullptr;
  EquitableGraph g;
  g.replicas = dp;
  std::map<std::pair<std::uint32_t, double>, std::uint32_t> init;
  std::pair<std::uint32_t, double> last_key{0, -1.0};
  std::uint32_t last_col = 0;
  std::uint32_t family = 0;
  // Only the links some flow crosses are in the graph (the others, alone, change no flow's or
  // replica's class): link_id[l] is l's index in the graph plus 1 (0: none yet), used the inverse.
  const std::size_t nl = topo_.links().size();
  // calloc: the zero pages of links no flow crosses are never touched (1.04M links at 65k GPUs).
  const std::unique_ptr<std::uint32_t, decltype(&std::free)> link_ids(
      static_cast<std::uint32_t*>(std::calloc(nl + 1, sizeof(std::uint32_t))), &std::free);
  if (!link_ids) throw std::bad_alloc();
  std::uint32_t* const link_id = link_ids.get();
  std::vector<std::uint32_t> used;
  auto add = [&](int a, int b, double bytes, std::int32_t owner, bool is_late) {
    if (a == b || a >= topo_.num_gpus() || b >= topo_.num_gpus()) return;
    const int np = topo_.paths(a, b);
    const std::pair<std::uint32_t, double> key(family, bytes / np);
    if (g.f_owner.empty() || key != last_key) {
      last_key = key;
      last_col = init.emplace(key, static_cast<std::uint32_t>(init.size())).first->second;
    }
    for (int part = 0; part < np; ++part) {
      topo_.route_path(a, b, flow_hash(opt_.seed, a, b), np > 1 ? part : -1, path_);
      for (std::uint32_t l : path_) {
        std::uint32_t& m = link_id[l];
        if (m == 0) {
          used.push_back(l);
          m = static_cast<std::uint32_t>(used.size());
        }
        g.f_links.push_back(m - 1);
      }
      g.f_off.push_back(static_cast<std::uint32_t>(g.f_links.size()));
      g.f_owner.push_back(owner);
      g.f_colour.push_back(last_col);
      g.f_late.push_back(is_late ? 1 : 0);
    }
  };
  // Send/recv: stage pairs that exchange (interleaved pipelines wrap from the last stage to the
  // first).
  std::set<std::pair<int, int>> pairs;
  std::map<std::uint16_t, std::vector<int>> pp_stages;  // PP-dimension collective name -> stages
  for (const RankClass& rc : prog_.classes)
    for (const Op& op : rc.ops) {
      if (op.kind == OpKind::Send) pairs.insert({rc.stage, rc.stage + op.peer_delta});
      if (op.kind == OpKind::Collective && op.group == GroupDim::PP) {
        auto& v = pp_stages[op.name];
        if (std::find(v.begin(), v.end(), rc.stage) == v.end()) v.push_back(rc.stage);
      }
    }
  for (auto [s, d] : pairs) {
    ++family;
    for (int i = 0; i < ps; ++i) add(s * ps + i, d * ps + i, 1.0, i / span, false);
  }
  std::set<std::tuple<int, int, int, double, std::uint16_t>> seen;
  for (const RankClass& rc : prog_.classes)
    for (const Op& op : rc.ops) {
      if (op.kind != OpKind::Collective) continue;
      const bool pp = op.group == GroupDim::PP;
      if (!seen.insert({pp ? -1 : rc.stage, static_cast<int>(op.coll), static_cast<int>(op.group),
                        op.bytes, pp ? op.name : std::uint16_t{0}})
               .second)
        continue;
      const bool is_late = dp_like(op.group);
      if (is_late && !late) continue;
      std::vector<std::vector<int>> groups;
      if (pp) {
        for (int j = 0; j < ps; ++j) {
          std::vector<int> g;
          for (int st : pp_stages[op.name]) g.push_back(st * ps + j);
          groups.push_back(std::move(g));
        }
      } else {
        std::vector<int> stage(ps);
        for (int i = 0; i < ps; ++i) stage[i] = rc.stage * ps + i;
        groups = groups_of(stage, op.group);
      }
      const std::uint32_t fam0 = family + 1;
      for (const auto& g : groups) {
        const std::int32_t owner = dp_like(op.group) ? -1 : (g[0] % ps) / span;
        const CollectivePlan plan = plan_collective(op.coll, op.bytes, g, ctx_);
        for (std::size_t ph = 0; ph < plan.phases.size(); ++ph) {
          family = fam0 + static_cast<std::uint32_t>(ph);
          for (const CollFlow& f : plan.phases[ph].flows)
            add(f.src_gpu, f.dst_gpu, f.bytes, owner, is_late);
        }
      }
      family = std::max(family, fam0);
    }
  // Links by (capacity, latency): few distinct pairs, looked up among those seen so far.
  g.l_colour.resize(used.size());
  {
    constexpr std::size_t kFew = 64;  // then a map
    std::vector<std::pair<double, double>> lk;
    std::map<std::pair<double, double>, std::uint32_t> more;
    for (std::size_t i = 0; i < used.size(); ++i) {
      const std::uint32_t l = used[i];
      const std::pair<double, double> key(topo_.links()[l].bandwidth_Bps * topo_.link_bundle(l),
                                          topo_.links()[l].latency_s);
      std::size_t c = 0;
      while (c < lk.size() && lk[c] != key) ++c;
      if (c == lk.size() && lk.size() < kFew) lk.push_back(key);
      g.l_colour[i] =
          c < kFew
              ? static_cast<std::uint32_t>(c)
              : more.emplace(key, static_cast<std::uint32_t>(kFew + more.size())).first->second;
    }
  }
  std::vector<std::uint32_t> base, full;
  equitable_replica_classes(g, base, late ? &full : nullptr);
  const std::vector<std::uint32_t>& ids = strict ? full : base;
  const std::uint32_t n = dp > 0 ? *std::max_element(ids.begin(), ids.end()) + 1 : 0;
  std::vector<std::vector<int>> groups(n);
  for (int d = 0; d < dp; ++d) groups[ids[d]].push_back(d);  // ids in first-occurrence order
  if (strict_n && !strict)
    *strict_n = static_cast<std::size_t>(*std::max_element(full.begin(), full.end())) + 1;
  return groups;
}

void Des::build() {
  const Layout& L = prog_.layout;
  const int per_stage = L.tp * L.cp * L.dp;
  if (prog_.world > topo_.num_gpus())
    throw InputError("the program needs " + std::to_string(prog_.world) + " GPUs but cluster " +
                     cl_.name + " has " + std::to_string(topo_.num_gpus()));
  const auto g0 = std::chrono::steady_clock::now();
  const double c0 = thread_cpu_s();
  // The strict groups' count, for the approximation below, comes with the default groups (one
  // graph, refined on from the default partition).
  std::size_t strict_n = 0;
  const bool want_strict = L.ep == 1 && !opt_.strict_replica_groups && !opt_.per_replica;
  rgroups_ = replica_groups(opt_.strict_replica_groups, false, want_strict ? &strict_n : nullptr);
  replicas_ = static_cast<int>(rgroups_.size());
  if (L.ep != 1 && L.dp > 1 && !opt_.per_replica) {
    // Expert parallelism: one lock-stepped timeline per class. Say so when it is not exact.
    const std::size_t n = replica_groups(false, true).size();
    if (n > 1)
      approximations_.push_back(
          "replicas lock-stepped: with expert parallelism (ep " + std::to_string(L.ep) + ") the " +
          std::to_string(L.dp) +
          " data-parallel replicas run one timeline per stage, but the link loads their "
          "transfers meet (ECMP) set them apart into " +
          std::to_string(n) +
          " groups, so every transfer waits for the slowest replica's: the iteration is an upper "
          "estimate (dense "
          "models on 16,384 GPUs: 1.7% to 10% above per-replica timelines; Qwen3-30B-A3B on 64 "
          "GPUs: equal; "
          "bench/engine.md)");
  } else if (!opt_.strict_replica_groups && !opt_.per_replica && replicas_ < L.dp) {
    // The groups leave out the DP collectives' flows; say so when the strict groups would differ.
    const std::size_t n = strict_n;
    if (n != rgroups_.size())
      approximations_.push_back(
          "replica groups by their transfers' link loads: " + std::to_string(replicas_) +
          " timeline(s) for " + std::to_string(L.dp) +
          " data-parallel replicas; refined by the data-parallel collectives' flows too "
          "there would be " +
          std::to_string(n) +
          ", exact (--replicas strict runs them); the iteration differed from theirs by at most "
          "0.16% on 26 shipped-topology runs (bench/replica_groups_check.sh), not bounded in "
          "general");
  }
  group_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - g0).count();
  group_cpu_s_ = thread_cpu_s() - c0;
  const int span = L.tp * L.cp;
  // Mirroring needs one timeline per stage and stages made of whole nodes; EP groups are mirrored
  // when each is a run of whole nodes and a stage has several of them (Des::route).
  const int gpn = topo_.gpus_per_node();
  if (!(replicas_ == 1 && topo_.num_nodes() > 1 && per_stage % gpn == 0)) mirror_ = 0;
  if (mirror_ >= 2 && L.ep > 1) {
    std::vector<int> g = group_ranks(L, 0, GroupDim::EP);
    std::sort(g.begin(), g.end());
    const int n = static_cast<int>(g.size()), nps = per_stage / gpn;
    bool run = g[0] % gpn == 0 && n % gpn == 0;
    for (int i = 0; run && i < n; ++i) run = g[static_cast<std::size_t>(i)] == g[0] + i;
    if (run && n / gpn > 1 && nps % (n / gpn) == 0 && nps / (n / gpn) > 1) {
      block_nodes_ = n / gpn;
      stage_blocks_ = nps / block_nodes_;
    }
  }
  if (mirror_ >= 2 && block_nodes_ == 1) mirror_ = 1;
  // The rail quotient: not with EP (its mirroring of EP groups keeps its own shadows).
  if (L.ep != 1 || topo_.num_nodes() < 2 || gpn < 2) rails_ = 0;
  if (mirror_) {
    link_node_.assign(topo_.links().size(), -1);
    image_of_.assign(topo_.links().size(), -1);
  }
  if (mirror_ >= 2) {
    cross_busy_.assign(topo_.links().size(), 0);
    hot_.assign(static_cast<std::size_t>(topo_.num_nodes() / block_nodes_ + 1), 0);
  }
  if (memo_) {
    link_owner_.assign(topo_.links().size(), -1);
    memo_busy_.assign(topo_.links().size(), 0);
    sim_busy_.assign(topo_.links().size(), 0);
    last_begin_.assign(topo_.links().size(), 0);
  }
  cls_.resize(prog_.classes.size() * replicas_);
  class_ops_.resize(prog_.classes.size());
  std::map<std::pair<std::uint16_t, std::uint32_t>, std::uint32_t> xcount;
  for (std::size_t k = 0; k < prog_.classes.size(); ++k) {
    const RankClass& rc = prog_.classes[k];
    ClassOps& co = class_ops_[k];
    static_cast<OpGraph&>(co) = build_op_graph(rc);
    co.plan_slot.assign(rc.ops.size(), 0);
    co.kind.resize(rc.ops.size());
    for (std::size_t i = 0; i < rc.ops.size(); ++i) co.kind[i] = rc.ops[i].kind;
    std::map<std::tuple<int, int, double>, std::uint32_t> slot;
    for (std::size_t i = 0; i < rc.ops.size(); ++i) {
      const Op& op = rc.ops[i];
      if (op.kind != OpKind::Collective || op.group == GroupDim::PP) continue;
      auto key = std::make_tuple(static_cast<int>(op.coll), static_cast<int>(op.group), op.bytes);
      auto it = slot.emplace(key, static_cast<std::uint32_t>(slot.size())).first;
      co.plan_slot[i] = it->second;
    }
    co.plan_slots = static_cast<std::uint32_t>(std::max<std::size_t>(1, slot.size()));
    for (std::size_t i = 0; i < rc.ops.size(); ++i) {
      const Op& op = rc.ops[i];
      if (op.kind == OpKind::Collective && op.group == GroupDim::PP)
        ++xcount[{op.name, co.occurrence[i]}];
    }
  }
  for (std::size_t c = 0; c < cls_.size(); ++c) {
    const RankClass& rc = prog_.classes[c / replicas_];
    const int replica = static_cast<int>(c % replicas_);
    ClassState& s = cls_[c];
    s.rc = &rc;
    s.ops = &class_ops_[c / replicas_];
    s.replica = replica;
    s.first_rank = rc.stage * per_stage + rgroups_[replica][0] * span;
    s.nranks = span * static_cast<int>(rgroups_[replica].size());
    const std::size_t n = rc.ops.size();
    total_ops_ += n;
    s.slot_plans.assign(s.ops->plan_slots, nullptr);
  }
  op_pool_.resize(prog_.classes.size());
  for (std::size_t k = 0; k < prog_.classes.size(); ++k)
    op_pool_[k].resize(prog_.classes[k].ops.size() * static_cast<std::size_t>(replicas_));
  for (std::size_t c = 0; c < cls_.size(); ++c) {
    ClassState& s = cls_[c];
    const std::size_t n = s.rc->ops.size();
    s.st = op_pool_[c / replicas_].data() + (c % replicas_) * n;
    for (std::size_t i = 0; i < n; ++i) s.st[i].indeg = s.ops->indeg0[i];
  }
  op_s_.resize(prog_.classes.size());
  for (std::size_t k = 0; k < prog_.classes.size(); ++k)
    op_s_[k].assign(prog_.classes[k].ops.size(), -1.0);
  tl_.resize(cls_.size());
  for (std::size_t c = 0; c < cls_.size(); ++c)
    tl_[c] = {cls_[c].st, cls_[c].ops, cls_[c].rc, op_s_[c / replicas_].data(),
              class_ops_[c / replicas_].kind.data()};
  xcoll_expected_ = xcount;
}

std::vector<std::vector<int>> Des::groups_of(const std::vector<int>& ranks, GroupDim dim) {
  const Layout& L = prog_.layout;
  std::vector<char> seen(static_cast<std::size_t>(prog_.world), 0);
  std::vector<std::vector<int>> groups;
  for (int r : ranks) {
    if (seen[r]) continue;
    std::vector<int> g = group_ranks(L, r, dim);
    for (int x : g)
      if (x >= 0 && x < prog_.world) seen[x] = 1;
    groups.push_back(std::move(g));
  }
  return groups;
}

std::vector<int> Des::ranks_of(std::uint32_t c) const {
  const ClassState& s = cls_[c];
  const Layout& L = prog_.layout;
  const int span = L.tp * L.cp, per_stage = span * L.dp;
  std::vector<int> out;
  out.reserve(static_cast<std::size_t>(s.nranks));
  for (int d : rgroups_[s.replica])
    for (int j = 0; j < span; ++j) out.push_back(s.rc->stage * per_stage + d * span + j);
  return out;
}

// Mirroring. With one timeline per stage, every op of a stage starts at the same moment in all of
// the stage's nodes. A *unit* is a node (level 0) or, with expert parallelism, an EP group that
// is a run of whole nodes (level 1, block_nodes_ nodes; DeepSeek-V3 ep 64 on 8-GPU nodes: 8
// nodes, 16 per stage of 128); a unit's own flows are, at level 0, the flows inside the node, and
// at level 1 the flows between nodes of a plan whose every flow stays inside one EP group (the
// node-limited all-to-all: rail flows under the EP group's leaf switches). All other flows between
// nodes (pipeline transfers, data-parallel and EDP collectives, collectives across stages) are
// *cross* flows. When
//  (a) every stage is made of whole nodes (and whole EP groups, for level 1);
//  (b) every plan that gives units of a stage own flows gives each unit of the stage the same ones
//      as the stage's first unit (the representative: same phase, source and destination relative
//      to the unit, bytes, and paths that correspond link for link, with equal capacities and
//      latencies, under one correspondence of each unit's links with the representative's over
//      all plans);
//  (c) a link is crossed by the own flows of one unit only; a level-0 link by nothing else, ever;
//      a level-1 link (a rail NIC port) by no cross flow while that unit's flows are mirrored (see
//      "perturbed" below);
//  (d) the own flows of a plan start together in all units (level 0: one step, or one collective:
//      a paced plan of several runs one instance per collective, whose later steps start on its
//      own; level 1: single steps, one phase when the plan has several groups, and the plan runs
//      as one instance, RoutedPlan::units);
// then the links of each unit form, while its own flows run, components of the max-min network
// that no other flow reaches, isomorphic to the representative's and with the same flows started
// at the same times: by induction over events they get the same rates and finish together. So
// only the representative (rep_node, also the node that plans with every flow inside a node run
// in, or its EP group) simulates its own flows; those of the other units are dropped from the flow
// sets and only their bytes are counted on their links (link_bytes, in the same order, so the
// bottleneck report is unchanged). A set then ends when its simulated flows end, as it would with
// every flow. Checks (a), (b), (d) and the static part of (c) run as plans are routed; when one
// fails the run starts again with mirroring one level down (MirrorBroken: EP groups -> nodes only
// -> off). The rail NIC ports of an EP group also carry pipeline transfers and data-parallel/EDP
// collectives, at times that overlap the all-to-alls, so level 1's part of (c) is kept as the run
// goes instead (Des::heat): from the moment a set of cross flows on a block's links starts, that
// block is *perturbed* until the set ends, and its mirrored flows in the sets in flight join
// their sets for real with the bytes their images have left (until then they were those images,
// by the argument above), as do its flows in sets that start while it is perturbed; a block
// whose flows run for real perturbs itself the same way (they are no longer images), and a
// perturbed representative makes every block of its stage run for real.
void Des::own_links(std::int32_t owner) {
  for (std::uint32_t l : path_) {
    std::int32_t& o = link_node_[l];
    if (o == owner || (owner == kCross && o <= kBlock)) continue;  // kBlock + kCross: Des::heat
    if (o == -1 || (o == kCross && owner <= kBlock)) {
      o = owner;
      continue;
    }
    throw MirrorBroken{owner <= kBlock || o <= kBlock ? 1 : 0};
  }
}

// Perturbed EP groups (the comment above): hot_ counts, per block, the sets in flight that
// perturb it (cross sets on its links: CommInstance::heats; sets that run its flows for real:
// CommInstance::real). make_real adds a block's mirrored flows of a set in flight to it
// (FlowNetwork::clone_flow: the bytes their images have left, or the same activation time).
void Des::heat(int block) {
  if (hot_[static_cast<std::size_t>(block)]++ > 0) return;
  const int stage = block / stage_blocks_, rep = stage * stage_blocks_;
  for (std::size_t k = 0; k < unit_sets_.size(); ++k) {
    const std::uint32_t id = unit_sets_[k];
    if (insts_[id].unit_stage != stage) continue;
    const RoutedPhase& ph = insts_[id].plan->phases[insts_[id].phase];
    for (const RoutedPhase::Run& r : ph.unit_runs)
      if (block == rep || r.block == block) make_real(id, r.block);
    // The representative's flows of this set are perturbed too: they keep it perturbed while
    // the set runs (the representative has no mirrored flows to add).
    if (block == rep) make_real(id, rep);
  }
}

void Des::make_real(std::uint32_t id, int block) {
  CommInstance& in = insts_[id];
  if (std::find(in.real.begin(), in.real.end(), block) != in.real.end()) return;
  in.real.push_back(block);
  const RoutedPhase& ph = in.plan->phases[in.phase];
  for (const RoutedPhase::Run& r : ph.unit_runs) {
    if (r.block != block) continue;
    made_real_ += r.last - r.first;
    for (std::uint32_t f = r.first; f < r.last; ++f)
      net_.clone_flow(in.set, ph.shadow_image[f], ph.shadow_links.data() + ph.shadow_offsets[f],
                      ph.shadow_offsets[f + 1] - ph.shadow_offsets[f], now_);
  }
  heat(block);
}

void Des::units_begin(std::uint32_t id, std::uint32_t g0, std::uint32_t g1) {
  const RoutedPhase& ph = insts_[id].plan->phases[insts_[id].phase];
  if (ph.unit_links.empty() && ph.cross_links.empty()) return;
  std::vector<int> heats;
  for (std::uint32_t i = ph.cross_groups[g0]; i < ph.cross_groups[g1]; ++i) {
    const std::uint32_t l = ph.cross_links[i];
    ++cross_busy_[l];
    if (link_node_[l] <= kBlock) heats.push_back(kBlock - link_node_[l]);
  }
  std::sort(heats.begin(), heats.end());
  heats.erase(std::unique(heats.begin(), heats.end()), heats.end());
  insts_[id].heats = heats;
  for (int b : heats) heat(b);
  if (ph.unit_links.empty()) return;
  // Blocks whose links carry cross flows now (cross sets begun before these links were a block's).
  heats.clear();
  int stage = -1;
  for (std::uint32_t g = g0; g < g1; ++g) {
    const int b = ph.unit_block[g];
    if (b < 0) continue;
    stage = b / stage_blocks_;
    for (std::uint32_t i = ph.unit_groups[g]; i < ph.unit_groups[g + 1]; ++i)
      if (cross_busy_[ph.unit_links[i]] > 0) {
        heats.push_back(b);
        break;
      }
  }
  insts_[id].unit_stage = stage;
  unit_sets_.push_back(id);
  const int rep = stage * stage_blocks_;
  const bool all = hot_[static_cast<std::size_t>(rep)] > 0 ||
                   std::find(heats.begin(), heats.end(), rep) != heats.end();
  for (int b : heats) make_real(id, b);
  for (const RoutedPhase::Run& r : ph.unit_runs)
    if (all || hot_[static_cast<std::size_t>(r.block)] > 0) make_real(id, r.block);
}

void Des::units_end(std::uint32_t id, std::uint32_t g0, std::uint32_t g1) {
  CommInstance& in = insts_[id];
  const RoutedPhase& ph = in.plan->phases[in.phase];
  if (ph.unit_links.empty() && ph.cross_links.empty()) return;
  for (std::uint32_t i = ph.cross_groups[g0]; i < ph.cross_groups[g1]; ++i)
    --cross_busy_[ph.cross_links[i]];
  for (int b : in.heats) --hot_[static_cast<std::size_t>(b)];
  for (int b : in.real) --hot_[static_cast<std::size_t>(b)];
  in.heats.clear();
  in.real.clear();
  if (in.unit_stage >= 0) {
    unit_sets_.erase(std::find(unit_sets_.begin(), unit_sets_.end(), id));
    in.unit_stage = -1;
  }
}

// Private runs. A collective plan of timeline c over groups of c's own ranks (not one across the
// replica timelines of a stage: a TP, CP or EP group; inside a node only the representative
// node's groups are routed, Des::collective_plan) is c's private plan. Every transfer and
// collective is routed before the first op starts (route_all), and links are held as plans are
// routed (hold_links): a link crossed only by c's private plans is c's; a link crossed by any other
// plan (another timeline's, a transfer, a collective across replicas) is kCross, for good; so a
// private plan whose flows reach the fabric is usually not alone there, and is simulated. A run of
// a private plan that begins when no other run is in flight on its links, all of them c's, and
// during which no other run begins on them, ran alone: no other flow joined its flows (other
// plans' flows never cross those links; c's private runs are counted per link, sim_busy_ and
// memo_busy_, and each stamps the links it begins on, last_begin_). Its flows' max-min rates then
// depend only on its own flows, so its duration depends only on the plan and on whether it is
// paced (the fixed latency, then each phase's chunks; Pace::take depends on the step counts alone,
// and a run whose bottleneck does not move keeps its chunking): every such run of the plan lasts
// as long as the first. The first undisturbed run's duration is memoised (per paced flag; a run
// whose bottleneck moved is never memoised), and later runs that begin alone end at start + that
// duration, without flows; their bytes are counted on their links at the end. Everything else a
// run touches is kept: the tier counts and the pacing neighbourhoods of other runs (begin_comm,
// end_run), the ops' rendezvous and end times. Checks, each failing into a restart with every run
// simulated (MemoBroken): a private run that begins on a link a memoised run is on, and a held link
// that a plan routed during the run (a collective across stages, GroupDim::PP) crosses while a
// memoised run is on it. Equal to simulating every run up to the solver's rounding (a memoised
// duration and a simulated one differ by <= 5e-9 relative at 16,384 GPUs, the incremental
// solver's drift; tests/sim/private_runs_test.cpp). Cost: O(links of the plan) per run, instead
// of its flows' activation, solves and completions.
void Des::hold_links(std::int32_t owner) {
  for (std::uint32_t l : path_) {
    std::int32_t& o = link_owner_[l];
    if (o == kCross || (owner >= 0 && o == owner)) continue;
    if (owner >= 0 && o == -1) {
      o = owner;
      continue;
    }
    if (o >= 0) {  // another timeline's flows (or a non-private plan's) now cross o's link
      if (memo_busy_[l] > 0) throw MemoBroken{};
      last_begin_[l] = ++priv_seq_;  // a simulated run on it is no longer alone
      ++cross_epoch_;
    }
    o = kCross;
  }
}

bool Des::owns_links(const RoutedPlan& plan) const {
  if (plan.owned_epoch == cross_epoch_) return true;  // no held link was lost since the last look
  for (std::uint32_t l : plan.own_links)
    if (link_owner_[l] != plan.owner) return false;
  plan.owned_epoch = cross_epoch_;
  return true;
}

void Des::count_memo_bytes() {
  for (const RoutedPlan* plan : memo_plans_) {
    const double runs = static_cast<double>(plan->memo_count);
    for (const RoutedPhase& ph : plan->phases)
      for (std::size_t f = 0; f + 1 < ph.offsets.size(); ++f)
        net_.count_bytes(ph.links.data() + ph.offsets[f], ph.offsets[f + 1] - ph.offsets[f],
                         ph.bytes[f] * ph.repeat * runs);
    for (const RoutedPhase& ph : plan->phases)
      for (std::size_t f = 0; f + 1 < ph.shadow_offsets.size(); ++f)
        net_.count_bytes(ph.shadow_links.data() + ph.shadow_offsets[f],
                         ph.shadow_offsets[f + 1] - ph.shadow_offsets[f],
                         ph.shadow_bytes[f] * ph.repeat * runs);
  }
}

RoutedPlan Des::route(const std::vector<CollectivePlan>& plans, bool local_only, int rep_node,
                      int stage, std::int32_t owner) {
  RoutedPlan rp;
  rp.owner = memo_ ? owner : -1;
  if (plans.empty()) return rp;
  const int gpn = topo_.gpus_per_node();
  const int nodes_per_stage =
      prog_.layout.tp * prog_.layout.cp * prog_.layout.dp / std::max(1, gpn);
  const int bn = block_nodes_;
  const bool claims = mirror_ >= 2;  // (c) for EP groups: the links units_begin watches
  // Level 1 for this plan: every flow stays inside one EP group, its phases are single steps, and
  // with several groups there is one phase ((d), and the plan runs as one instance).
  bool blocks =
      claims && !local_only && stage >= 0 && (plans.size() == 1 || plans[0].phases.size() == 1);
  for (const CollPhase& cp : plans[0].phases)
    if (cp.repeat != 1) blocks = false;
  for (std::size_t i = 0; blocks && i < plans.size(); ++i)
    for (const CollPhase& cp : plans[i].phases)
      for (const CollFlow& f : cp.flows)
        if (topo_.node_of(f.src_gpu) / bn != topo_.node_of(f.dst_gpu) / bn) blocks = false;
  // Own flows per unit (level, unit): phase, source and destination relative to the unit, bytes,
  // subflow, and the path (upaths[off, off + n)).
  struct Own {
    std::size_t ph;
    int src, dst;
    double bytes;
    int part;
    std::uint32_t off, n;
    std::uint32_t idx;  // index among the phase's simulated flows, or its mirrored flows
    auto key() const { return std::make_tuple(ph, src, dst, part, bytes); }
  };
  std::map<std::pair<int, int>, std::vector<Own>> own;
  std::vector<std::uint32_t> upaths, ul, xl;
  rp.fixed_latency_s = plans[0].fixed_latency_s;
  rp.algo = plans[0].algo;
  rp.proto = plans[0].proto;
  rp.phases.resize(plans[0].phases.size());
  for (std::size_t ph = 0; ph < rp.phases.size(); ++ph) {
    RoutedPhase& out = rp.phases[ph];
    out.offsets.push_back(0);
    out.repeat = plans[0].phases[ph].repeat;
    out.groups.push_back(0);
    out.shadow_groups.push_back(0);
    for (const CollectivePlan& p : plans) {
      const CollPhase& cp = p.phases[ph];
      check_internal(cp.repeat == out.repeat, "engine: merged collective plans differ in steps");
      ul.clear();
      xl.clear();
      int group_block = -1;
      for (const CollFlow& f : cp.flows) {
        if (local_only && topo_.node_of(f.src_gpu) != rep_node) continue;
        if (f.src_gpu == f.dst_gpu) continue;
        const int node = topo_.node_of(f.src_gpu);
        const bool in_node = node == topo_.node_of(f.dst_gpu);
        int level = -1, unit = 0;  // -1: not a unit's own flow
        if (mirror_ && in_node && !local_only) {
          if (stage < 0 || node / nodes_per_stage != stage) throw MirrorBroken{0};
          level = 0;
          unit = node;
        } else if (blocks && !in_node) {
          level = 1;
          unit = node / bn;
        }
        const bool shadow = level == 0 ? node != rep_node : level == 1 && unit != rep_node / bn;
        const int base = level == 0 ? node * gpn : unit * bn * gpn;
        // Adaptive routing / spraying: one subflow of bytes / n per equal-cost path.
        const int np = topo_.paths(f.src_gpu, f.dst_gpu);
        for (int part = 0; part < np; ++part) {
          topo_.route_path(f.src_gpu, f.dst_gpu, flow_hash(opt_.seed, f.src_gpu, f.dst_gpu),
                           np > 1 ? part : -1, path_);
          if (rails_ == 2)
            for (std::uint32_t l : path_)
              if (rail_link_[l] != kNotRail) throw RailsBroken{};
          if (mirror_) own_links(in_node ? node : level == 1 ? kBlock - unit : kCross);
          if (memo_) hold_links(rp.owner);
          if (level >= 0) {
            own[{level, unit}].push_back(
                {ph, f.src_gpu - base, f.dst_gpu - base, f.bytes / np, part,
                 static_cast<std::uint32_t>(upaths.size()),
                 static_cast<std::uint32_t>(path_.size()),
                 static_cast<std::uint32_t>(shadow ? out.shadow_bytes.size() : out.bytes.size())});
            upaths.insert(upaths.end(), path_.begin(), path_.end());
          }
          if (level == 1) group_block = unit;
          if (claims && !in_node) {
            std::vector<std::uint32_t>& claim = level == 1 ? ul : xl;
            claim.insert(claim.end(), path_.begin(), path_.end());
          }
          if (shadow) {
            if (level == 1) {
              const auto i = static_cast<std::uint32_t>(out.shadow_bytes.size());
              if (out.unit_runs.empty() || out.unit_runs.back().block != unit ||
                  out.unit_runs.back().last != i)
                out.unit_runs.push_back({unit, i, i});
              ++out.unit_runs.back().last;
            }
            out.shadow_image.push_back(RoutedPhase::kNoImage);
            out.shadow_links.insert(out.shadow_links.end(), path_.begin(), path_.end());
            out.shadow_offsets.push_back(static_cast<std::uint32_t>(out.shadow_links.size()));
            out.shadow_bytes.push_back(f.bytes / np);
            ++mirrored_;
            continue;
          }
          out.links.insert(out.links.end(), path_.begin(), path_.end());
          for (std::uint32_t l : path_) rp.tiers |= 1u << static_cast<int>(topo_.links()[l].tier);
          out.offsets.push_back(static_cast<std::uint32_t>(out.links.size()));
          out.bytes.push_back(f.bytes / np);
          if (rails_ == 1) out.ends.insert(out.ends.end(), {f.src_gpu, f.dst_gpu, part});
        }
      }
      const auto nb = static_cast<std::uint32_t>(out.bytes.size());
      out.max_group = std::max(out.max_group, nb - out.groups.back());
      out.groups.push_back(nb);  // one group per plan, in every phase (possibly empty)
      out.shadow_groups.push_back(static_cast<std::uint32_t>(out.shadow_bytes.size()));
      if (claims) {
        for (auto* v : {&ul, &xl}) {
          std::sort(v->begin(), v->end());
          v->erase(std::unique(v->begin(), v->end()), v->end());
        }
        out.unit_links.insert(out.unit_links.end(), ul.begin(), ul.end());
        out.unit_groups.push_back(static_cast<std::uint32_t>(out.unit_links.size()));
        out.cross_links.insert(out.cross_links.end(), xl.begin(), xl.end());
        out.cross_groups.push_back(static_cast<std::uint32_t>(out.cross_links.size()));
        out.unit_block.push_back(group_block);
        rp.units = rp.units || group_block >= 0;
      }
    }
  }
  if (!own.empty()) {
    // (d): a paced run of several groups runs one instance per group, whose later steps start
    // when that group's earlier ones end; the units' own flows start together only in a run of
    // one step, or of one group.
    if (plans.size() > 1 && (rp.phases.size() > 1 || rp.phases[0].repeat > 1))
      throw MirrorBroken{own.begin()->first.first};  // level 0 first in the map: nodes break
    for (auto& [u, v] : own)
      std::sort(v.begin(), v.end(), [](const Own& a, const Own& b) { return a.key() < b.key(); });
    // (b): every unit of the stage has the representative's own flows, on corresponding links.
    for (int level = 0; level < 2; ++level) {
      const int size = level == 0 ? 1 : bn, per = nodes_per_stage / size;
      const int first = stage * per, ref_unit = rep_node / size;
      bool any = false;
      for (const auto& [u, v] : own) {
        if (u.first != level) continue;
        any = true;
        if (u.second < first || u.second >= first + per) throw MirrorBroken{level};
      }
      if (!any) continue;
      static const std::vector<Own> none;
      const auto rit = own.find({level, ref_unit});
      const std::vector<Own>& ref = rit == own.end() ? none : rit->second;
      for (int u = first; u < first + per; ++u) {
        if (u == ref_unit) continue;
        const auto it = own.find({level, u});
        const std::vector<Own>& v = it == own.end() ? none : it->second;
        if (v.size() != ref.size()) throw MirrorBroken{level};
        const std::uint64_t code =
            static_cast<std::uint64_t>(static_cast<std::uint32_t>(level == 0 ? u : kBlock - u))
            << 32;
        for (std::size_t i = 0; i < v.size(); ++i) {
          if (v[i].key() != ref[i].key() || v[i].n != ref[i].n) throw MirrorBroken{level};
          for (std::uint32_t j = 0; j < v[i].n; ++j) {
            const std::uint32_t lr = upaths[ref[i].off + j], lu = upaths[v[i].off + j];
            const auto [img, fresh] = image_.emplace(code | lr, lu);
            std::int64_t& back = image_of_[lu];
            if (back == -1) back = lr;
            if ((!fresh && img->second != lu) || back != lr ||
                net_.capacity_Bps(lu) != net_.capacity_Bps(lr) ||
                net_.latency_s(lu) != net_.latency_s(lr))
              throw MirrorBroken{level};
          }
          if (level == 1) rp.phases[v[i].ph].shadow_image[v[i].idx] = ref[i].idx;
        }
      }
    }
  }
  if (rp.owner >= 0) {
    // A plan with mirrored flows (nodes or EP groups) is never private: its runs keep mirroring's
    // own bookkeeping (Des::units_begin); its links are nobody's.
    bool mirrored = rp.units;
    for (const RoutedPhase& ph : rp.phases) mirrored = mirrored || !ph.shadow_bytes.empty();
    if (mirrored) {
      rp.owner = -1;
      for (const RoutedPhase& ph : rp.phases) {
        path_.assign(ph.links.begin(), ph.links.end());
        path_.insert(path_.end(), ph.shadow_links.begin(), ph.shadow_links.end());
        hold_links(-1);
      }
    }
  }
  if (rp.owner >= 0) {
    for (const RoutedPhase& ph : rp.phases)
      rp.own_links.insert(rp.own_links.end(), ph.links.begin(), ph.links.end());
    std::sort(rp.own_links.begin(), rp.own_links.end());
    rp.own_links.erase(std::unique(rp.own_links.begin(), rp.own_links.end()), rp.own_links.end());
  }
  rp.ngroups = rp.phases.empty() ? 0 : static_cast<std::uint32_t>(rp.phases[0].groups.size() - 1);
  return rp;
}

// The rail quotient. Let s map every GPU to the next GPU of its node (local index i -> i + 1 mod
// g, g GPUs per node). When, over every plan routed before the run (route_all),
//  (a) each simulated flow between nodes has its image under s in the same phase of the same plan
//      (source s(src), destination s(dst), the same subflow and bytes), and the hops of a flow and
//      of its image correspond under one map m of links, the same for every plan (m(l) = l for a
//      link every rail shares, such as a spine or core bundle), injective, between links of equal
//      capacity, latency, tier and bundle, whose orbits are of 1 or g links;
//  (b) no other simulated flow (inside a node) crosses a link of those flows, nor is in a plan with
//      them (a group of a ring through two GPUs of a node would be paced by its hop inside the
//      node, whose links the tensor-parallel groups load unlike the next GPUs'), and the images
//      of a group's flows are the flows of one group (each group is paced as its image is);
//  (c) the flows from a node's first GPU (local index 0, the representatives) cross at most one
//      link of each orbit of g links;
//  (d) a group (merged collective) of a phase holds representatives only or images only, so a
//      group that is simulated is paced on all its flows, as with every rail (its bottleneck and
//      chunks are its own), and the phase's largest group keeps two or more flows iff it had two
//      or more (Pace chunks a group of two or more); a group of images runs as one empty set per
//      phase, and its collective's images end with the representatives they mirror;
// then s maps the network, and every flow set the engine starts (all rails of a collective or
// transfer start together), onto itself, and by induction over events the max-min rates are
// invariant: a flow and its images have the same rate at all times. So only the representatives
// are simulated: a link of an orbit of g carries, at its representative, exactly what one rail
// puts there, and a link every rail shares carries g copies of each representative's load, so it
// is given 1/g of its capacity. The images are dropped from the flow sets; at the end each link
// of an orbit of g carries the bytes of the orbit's link the representatives cross (the same
// additions in the same order, so equal to the last bit), and a shared link g times its own
// (Des::bottlenecks), so the bottleneck report is that of every rail; node mirroring's shadows
// must then stay off those links. A plan routed later (route) that crosses a quotient link restarts
// the run with every rail (RailsBroken). ECMP hashing breaks (a) (a flow and its image take
// unrelated paths), so the quotient holds under spraying, adaptive and d-mod-k routing of
// rail-symmetric fabrics. Cost: one pass over the plans' flows; it divides the flows between nodes
// by g.
void Des::quotient_rails() {
  const int g = topo_.gpus_per_node();
  const std::size_t nl = topo_.links().size();
  std::vector<RoutedPlan*> all;
  for (auto& kv : coll_cache_) all.push_back(kv.second.get());
  for (auto& kv : p2p_cache_) all.push_back(kv.second.get());
  auto done = [&](bool on) {
    rails_ = on ? 2 : 0;
    for (RoutedPlan* p : all)
      for (RoutedPhase& ph : p->phases) std::vector<std::int32_t>().swap(ph.ends);
  };
  const auto fail = [&](const char* why) {
    rail_why_ = why;
    done(false);
  };
  const auto next = [g](int gpu) { return gpu - gpu % g + (gpu % g + 1) % g; };
  const auto key = [](int src, int dst, int part) {
    return static_cast<std::uint64_t>(static_cast<std::uint32_t>(src)) << 40 |
           static_cast<std::uint64_t>(static_cast<std::uint32_t>(dst)) << 16 |
           static_cast<std::uint64_t>(static_cast<std::uint32_t>(part));
  };
  const auto between = [&](const RoutedPhase& ph, std::uint32_t f) {
    return topo_.node_of(ph.ends[3 * f]) != topo_.node_of(ph.ends[3 * f + 1]);
  };
  const auto rep = [&](const RoutedPhase& ph, std::uint32_t f) {
    return !between(ph, f) || ph.ends[3 * f] % g == 0;
  };
  if (topo_.num_gpus() >= (1 << 24)) return fail("2^24 GPUs or more");  // key's 24-bit fields
  // (a) and (b): the map m (img, and pre its inverse); mark: 1 crossed by a flow between nodes,
  // 2 by another simulated flow.
  std::vector<std::int64_t> img(nl, -1), pre(nl, -1);
  std::vector<std::uint8_t> mark(nl, 0);
  std::unordered_map<std::uint64_t, std::uint32_t> at;
  std::vector<std::uint32_t> group_of;
  std::vector<std::int64_t> group_img;
  std::size_t images = 0;
  for (RoutedPlan* p : all)
    for (RoutedPhase& ph : p->phases) {
      const auto n = static_cast<std::uint32_t>(ph.bytes.size());
      check_internal(ph.ends.size() == 3 * static_cast<std::size_t>(n),
                     "engine: a plan's flow ends were not recorded");
      at.clear();
      for (std::uint32_t f = 0; f < n; ++f) {
        const bool b = between(ph, f);
        for (std::uint32_t h = ph.offsets[f]; h < ph.offsets[f + 1]; ++h)
          mark[ph.links[h]] |= b ? 1 : 2;
        if (b) at.emplace(key(ph.ends[3 * f], ph.ends[3 * f + 1], ph.ends[3 * f + 2]), f);
        if (ph.ends[3 * f + 2] >= (1 << 16)) return fail("2^16 subflows or more");  // key's field
      }
      if (!at.empty() && at.size() != n)
        return fail("a plan with flows between nodes and inside one");
      // group_of[f]: the group (merged collective) of flow f; a group's images form one group.
      group_of.assign(n, 0);
      for (std::uint32_t gi = 0; gi + 1 < ph.groups.size(); ++gi)
        for (std::uint32_t f = ph.groups[gi]; f < ph.groups[gi + 1]; ++f) group_of[f] = gi;
      group_img.assign(ph.groups.size(), -1);
      for (std::uint32_t f = 0; f < n; ++f) {
        if (!between(ph, f)) continue;
        const auto it =
            at.find(key(next(ph.ends[3 * f]), next(ph.ends[3 * f + 1]), ph.ends[3 * f + 2]));
        if (it == at.end()) return fail("a flow between nodes without its image on the next GPUs");
        const std::uint32_t e = it->second;
        std::int64_t& gimg = group_img[group_of[f]];
        if (gimg == -1) gimg = group_of[e];
        if (gimg != group_of[e]) return fail("a group's images in several groups");
        const std::uint32_t len = ph.offsets[f + 1] - ph.offsets[f];
        if (ph.bytes[e] != ph.bytes[f] || ph.offsets[e + 1] - ph.offsets[e] != len)
          return fail("a flow and its image differ in bytes or hops");
        for (std::uint32_t k = 0; k < len; ++k) {
          const std::uint32_t a = ph.links[ph.offsets[f] + k], b = ph.links[ph.offsets[e] + k];
          if (img[a] == -1) img[a] = b;
          if (pre[b] == -1) pre[b] = a;
          if (img[a] != b || pre[b] != a)
            return fail("a flow's hops and its image's map onto different links (ECMP hashing)");
        }
        if (!rep(ph, f)) ++images;
      }
    }
  if (images == 0) return fail("no flow between nodes");
  // Orbits: of 1 or g alike links; orbit[l]: the least link of l's orbit of g (-1: a shared link).
  std::vector<std::int64_t> orbit(nl, -1);
  const auto& links = topo_.links();
  for (std::uint32_t l = 0; l < nl; ++l) {
    if (mark[l] == 3) return fail("a link crossed by flows between nodes and inside a node");
    if (mark[l] != 1) continue;
    std::uint32_t x = l, least = l;
    int len = 0;
    do {
      if (img[x] < 0) return fail("a link without image");
      const auto y = static_cast<std::uint32_t>(img[x]);
      const Link &A = links[x], &B = links[y];
      if (A.bandwidth_Bps != B.bandwidth_Bps || A.latency_s != B.latency_s || A.tier != B.tier ||
          topo_.link_bundle(x) != topo_.link_bundle(y) ||
          net_.capacity_Bps(x) != net_.capacity_Bps(y) || net_.latency_s(x) != net_.latency_s(y))
        return fail("links of an orbit differ in capacity, latency, tier or bundle (failures)");
      x = y;
      least = std::min(least, x);
      ++len;
    } while (x != l && len <= g);
    if (x != l || (len != 1 && len != g))
      return fail("an orbit of neither 1 nor GPUs-per-node links");
    if (len == g) orbit[l] = least;
  }
  // Mirrored flows inside nodes (node mirroring's shadows) stay off those links: each such link's
  // bytes are its representative's at the end.
  for (RoutedPlan* p : all)
    for (const RoutedPhase& ph : p->phases)
      for (std::uint32_t l : ph.shadow_links)
        if (mark[l] != 0) return fail("a mirrored flow inside a node on a link between nodes");
  // (c) and (d).
  std::vector<std::int64_t> owner(nl, -1);
  for (RoutedPlan* p : all)
    for (RoutedPhase& ph : p->phases) {
      for (std::uint32_t f = 0; f < ph.bytes.size(); ++f) {
        if (!between(ph, f) || !rep(ph, f)) continue;
        for (std::uint32_t h = ph.offsets[f]; h < ph.offsets[f + 1]; ++h) {
          const std::uint32_t l = ph.links[h];
          if (orbit[l] < 0) continue;
          std::int64_t& o = owner[static_cast<std::size_t>(orbit[l])];
          if (o == -1) o = l;
          if (o != l) return fail("representatives on two links of one orbit");
        }
      }
      std::uint32_t max_kept = 0;
      for (std::size_t gi = 0; gi + 1 < ph.groups.size(); ++gi) {
        std::uint32_t kept = 0;
        for (std::uint32_t f = ph.groups[gi]; f < ph.groups[gi + 1]; ++f) kept += rep(ph, f);
        max_kept = std::max(max_kept, kept);
        if (kept > 0 && kept != ph.groups[gi + 1] - ph.groups[gi])
          return fail("a group with representatives and images");
      }
      if ((ph.max_group >= 2) != (max_kept >= 2)) return fail("a phase would be paced differently");
    }
  // The quotient: the images dropped; shared links at 1/g, and each link's bytes, at the end
  // (Des::bottlenecks), those of its orbit's representative link (g times those of a shared one).
  for (RoutedPlan* p : all)
    for (RoutedPhase& ph : p->phases) {
      RoutedPhase q;
      q.repeat = ph.repeat;
      q.offsets = {0};
      q.groups = {0};
      q.shadow_groups = {0};
      for (std::size_t gi = 0; gi + 1 < ph.groups.size(); ++gi) {
        for (std::uint32_t f = ph.groups[gi]; f < ph.groups[gi + 1]; ++f) {
          if (!rep(ph, f)) continue;
          q.links.insert(q.links.end(), ph.links.begin() + ph.offsets[f],
                         ph.links.begin() + ph.offsets[f + 1]);
          q.offsets.push_back(static_cast<std::uint32_t>(q.links.size()));
          q.bytes.push_back(ph.bytes[f]);
        }
        for (std::uint32_t f = ph.shadow_groups[gi]; f < ph.shadow_groups[gi + 1]; ++f) {
          q.shadow_links.insert(q.shadow_links.end(),
                                ph.shadow_links.begin() + ph.shadow_offsets[f],
                                ph.shadow_links.begin() + ph.shadow_offsets[f + 1]);
          q.shadow_offsets.push_back(static_cast<std::uint32_t>(q.shadow_links.size()));
          q.shadow_bytes.push_back(ph.shadow_bytes[f]);
          q.shadow_image.push_back(ph.shadow_image[f]);
        }
        const auto nb = static_cast<std::uint32_t>(q.bytes.size());
        q.max_group = std::max(q.max_group, nb - q.groups.back());
        q.groups.push_back(nb);
        q.shadow_groups.push_back(static_cast<std::uint32_t>(q.shadow_bytes.size()));
      }
      ph = std::move(q);
    }
  rail_link_.assign(nl, kNotRail);
  for (std::uint32_t l = 0; l < nl; ++l) {
    if (mark[l] != 1) continue;
    if (orbit[l] < 0) {
      net_.scale_capacity(l, 1.0 / g);
      rail_link_[l] = kShared;
      ++rail_shared_;
    } else {
      const std::int64_t o = owner[static_cast<std::size_t>(orbit[l])];
      rail_link_[l] = o == l || o < 0 ? kOwn : o;
    }
  }
  rail_images_ = images;
  rail_why_ = "";
  done(true);
}

const RoutedPlan* Des::collective_plan(std::uint32_t c, const Op& op) {
  if (const RoutedPlan* p =
          cls_[c].find_plan(static_cast<int>(op.coll), static_cast<int>(op.group), 0, op.bytes))
    return p;
  auto key = std::make_tuple(c, static_cast<int>(op.coll), static_cast<int>(op.group), op.bytes);
  auto it = coll_cache_.find(key);
  if (it != coll_cache_.end()) return it->second.get();
  // Over the whole stage for collectives that join replica timelines (c is then replica 0's).
  const bool whole = crosses_replicas(op.group);
  const int per_stage = prog_.layout.tp * prog_.layout.cp * prog_.layout.dp;
  std::vector<int> stage_ranks;
  if (whole)
    for (int i = 0; i < per_stage; ++i) stage_ranks.push_back(cls_[c].rc->stage * per_stage + i);
  std::vector<std::vector<int>> groups = groups_of(whole ? stage_ranks : ranks_of(c), op.group);
  std::vector<CollectivePlan> plans;
  plans.reserve(groups.size());
  bool local = true;
  for (const auto& g : groups) {
    const int nd = topo_.node_of(g[0]);
    for (int r : g)
      if (topo_.node_of(r) != nd) local = false;
  }
  const int rep_node = topo_.node_of(cls_[c].first_rank);
  for (const auto& g : groups) {
    if (local && topo_.node_of(g[0]) != rep_node) continue;
    plans.push_back(plan_collective(op.coll, op.bytes, g, ctx_));
  }
  auto rp = std::make_unique<RoutedPlan>(
      route(plans, local, rep_node, cls_[c].rc->stage, whole ? -1 : static_cast<std::int32_t>(c)));
  const RoutedPlan* ptr = rp.get();
  coll_cache_.emplace(key, std::move(rp));
  cls_[c].plans.push_back(
      {static_cast<int>(op.coll), static_cast<int>(op.group), 0, op.bytes, ptr});
  return ptr;
}

const RoutedPlan* Des::p2p_plan(std::uint32_t sc, std::uint32_t dc, double bytes) {
  if (const RoutedPlan* p = cls_[sc].find_plan(-1, -1, dc, bytes)) return p;
  auto key = std::make_tuple(sc, dc, bytes);
  auto it = p2p_cache_.find(key);
  if (it != p2p_cache_.end()) return it->second.get();
  const std::vector<int> src = ranks_of(sc), dst = ranks_of(dc);
  std::vector<CollectivePlan> plans;
  bool local = true;
  for (std::size_t i = 0; i < src.size(); ++i)
    if (topo_.node_of(src[i]) != topo_.node_of(dst[i])) local = false;
  const int rep_node = topo_.node_of(src[0]);
  for (std::size_t i = 0; i < src.size(); ++i) {
    if (local && topo_.node_of(src[i]) != rep_node) continue;
    plans.push_back(plan_p2p(src[i], dst[i], bytes, ctx_));
  }
  auto rp = std::make_unique<RoutedPlan>(route(plans, local, rep_node));
  rp->fixed_latency_s = prof_.nccl.p2p_latency_s;
  const RoutedPlan* ptr = rp.get();
  p2p_cache_.emplace(key, std::move(rp));
  cls_[sc].plans.push_back({-1, -1, dc, bytes, ptr});
  return ptr;
}

// Private runs need the links' holders settled before runs are taken from the memo: a plan first
// routed during the run that crosses a held link while a memoised run is on it breaks the run
// (MemoBroken). So every transfer and every collective a timeline will run is routed before the
// first op starts (the same plans the run would route as it goes, cached the same way); only the
// collectives across pipeline stages (GroupDim::PP) are still routed as they start. The rail
// quotient (Des::quotient_rails) needs the same, memo or not.
void Des::route_all() {
  for (std::uint32_t c = 0; c < cls_.size(); ++c) {
    const ClassState& s = cls_[c];
    const auto& ops = s.rc->ops;
    for (std::uint32_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      if (op.kind == OpKind::Collective && op.group != GroupDim::PP) {
        op_plan(crosses_replicas(op.group) ? c - static_cast<std::uint32_t>(s.replica) : c, i, op);
      } else if (op.kind == OpKind::Send) {
        const int peer = s.rc->stage + op.peer_delta;
        if (peer < 0 || peer >= static_cast<int>(prog_.classes.size())) continue;  // start_op says
        p2p_plan(c, static_cast<std::uint32_t>(peer * replicas_ + s.replica), op.bytes);
      }
    }
  }
}

void Des::release(std::uint32_t c, std::uint32_t i) {
  ready_.release(tl_[c].st[i].indeg, {c, i}, "engine");
}

void Des::drain_ready() {
  ready_.drain([this](std::pair<std::uint32_t, std::uint32_t> k) { start_op(k.first, k.second); });
}

void Des::complete_op(std::uint32_t c, std::uint32_t i) {
  const Hot& h = tl_[c];
  h.st[i].end = now_;
  ++done_ops_;
  release_successors(*h.ops, i, [&](std::uint32_t j) { release(c, j); });
}

std::uint32_t Des::new_instance(const RoutedPlan* plan, bool paced, std::uint32_t group,
                                std::uint32_t join) {
  const std::uint32_t id = take_slot(insts_, free_insts_);
  CommInstance& in = insts_[id];
  in.plan = plan;
  in.phase = 0;
  in.pace.reset(paced);
  in.group = group;
  in.join = join;
  push(now_ + plan->fixed_latency_s, 1, id, 0);
  return id;
}

void Des::begin_comm(const RoutedPlan* plan, std::span<const OpRef> parts) {
  for (auto [c, i] : parts) tl_[c].st[i].rendezvous = now_;
  // Neighbourhood: the tiers this run crosses that other communication in flight crosses too.
  std::uint64_t sig = 0;
  for (int t = 0; t < kTiers; ++t)
    if (plan->tiers >> t & 1) {
      if (tier_live_[t] > 0) sig |= std::uint64_t{1} << t;
      ++tier_live_[t];
      ++tier_begins_[t];
    }
  const TierCounts begins = tier_begins_;
  const bool paced = !plan->is_quiet(sig);
  const std::size_t ng = plan->ngroups;
  PrivateRun pr;
  if (plan->owner >= 0) {
    bool alone = owns_links(*plan);
    for (std::uint32_t l : plan->own_links) {
      if (memo_busy_[l] > 0) throw MemoBroken{};  // that run went as if alone: start again
      if (sim_busy_[l] > 0) alone = false;
    }
    const double m = plan->memo_s[paced ? 1 : 0];
    if (alone && m >= 0) {
      for (std::uint32_t l : plan->own_links) ++memo_busy_[l];
      ++memo_taken_;
      if (plan->memo_count++ == 0) memo_plans_.push_back(plan);
      const std::uint32_t id = take_slot(memo_runs_, free_memo_);
      MemoRun& mr = memo_runs_[id];
      mr.plan = plan;
      mr.paced = paced;
      mr.sig = sig;
      mr.begins = begins;
      mr.participants.assign(parts.begin(), parts.end());
      push(now_ + m, 2, id, 0);
      return;
    }
    pr = {plan->owner, alone && m == -1, ++priv_seq_, now_};
    for (std::uint32_t l : plan->own_links) {
      ++sim_busy_[l];
      last_begin_[l] = pr.seq;  // runs in flight on l are no longer alone
    }
  }
  if (!paced || ng < 2 || plan->units) {  // units: one set for all groups (Des::units_begin)
    const std::uint32_t id = new_instance(plan, paced, CommInstance::kAll, CommInstance::kAll);
    insts_[id].participants.assign(parts.begin(), parts.end());
    insts_[id].paced = paced;
    insts_[id].sig = sig;
    insts_[id].begins = begins;
    insts_[id].priv = pr;
    return;
  }
  const std::uint32_t j = take_slot(joins_, free_joins_);
  joins_[j].pending = static_cast<std::uint32_t>(ng);
  joins_[j].moved = false;
  joins_[j].paced = true;
  joins_[j].sig = sig;
  joins_[j].begins = begins;
  joins_[j].participants.assign(parts.begin(), parts.end());
  joins_[j].priv = pr;
  for (std::uint32_t g = 0; g < ng; ++g) new_instance(plan, true, g, j);
}

void Des::end_private(const PrivateRun& pr, const RoutedPlan* plan, bool paced, bool moved) {
  if (pr.owner < 0) return;
  bool undisturbed = true;
  for (std::uint32_t l : plan->own_links) {
    --sim_busy_[l];
    undisturbed = undisturbed && last_begin_[l] == pr.seq;
  }
  double& m = plan->memo_s[paced ? 1 : 0];
  if (pr.record && undisturbed && m == -1) m = moved ? -2 : now_ - pr.t0;
}

void Des::end_memo(std::uint32_t id) {
  MemoRun& mr = memo_runs_[id];
  end_run(mr.plan, mr.paced, mr.sig, mr.begins, false);
  for (std::uint32_t l : mr.plan->own_links) --memo_busy_[l];
  for (auto [c, i] : mr.participants) complete_op(c, i);
  mr.participants.clear();
  free_memo_.push_back(id);
}

void Des::end_run(const RoutedPlan* plan, bool paced, std::uint64_t sig, const TierCounts& begins,
                  bool moved) {
  // Changed: other communication began during the run on a tier it crosses that was free of
  // others at its start.
  bool changed = false;
  for (int t = 0; t < kTiers; ++t)
    if (plan->tiers >> t & 1) {
      --tier_live_[t];
      changed = changed || (!(sig >> t & 1) && tier_begins_[t] != begins[t]);
    }
  if (paced && !moved && !changed) plan->set_quiet(sig, true);
  if (!paced && changed) plan->set_quiet(sig, false);
}

void Des::start_phase(std::uint32_t id) {
  CommInstance& in = insts_[id];
  if (in.phase >= in.plan->phases.size()) {
    if (in.join == CommInstance::kAll) {
      end_run(in.plan, in.paced, in.sig, in.begins, in.pace.moved);
      end_private(in.priv, in.plan, in.paced, in.pace.moved);
      in.priv = {};
      for (auto [c, i] : in.participants) complete_op(c, i);
      in.participants.clear();
    } else {
      Join& jn = joins_[in.join];
      jn.moved = jn.moved || in.pace.moved;
      if (--jn.pending == 0) {
        end_run(in.plan, jn.paced, jn.sig, jn.begins, jn.moved);
        end_private(jn.priv, in.plan, jn.paced, jn.moved);
        jn.priv = {};
        for (auto [c, i] : jn.participants) complete_op(c, i);
        jn.participants.clear();
        free_joins_.push_back(in.join);
      }
    }
    free_insts_.push_back(id);
    return;
  }
  const RoutedPhase& ph = in.plan->phases[in.phase];
  Pace& pc = in.pace;
  const bool all = in.group == CommInstance::kAll;
  const std::uint32_t* groups = ph.groups.data() + (all ? 0 : in.group);
  const auto ng = all ? static_cast<std::uint32_t>(ph.groups.size() - 1) : 1u;
  const std::uint32_t max_group = all ? ph.max_group : groups[1] - groups[0];
  const int k = pc.take(ph.repeat - pc.step, ph.repeat, max_group);
  FlowNetwork::SetId set = net_.open_set(id);
  flows_started_ += groups[ng] - groups[0];
  for (std::uint32_t f = groups[0]; f < groups[ng]; ++f)
    net_.add_flow(set, ph.links.data() + ph.offsets[f], ph.offsets[f + 1] - ph.offsets[f],
                  ph.bytes[f] * k, k);
  const std::uint32_t* sg = ph.shadow_groups.data() + (all ? 0 : in.group);
  for (std::uint32_t f = sg[0]; f < sg[ng]; ++f)
    net_.count_bytes(ph.shadow_links.data() + ph.shadow_offsets[f],
                     ph.shadow_offsets[f + 1] - ph.shadow_offsets[f], ph.shadow_bytes[f] * k);
  net_.start_set(set, now_);
  in.set = set;
  if (mirror_ >= 2) units_begin(id, all ? 0 : in.group, all ? ng : in.group + 1);
  pc.watch(set, ph.bytes.data(), groups, ng, max_group, ph.repeat);
  if (pc.watched && !pc.listed) {
    pc.listed = true;
    watch_.push_back(id);
  }
}

void Des::on_set_done(std::uint64_t tag) {
  std::uint32_t id = static_cast<std::uint32_t>(tag);
  CommInstance& in = insts_[id];
  const bool all = in.group == CommInstance::kAll;
  const RoutedPhase& ph = in.plan->phases[in.phase];
  if (mirror_ >= 2)
    units_end(id, all ? 0 : in.group,
              all ? static_cast<std::uint32_t>(ph.groups.size() - 1) : in.group + 1);
  in.pace.watched = false;
  in.pace.step += in.pace.chunk;
  if (in.pace.step >= in.plan->phases[in.phase].repeat) {
    ++in.phase;
    in.pace.new_phase();
  }
  start_phase(id);
}

void Des::check_pacing() {
  std::size_t w = 0;
  for (std::uint32_t id : watch_) {
    Pace& pc = insts_[id].pace;
    pc.check(net_, now_);
    if (pc.watched)
      watch_[w++] = id;
    else
      pc.listed = false;
  }
  watch_.resize(w);
}

void Des::start_op(std::uint32_t c, std::uint32_t i) {
  const Hot& h = tl_[c];
  h.st[i].start = now_;
  h.st[i].started = 1;
  if (is_compute(h.kind[i])) {
    double& t = h.op_s[i];  // the same for every timeline of the class
    if (t < 0) t = op_time_s(h.rc->ops[i], cl_.gpu, prof_) * opt_.compute_slowdown;
    push(now_ + t, 0, c, i);
    return;
  }
  const Op& op = h.rc->ops[i];
  ClassState& s = cls_[c];
  if (op.kind == OpKind::Collective) {
    if (op.group == GroupDim::PP) {
      auto key = std::make_tuple(op.name, s.ops->occurrence[i], s.replica);
      auto& parts = xcoll_[key];
      parts.push_back({c, i});
      if (parts.size() < xcoll_expected_[{op.name, s.ops->occurrence[i]}]) return;
      // Group: the representative ranks of the participating stages; one flow set per tp/cp/dp.
      std::vector<std::vector<int>> ranks;
      for (auto [pc, pi] : parts) ranks.push_back(ranks_of(pc));
      std::vector<CollectivePlan> plans;
      for (int j = 0; j < s.nranks; ++j) {
        std::vector<int> g;
        for (const auto& r : ranks) g.push_back(r[j]);
        plans.push_back(plan_collective(op.coll, op.bytes, g, ctx_));
      }
      auto key2 = std::make_tuple(0xffffffffu - c, static_cast<int>(op.coll),
                                  static_cast<int>(op.group), op.bytes);
      auto it = coll_cache_.find(key2);
      if (it == coll_cache_.end())
        it = coll_cache_.emplace(key2, std::make_unique<RoutedPlan>(route(plans, false, 0))).first;
      begin_comm(it->second.get(), parts);
      xcoll_.erase(key);
      return;
    }
    if (crosses_replicas(op.group)) {  // wait for the stage's other replica timelines
      const std::uint32_t base = c - static_cast<std::uint32_t>(s.replica);
      auto& parts = rcoll_[{base, i}];
      parts.push_back({c, i});
      if (parts.size() < static_cast<std::size_t>(replicas_)) return;
      begin_comm(op_plan(base, i, op), parts);
      rcoll_.erase({base, i});
      return;
    }
    const OpRef one[] = {{c, i}};
    begin_comm(op_plan(c, i, op), one);
    return;
  }
  // Send / Recv: rendezvous with the matching op of the peer stage.
  const int stage = s.rc->stage;
  const int peer = stage + op.peer_delta;
  if (peer < 0 || peer >= static_cast<int>(prog_.classes.size()))
    throw InternalError("program: send/recv to stage " + std::to_string(peer) +
                        " that does not exist");
  const int src = op.kind == OpKind::Send ? stage : peer,
            dst = op.kind == OpKind::Send ? peer : stage;
  // Issue order on the stream: the next op of this stream may be issued now.
  if (s.ops->stream_next[i] >= 0) release(c, static_cast<std::uint32_t>(s.ops->stream_next[i]));
  auto key = std::make_tuple(src, dst, op.tag, s.replica);
  auto it = p2p_wait_.find(key);
  if (it == p2p_wait_.end()) {
    p2p_wait_.emplace(key, std::make_pair(c, i));
    return;
  }
  auto other = it->second;
  p2p_wait_.erase(it);
  const Op& oop = cls_[other.first].rc->ops[other.second];
  check_internal(oop.kind != op.kind, "program: two sends (or two recvs) share a tag");
  std::uint32_t sc = op.kind == OpKind::Send ? c : other.first;
  std::uint32_t dc = op.kind == OpKind::Send ? other.first : c;
  double bytes = op.kind == OpKind::Send ? op.bytes : oop.bytes;
  const OpRef two[] = {{other.first, other.second}, {c, i}};
  begin_comm(p2p_plan(sc, dc, bytes), two);
}

SimResult Des::run() {
  auto wall0 = std::chrono::steady_clock::now();
  build();
  if (!opt_.trace.path.empty()) {  // before simulating: bad filters and oversized traces fail fast
    double run_iterations = 0;     // as finish_result counts them
    if (opt_.tokens_to_train > 0 && prog_.tokens_per_iteration > 0)
      run_iterations = std::ceil(opt_.tokens_to_train / prog_.tokens_per_iteration);
    else if (opt_.samples_to_train > 0 && prog_.samples_per_iteration > 0)
      run_iterations = std::ceil(opt_.samples_to_train / prog_.samples_per_iteration);
    check_trace(prog_, trace_timelines(), opt_.trace, run_iterations);
  }
  // Every plan routed before the run, for the memo and the rail quotient.
  if (memo_ || rails_ == 1) route_all();
  if (rails_ == 1) quotient_rails();
  for (std::uint32_t c = 0; c < cls_.size(); ++c)
    for (std::uint32_t i = 0; i < cls_[c].rc->ops.size(); ++i)
      if (cls_[c].st[i].indeg == 0) ready_.push({c, i});
  std::reverse(ready_.list().begin(), ready_.list().end());
  drain_ready();
  std::vector<std::uint64_t> done;
  while (true) {
    double tn = net_.next_event_time();
    double tq = events_.empty() ? FlowNetwork::kNever : events_.top().t;
    if (tn == FlowNetwork::kNever && tq == FlowNetwork::kNever) break;
    if (tn <= tq) {
      now_ = tn;
      done.clear();
      net_.advance(tn, done);
      check_pacing();
      for (std::uint64_t tag : done) on_set_done(tag);
    } else {
      Event e = events_.top();
      events_.pop();
      now_ = e.t;
      // The next op to complete: fetch its record while this event is handled.
      if (!events_.empty() && events_.top().kind == 0)
        __builtin_prefetch(tl_[events_.top().a].st + events_.top().b, 1);
      if (e.kind == 0)
        complete_op(e.a, e.b);
      else if (e.kind == 1)
        start_phase(e.a);
      else
        end_memo(e.a);
    }
    drain_ready();
  }
  if (done_ops_ != total_ops_) {
    for (std::uint32_t c = 0; c < cls_.size(); ++c)
      for (std::uint32_t i = 0; i < cls_[c].rc->ops.size(); ++i)
        if (cls_[c].st[i].end < 0)
          throw InternalError(
              "program deadlocks: stage " + std::to_string(cls_[c].rc->stage) + " op " +
              std::to_string(i) + " (" + prog_.names.at(cls_[c].rc->ops[i].name) + ", " +
              to_string(cls_[c].rc->ops[i].kind) + ") never " +
              (cls_[c].st[i].started ? "finished (unmatched send/recv?)" : "started"));
  }
  unpack();
  double iter = 0;
  for (const auto& s : cls_)
    for (double e : s.end) iter = std::max(iter, e);
  SimResult r;
  r.engine = "native";
  r.iteration_time_s = iter;
  r.approximations = approximations_;
  count_memo_bytes();
  breakdown(r, iter);
  bottlenecks(r, iter);
  finish_result(r, prog_, cl_, prof_, opt_);
  if (!opt_.trace.path.empty())
    write_trace(opt_.trace.path, prog_, trace_timelines(), opt_.trace.filter, iter);
  if (opt_.replica_timelines) *opt_.replica_timelines = replicas_;
  if (opt_.mirrored_flows) *opt_.mirrored_flows = mirrored_;
  if (opt_.memo_runs) *opt_.memo_runs = memo_taken_;
  if (opt_.mirror_level) *opt_.mirror_level = mirror_;
  if (opt_.rail_images) *opt_.rail_images = rail_images_;
  if (std::getenv("TUTTI_ENGINE_STATS"))
    std::fprintf(
        stderr,
        "engine: %zu ops x %d replica timelines (of %d replicas; grouped in %.3f s, %.3f s CPU), "
        "%llu flows started, %llu rate solves, %llu flow re-rates, %zu comm plans, %zu flows "
        "mirrored (mirroring %s), %zu mirrored "
        "flows run for real when perturbed (over all runs), %zu private runs from the memo (%s), "
        "%zu flows left to rail symmetry (%zu links shared by the rails)%s%s\n",
        total_ops_ / replicas_, replicas_, prog_.layout.dp, group_s_, group_cpu_s_,
        static_cast<unsigned long long>(flows_started_),
        static_cast<unsigned long long>(net_.solves()),
        static_cast<unsigned long long>(net_.flows_solved()),
        coll_cache_.size() + p2p_cache_.size(), mirrored_,
        mirror_ == 2 ? ("nodes and EP groups of " + std::to_string(block_nodes_) + " nodes").c_str()
        : mirror_ == 1 ? "nodes"
                       : "off",
        made_real_, memo_taken_, memo_ ? "on" : "off", rail_images_, rail_shared_,
        *rail_why_ ? ": " : "", rail_why_);
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return r;
}

// The op times of each timeline as the arrays OpTimeline reads; a rank class's records are freed
// once its timelines are copied, so the peak memory stays about that of the records.
void Des::unpack() {
  for (std::size_t c = 0; c < cls_.size(); ++c) {
    ClassState& s = cls_[c];
    const std::size_t n = s.rc->ops.size();
    s.start.reserve(n);  // filled once (resize would zero them first)
    s.end.reserve(n);
    s.rendezvous.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      s.start.push_back(s.st[i].start);
      s.end.push_back(s.st[i].end);
      s.rendezvous.push_back(s.st[i].rendezvous);
    }
    s.st = nullptr;
    if ((c + 1) % static_cast<std::size_t>(replicas_) == 0)
      HugeVector<ClassState::OpState>().swap(op_pool_[c / replicas_]);
  }
}

void Des::breakdown(SimResult& r, double iter) {
  // Critical class: the one whose last op ends last (ties: lowest stage).
  std::size_t crit = 0;
  double best = -1;
  for (std::size_t c = 0; c < cls_.size(); ++c) {
    double e = 0;
    for (double x : cls_[c].end) e = std::max(e, x);
    if (e > best + 1e-15) {
      best = e;
      crit = c;
    }
  }
  auto timeline = [](const ClassState& cs) {
    return OpTimeline{cs.rc, cs.start.data(), cs.end.data(), cs.rendezvous.data()};
  };
  const ClassState& s = cls_[crit];
  const OpTimeline t = timeline(s);
  // The peer stage's timeline of the same replica.
  OpTimeline peer_tl;
  const PeerTimeline peer = [&](int delta) -> const OpTimeline* {
    for (const ClassState& pc : cls_)
      if (pc.rc->stage == s.rc->stage + delta && pc.replica == s.replica) {
        peer_tl = timeline(pc);
        return &peer_tl;
      }
    return nullptr;
  };
  const Attribution a = attribute_timeline(t, peer, iter);
  r.breakdown = a.breakdown;
  r.gemm_busy_s = a.gemm_busy_s;
  r.memory_busy_s = a.memory_busy_s;
  r.comm_busy_s = a.comm_busy_s;
  // MoE parts: of the class with the most MoE busy time (the critical class may hold only dense
  // layers, e.g. DeepSeek-V3's first stage).
  double moe_best = 0;
  for (const ClassState& cs : cls_) {
    double tot = 0;
    const EnumArray<MoePart, double> m = moe_busy(timeline(cs), &tot);
    if (tot > moe_best) {
      moe_best = tot;
      r.breakdown.moe_s = m;
    }
  }
}

void Des::bottlenecks(SimResult& r, double iter) {
  std::vector<double> bytes = net_.link_bytes();
  if (rails_ == 2)  // the other rails' bytes (Des::quotient_rails)
    for (std::size_t l = 0; l < bytes.size(); ++l) {
      const std::int64_t o = rail_link_[l];
      if (o == kShared) bytes[l] *= topo_.gpus_per_node();
      if (o >= 0) bytes[l] = bytes[static_cast<std::size_t>(o)];
    }
  std::vector<std::uint32_t> idx;
  for (std::uint32_t l = 0; l < bytes.size(); ++l)
    if (bytes[l] > 0) idx.push_back(l);
  // Per cable: a link standing for a bundle (Topology::link_bundle) carries the bundle's bytes.
  auto per_cable = [&](std::uint32_t l) { return bytes[l] / topo_.link_bundle(l); };
  auto util = [&](std::uint32_t l) {
    return per_cable(l) / (topo_.links()[l].bandwidth_Bps * iter);
  };
  std::stable_sort(idx.begin(), idx.end(), [&](std::uint32_t a, std::uint32_t b) {
    double ua = util(a), ub = util(b);
    return ua != ub ? ua > ub : a < b;
  });
  if (idx.size() > static_cast<std::size_t>(opt_.max_bottleneck_links))
    idx.resize(opt_.max_bottleneck_links);
  for (std::uint32_t l : idx) {
    const Link& L = topo_.links()[l];
    LinkUse u;
    u.link = l;
    u.tier = L.tier;
    u.name = fabric_link_name(topo_, l);
    u.utilization = iter > 0 ? util(l) : 0;
    u.bytes = per_cable(l);
    r.bottleneck_links.push_back(u);
  }
}

std::vector<TraceTimeline> Des::trace_timelines() const {
  std::vector<TraceTimeline> out;
  // One timeline per run of consecutive replicas of a group (a whole stage when it is one group).
  const int span = prog_.layout.tp * prog_.layout.cp, per_stage = span * prog_.layout.dp;
  for (const ClassState& s : cls_) {
    const std::vector<int>& g = rgroups_[s.replica];
    for (std::size_t a = 0; a < g.size();) {
      std::size_t b = a + 1;
      while (b < g.size() && g[b] == g[b - 1] + 1) ++b;
      out.push_back({s.rc, s.rc->stage * per_stage + g[a] * span, static_cast<int>(b - a) * span,
                     s.start.data(), s.end.data(), s.rendezvous.data()});
      a = b;
    }
  }
  return out;
}

}  // namespace

std::uint64_t flow_hash(std::uint64_t seed, int src_gpu, int dst_gpu) {
  auto mix = [](std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  };
  return mix(seed ^ mix((static_cast<std::uint64_t>(static_cast<std::uint32_t>(src_gpu)) << 32) |
                        static_cast<std::uint32_t>(dst_gpu)));
}

double simulate_collectives(const std::vector<CollectivePlan>& plans, const Topology& topo,
                            const CalibrationProfile& profile, std::uint64_t seed,
                            std::vector<double>* finish_s) {
  FlowNetwork net(topo, profile);
  std::vector<std::size_t> phase(plans.size(), 0);
  std::vector<double> fin(plans.size(), 0);
  std::vector<Pace> pace(plans.size());
  std::vector<std::vector<double>> step_bytes(plans.size());  // per plan: bytes of the flows sent
  std::vector<std::uint32_t> groups(2 * plans.size());        // per plan: one group
  // Fixed latencies first: (time, plan) events.
  std::priority_queue<std::pair<double, std::size_t>, std::vector<std::pair<double, std::size_t>>,
                      std::greater<>>
      ev;
  for (std::size_t p = 0; p < plans.size(); ++p) ev.push({plans[p].fixed_latency_s, p});
  std::vector<std::uint32_t> path;
  double now = 0;
  auto start_phase = [&](std::size_t p) {
    if (phase[p] >= plans[p].phases.size()) {
      fin[p] = now;
      return;
    }
    const CollPhase& ph = plans[p].phases[phase[p]];
    Pace& pc = pace[p];
    std::vector<double>& sb = step_bytes[p];
    sb.clear();
    for (const CollFlow& f : ph.flows)
      if (f.src_gpu != f.dst_gpu) {
        const int np = topo.paths(f.src_gpu, f.dst_gpu);
        for (int part = 0; part < np; ++part) sb.push_back(f.bytes / np);
      }
    const auto nf = static_cast<std::uint32_t>(sb.size());
    const int k = pc.take(ph.repeat - pc.step, ph.repeat, nf);
    auto set = net.open_set(p);
    for (const CollFlow& f : ph.flows) {
      if (f.src_gpu == f.dst_gpu) continue;
      const int np = topo.paths(f.src_gpu, f.dst_gpu);  // adaptive/spray: one subflow per path
      for (int part = 0; part < np; ++part) {
        topo.route_path(f.src_gpu, f.dst_gpu, flow_hash(seed, f.src_gpu, f.dst_gpu),
                        np > 1 ? part : -1, path);
        net.add_flow(set, path.data(), path.size(), f.bytes / np * k, k);
      }
    }
    net.start_set(set, now);
    groups[2 * p] = 0;
    groups[2 * p + 1] = nf;
    pc.watch(set, sb.data(), groups.data() + 2 * p, 1, nf, ph.repeat);
  };
  std::vector<std::uint64_t> done;
  while (true) {
    double tn = net.next_event_time();
    double tq = ev.empty() ? FlowNetwork::kNever : ev.top().first;
    if (tn == FlowNetwork::kNever && tq == FlowNetwork::kNever) break;
    if (tq < tn) {
      now = tq;
      std::size_t p = ev.top().second;
      ev.pop();
      start_phase(p);
    } else {
      now = tn;
      done.clear();
      net.advance(tn, done);
      for (Pace& pc : pace) pc.check(net, now);
      for (auto tag : done) {
        Pace& pc = pace[tag];
        pc.watched = false;
        pc.step += pc.chunk;
        if (pc.step >= plans[tag].phases[phase[tag]].repeat) {
          ++phase[tag];
          pc.new_phase();
        }
        start_phase(tag);
      }
    }
  }
  if (finish_s) *finish_s = fin;
  double t = 0;
  for (double x : fin) t = std::max(t, x);
  return t;
}

SimResult simulate_program(const Program& program, const SimCluster& cluster,
                           const CalibrationProfile& profile, const ProgramSimOptions& options) {
  check_internal(cluster.topology != nullptr, "simulate_program: cluster without topology");
  if (!(options.compute_slowdown >= 1.0))
    throw InputError("compute_slowdown", "compute_slowdown",
                     std::to_string(options.compute_slowdown), ">= 1");
  int level = options.mirror_nodes ? (options.mirror_ep_groups ? 2 : 1) : 0;
  // TUTTI_MIRROR=0/1 caps the level (benchmarks of the exact reference at scale: bench/engine.md).
  if (const char* cap = std::getenv("TUTTI_MIRROR"); cap != nullptr && (*cap == '0' || *cap == '1'))
    level = std::min(level, *cap - '0');
  // A failed check of mirroring restarts one level down; of a memoised private run, without the
  // memo.
  bool memo = options.memo_private;
  // The rail quotient goes with mirroring (TUTTI_MIRROR=0 is the every-flow reference);
  // TUTTI_RAILS=0 turns it off alone.
  const char* rails_env = std::getenv("TUTTI_RAILS");
  bool rails = options.quotient_rails && level >= 1 && !(rails_env != nullptr && *rails_env == '0');
  while (true) {
    try {
      Des des(program, cluster, profile, options, level, memo, rails);
      return des.run();
    } catch (const MirrorBroken& b) {
      check_internal(b.retry < level, "engine: mirroring broke at a level it was not on");
      level = b.retry;
    } catch (const MemoBroken&) {
      memo = false;
    } catch (const RailsBroken&) {
      rails = false;
    }
  }
}

void finish_result(SimResult& r, const Program& program, const SimCluster& cluster,
                   const CalibrationProfile& profile, const ProgramSimOptions& options) {
  const double it = r.iteration_time_s;
  const double world = program.world;
  if (it > 0) {
    r.tokens_per_s_per_gpu = program.tokens_per_iteration / (it * world);
    r.samples_per_s = program.samples_per_iteration / it;
    r.tflops_per_gpu = program.model_flops_per_iteration / (it * world) / 1e12;
    double peak = peak_flops(cluster.gpu, program.dtype, profile);
    if (peak > 0) {
      r.mfu = program.model_flops_per_iteration / (it * world * peak);
      r.hfu = program.hardware_flops_per_iteration / (it * world * peak);
    }
  }
  if (options.tokens_to_train > 0 && program.tokens_per_iteration > 0)
    r.iterations = std::ceil(options.tokens_to_train / program.tokens_per_iteration);
  else if (options.samples_to_train > 0 && program.samples_per_iteration > 0)
    r.iterations = std::ceil(options.samples_to_train / program.samples_per_iteration);
  r.time_to_train_s = r.iterations * it;
}

}  // namespace tutti
