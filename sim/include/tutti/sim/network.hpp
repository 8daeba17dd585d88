#pragma once
// Flow-level network: every directed link is shared max-min fairly among the flows crossing it,
// the model SimGrid calls CM02 (with cross-traffic off and no TCP-gamma window bound):
//   * a flow of B bytes started at t0 on path P first waits its latency
//     L = latency_scale * sum_{l in P} (latency_l + tier extra latency), without using bandwidth,
//     then joins the sharing; it finishes when its B bytes have been sent;
//   * while flows are active, their rates are the max-min fair allocation (progressive filling:
//     repeatedly take the link with the smallest fair share remaining_capacity / unfrozen flows,
//     freeze its flows at that share, subtract them from their other links);
//   * rates are recomputed at every change of the active set (a flow joins or finishes), and only
//     for the connected component (links <-> flows) that the change touched. Three reductions keep
//     that exact: a link crossed by a single flow only bounds that flow's rate by its capacity
//     (it couples nothing, so it is neither traversed nor filled); so does a slack link, whose
//     flows' narrowest-link capacities sum to no more than its own (it never saturates: an
//     adaptive-routing bundle carrying a few rings); and when flows only finished,
//     flows rated below the lowest finished rate keep their rates (their rates are held and
//     subtracted from shared links' capacity). Rates agree with a full re-solve to rounding
//     (the order of floating-point subtractions differs; tests/sim/network_test.cpp checks
//     random instances to 1e-9 relative).
// Link capacity = bandwidth_Bps * the profile's bandwidth efficiency for the link's tier.
//
// Cost: one re-solve is O(sum of path lengths in the component * log L) with a heap of link fair
// shares; a flow's start and end cost O(path length) (flat per-link lists) plus O(log F) in the
// completion heap (F active flows; re-rates that delay a flow cost O(1), see heap_settle); flows,
// paths and per-link list blocks live in pools reused through free lists, so a steady-state
// simulation does not allocate. State: O(L + sum of active path lengths).
//
// `latency_scale` lets one flow stand for R identical lock-step steps (a ring's 2(n-1) steps):
// scaling every byte count and latency of an isolated flow set by R scales its whole max-min
// timeline by exactly R, so one set of "macro flows" with bytes*R and latency_scale R takes R
// times one step (see collective_model.hpp).
#include <cstdint>
#include <limits>
#include <queue>
#include <span>
#include <vector>

#include "tutti/sim/calibration.hpp"
#include "tutti/sim/huge_pages.hpp"
#include "tutti/topologies/topology.hpp"

namespace tutti {

class FlowNetwork {
 public:
  using SetId = std::uint32_t;
  static constexpr double kNever = std::numeric_limits<double>::infinity();

  /// Links of `topo` with capacities and latencies adjusted by `profile`'s tier models; a link
  /// standing for a bundle of cables (Topology::link_bundle) gets the bundle's capacity.
  FlowNetwork(const Topology& topo, const CalibrationProfile& profile);
  /// A bare network (tests): capacity in bytes/s and latency in seconds per link.
  FlowNetwork(std::vector<double> capacity_Bps, std::vector<double> latency_s);

  std::size_t num_links() const { return cap_.size(); }
  double capacity_Bps(std::uint32_t link) const { return cap_[link]; }
  double latency_s(std::uint32_t link) const { return lat_[link]; }
  /// Sum of link latencies along a path (seconds).
  double path_latency_s(const std::uint32_t* links, std::size_t n) const;

  /// Opens a flow set; `tag` is returned by advance() when every flow of the set has finished.
  SetId open_set(std::uint64_t tag);
  /// Adds a flow of `bytes` on the path `links[0..n)` to an open set. n == 0 means a local copy
  /// (finishes after its latency, i.e. at once).
  void add_flow(SetId set, const std::uint32_t* links, std::size_t n, double bytes,
                double latency_scale = 1.0);
  /// Counts `bytes` on each link of `links[0..n)` in link_bytes() without simulating a flow (a
  /// flow the engine mirrors from another node, engine.cpp Des::route).
  void count_bytes(const std::uint32_t* links, std::size_t n, double bytes) {
    for (std::size_t i = 0; i < n; ++i) link_bytes_[links[i]] += bytes;
  }
  /// Adds to a started set a flow on the path `links[0..n)` in the state flow `index` (in add
  /// order) of the set is in at `now`: its remaining bytes, and its activation time while it waits
  /// its latency; nothing when that flow has finished. The engine's mirrored flows of a unit that
  /// another flow starts to perturb (engine.cpp Des::make_real) go on from where their image is.
  void clone_flow(SetId set, std::size_t index, const std::uint32_t* links, std::size_t n,
                  double now);
  /// Starts every flow of the set at time `now` (>= the time of the last advance()).
  /// An empty set completes at `now` (reported by the next advance(now)).
  void start_set(SetId set, double now);

  /// Time of the next flow activation or completion (kNever when idle).
  double next_event_time();
  /// Processes every activation and completion at time `t` (t <= next_event_time(); events
  /// within a relative 1e-12 of t are processed together), re-solves the rates, and appends the
  /// tags of the sets that finished to `completed`.
  void advance(double t, std::vector<std::uint64_t>& completed);

  /// Multiplies link l's capacity by `factor` (engine.cpp Des::quotient_rails); before any flow.
  void scale_capacity(std::uint32_t l, double factor);
  /// Current rate (bytes/s) of flow `index` (in add order) of a started set (0 while in latency).
  double flow_rate(SetId set, std::size_t index) const {  // inline: pacing checks call it per flow
    const Flow& fl = flows_[sets_[set].flows[index]];
    return fl.state == 2 ? fl.rate : 0.0;
  }
  /// Bytes carried by each link so far (counted when flows start).
  const std::vector<double>& link_bytes() const { return link_bytes_; }
  std::size_t active_flows() const { return n_active_; }
  /// Tests: false makes every solve re-rate the whole component with every link filled (the
  /// reference the incremental solver is checked against). Default true.
  void set_incremental(bool on) { incremental_ = on; }
  /// Statistics: number of rate solves and total flows re-rated.
  std::uint64_t solves() const { return solves_; }
  std::uint64_t flows_solved() const { return flows_solved_; }

 private:
  static constexpr std::uint32_t kNoPos = 0xffffffffu;
  // Hot fields first: the component search and the filling read rate, cap, mark, off, n. One
  // cache line per flow (what only new_flow and clone_flow read is in FlowCold).
  struct alignas(64) Flow {
    double rate = 0;
    double cap = 0;  // solver scratch: min capacity of the links this flow has to itself
    std::uint32_t mark = 0;
    std::uint32_t off = 0, n = 0;  // hops hop_link_/hop_pos_[off, off + n)
    bool frozen = false;
    bool fresh = false;      // joined the sharing since the last solve
    std::uint8_t state = 0;  // 0 free, 1 waiting latency, 2 active
    double remaining = 0, t_ref = 0, t_fin = kNever;
    std::uint32_t set = 0, version = 0;
  };
  static_assert(sizeof(Flow) == 64);
  struct FlowCold {
    std::uint32_t hop_cap = 0;  // hops of the slot's block in hop_link_/hop_pos_
    std::uint32_t index = 0;    // position in its set's flows
  };
  struct Set {
    std::uint64_t tag = 0;
    std::uint32_t pending = 0;
    std::vector<std::uint32_t> flows;
    bool open = false, started = false;
  };
  struct LinkEntry {
    std::uint32_t flow, hop;  // hop: index into hop_link_/hop_pos_
  };
  struct TimedFlow {
    double t;
    std::uint32_t flow, version;
    bool operator>(const TimedFlow& o) const { return t != o.t ? t > o.t : flow > o.flow; }
  };
  using MinHeap = std::priority_queue<TimedFlow, std::vector<TimedFlow>, std::greater<TimedFlow>>;

  struct HeapEntry {
    double t;  // the flow's t_fin
    std::uint32_t flow;
    bool operator<(const HeapEntry& o) const { return t != o.t ? t < o.t : flow < o.flow; }
  };
  void heap_place(std::size_t i, const HeapEntry& e);
  void heap_up(std::size_t i);
  void heap_down(std::size_t i);
  void heap_settle();
  void heap_update(std::uint32_t f);
  void heap_remove(std::uint32_t f);
  /// Collects in due_ the flows finishing by `horizon`; when they are many, also takes them out
  /// of the heap (sorted by (t_fin, flow)) and returns true.
  bool heap_pop_due(double horizon);
  /// Sorts distinct flow ids ascending (heap_pop_due; a bitmap when their span is compact).
  void sort_ids(std::vector<std::uint32_t>& ids);
  /// A flow slot on `links[0..n)`, waiting (state 1) and listed last in `set` (add_flow and
  /// clone_flow then set its bytes and activation time).
  std::uint32_t new_flow(SetId set, const std::uint32_t* links, std::size_t n);
  /// The capacity of the flow's narrowest link (a bound on its rate) in units of 1/kQuantum
  /// B/s (computed again where needed: one more pass over its few hops, no room in Flow).
  std::uint64_t bound_q(const Flow& fl) const;
  void activate(std::uint32_t f);
  void detach(std::uint32_t f);
  void finish(std::uint32_t f, std::vector<std::uint64_t>& completed);
  void resolve(double now);

  std::vector<double> cap_, lat_, link_bytes_;
  // Active flows per link, flat: link l's entries are entries_[lists_[l].off, + n), in a block
  // of `room` slots of one pool (a link that outgrows its block moves to a new one at the end, of
  // twice the size, so the pool stays within twice the sum of per-link peak flow counts). One
  // 40-byte record per link holds what the hot loops read of it (capacity, offset, count, the
  // sum of its flows' bounds, the solver's visit mark, the joins since the last solve), so a hop
  // costs one access to it and one to its block.
  struct LinkList {
    double cap_Bps = 0;          // = cap_[l]
    std::uint64_t ub_sum_q = 0;  // sum of the rate bounds (bound_q) of its active flows
    std::uint32_t off = 0, n = 0, room = 0, mark = 0;
    std::uint32_t adds = 0;    // flows that joined since the last solve
    std::uint8_t coupled = 0;  // coupling at the last solve that saw it (resolve)
  };
  /// Whether a link couples its flows' rates in a solve (resolve): shared and not slack (every
  /// link with a flow in the reference solver).
  bool couples(const LinkList& ll) const {
    return incremental_ ? ll.n >= 2 && (static_cast<double>(ll.ub_sum_q) > ll.cap_Bps * kSlackQ ||
                                        ll.cap_Bps >= kMaxBound)
                        : ll.n >= 1;
  }
  // Slack links (resolve): rate bounds are summed in units of 1/kQuantum bytes/s (exact integer
  // sums, rounding 1/128 B/s per flow: ties are found for flows above ~8 GB/s, below that a tie
  // just couples), and a link is slack when the sum is at most its capacity x kSlackQ. Links of
  // kMaxBound (1 PB/s) or more always couple, and bounds are capped there, so a sum stays in
  // range (2^64 / kQuantum = 2.9e17 B/s) while a link's flows' bounds stay under that.
  static constexpr double kQuantum = 64.0, kMaxBound = 1e15;
  static constexpr double kSlackQ = kQuantum * (1 + 1e-12);
  // The pools below are HugeVectors: the solver visits them in an order set by the traffic, and
  // huge pages spare most of those visits a TLB miss at scale (huge_pages.hpp).
  HugeVector<LinkList> lists_;
  HugeVector<LinkEntry> entries_;
  std::span<const LinkEntry> on_link(std::uint32_t l) const {
    return {entries_.data() + lists_[l].off, lists_[l].n};
  }
  // Flow paths in one pool: hop_link_[h] is the link, hop_pos_[h] the index of the flow's entry
  // in link hop_link_[h]'s list while it is active.
  HugeVector<std::uint32_t> hop_link_, hop_pos_;
  std::span<const std::uint32_t> path(const Flow& fl) const {
    return {hop_link_.data() + fl.off, fl.n};
  }
  HugeVector<Flow> flows_;
  HugeVector<FlowCold> cold_;  // per flow slot
  std::vector<std::uint32_t> free_flows_;
  std::vector<Set> sets_;
  std::vector<SetId> free_sets_;
  std::vector<std::uint64_t> empty_done_;
  MinHeap activations_;
  HugeVector<HeapEntry> cheap_;         // indexed 4-ary min-heap of active flows, lazy keys
  HugeVector<std::uint32_t> hpos_;      // per flow slot: its index in cheap_ (kNoPos: none)
  std::vector<std::uint32_t> due_;      // heap_pop_due's result
  std::vector<HeapEntry> due_keys_;     // heap_pop_due scratch: (t_fin, flow) of the due flows
  std::vector<std::size_t> walk_;       // heap_pop_due's stack
  std::vector<std::uint64_t> id_bits_;  // sort_ids's bitmap
  struct ShareEntry {
    double share;
    std::uint32_t link, ver;
  };
  std::vector<ShareEntry> heap_;
  struct FlowCap {
    double cap;
    std::uint32_t flow;
  };
  std::vector<FlowCap> flow_caps_;
  std::vector<std::uint32_t> touched_, active_links_, link_pos_, fresh_;
  std::vector<double> scan_share_;
  // Solver scratch.
  std::vector<std::uint32_t> dirty_links_, comp_links_, comp_flows_, link_cnt_, link_ver_;
  std::vector<double> link_rem_;
  std::uint32_t epoch_ = 0;
  // Lowest rate among the flows that finished since the last solve, and lower bounds of the rates
  // of the flows that joined. Removing (adding) a flow of rate r cannot change a rate below r:
  // in progressive filling no link of that flow saturates below r (in the network without (with)
  // it), so every freeze below r happens as before. The next solve therefore re-rates only the
  // flows rated >= that floor (and the new ones), with the others' rates held.
  double resolve_floor_ = std::numeric_limits<double>::infinity();
  bool incremental_ = true;
  std::size_t n_active_ = 0;
  std::uint64_t solves_ = 0, flows_solved_ = 0;
  double now_ = 0;
};

}  // namespace tutti
