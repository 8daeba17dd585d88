// Enumeration of the search space: GPU counts and structurally valid parallel layouts.
// The order here is the global configuration order; changing it changes indices (not answers).
#include <algorithm>
#include <cmath>

#include "plan_internal.hpp"
#include "tutti/core/error.hpp"

namespace tutti {

namespace {

std::vector<int> or_default(const std::vector<int>& v, std::vector<int> dflt) {
  return v.empty() ? dflt : v;
}

struct Lists {
  std::vector<int> tp, pp, cp, ep, vp, mb, zero, shard_group, reshard;
  std::vector<Recompute> recompute;
};

Lists lists_for(const SpaceFacts& f, const LayoutSpace& s, int nvlink_domain) {
  Lists l;
  std::vector<int> tp_default;
  for (int t : {1, 2, 4, 8})
    if (t <= std::max(1, nvlink_domain)) tp_default.push_back(t);
  l.tp = or_default(s.tp, tp_default);
  std::vector<int> pp_default;
  for (int p = 1; p <= std::min(f.layers, 32); ++p)
    if (f.layers % p == 0) pp_default.push_back(p);
  l.pp = or_default(s.pp, pp_default);
  l.cp = or_default(s.cp, {1, 2});
  std::vector<int> ep_default{1};
  for (int e = 2; f.experts > 0 && e <= std::min(f.experts, 64); e *= 2)
    if (f.experts % e == 0) ep_default.push_back(e);
  l.ep = or_default(s.ep, ep_default);
  l.vp = or_default(s.vp, {1, 2});
  l.mb = or_default(s.micro_batch, {1, 2});
  l.zero = or_default(s.zero, {1, 2, 3});
  // 0 = shard over every data-parallel rank; -1 stands for "the data-parallel ranks of one NVLink
  // domain" (hybrid sharding inside the domain), resolved per layout below.
  l.shard_group = or_default(s.shard_group, {0, -1});
  l.reshard = or_default(s.reshard, {0, 1});
  l.recompute = s.recompute.empty()
                    ? std::vector<Recompute>{Recompute::None, Recompute::Selective, Recompute::Full}
                    : s.recompute;
  return l;
}

// Calls emit(layout) for every valid layout, in order.
template <class F>
void for_each_layout(const SpaceFacts& f, const LayoutSpace& s, int gpus, int nvlink_domain,
                     F&& emit) {
  Lists L = lists_for(f, s, nvlink_domain);
  if (!f.transformer) L.tp = L.pp = L.cp = L.ep = L.vp = {1};
  for (int tp : L.tp) {
    if (f.heads % tp != 0 || f.kv_heads % tp != 0 || gpus % tp != 0) continue;
    if (f.ffn_hidden % tp != 0) continue;
    for (int pp : L.pp) {
      if (pp > f.layers || (gpus / tp) % pp != 0) continue;  // Uneven stages are allowed.
      for (int cp : L.cp) {
        if ((gpus / tp / pp) % cp != 0 || f.seq_len % (2 * cp) != 0) continue;
        int dp = gpus / tp / pp / cp;
        for (int ep : L.ep) {
          if (ep > 1 && (f.experts == 0 || f.experts % ep != 0)) continue;
          // etp = tp (0): EP carved out of dp, experts TP-sharded. etp = 1 (parallel folding):
          // EP spans tp x cp x dp, tried for MoE layouts with tp > 1.
          for (int etp : {0, 1}) {
            if (etp == 0 && (ep > 1 && dp % ep != 0)) continue;
            if (etp == 0 && f.experts > 0 && f.moe_ffn_hidden % tp != 0) continue;
            if (etp == 1 && (tp == 1 || ep == 1 || (tp * cp * dp) % ep != 0)) continue;
            for (int vp : L.vp) {
              if (vp > 1 && (pp == 1 || pp * vp > f.layers)) continue;
              for (int mb : L.mb) {
                if (f.global_batch % (dp * mb) != 0) continue;
                if (tp > 1 && (static_cast<long long>(f.seq_len / cp) * mb) % tp != 0) continue;
                int micro_batches = f.global_batch / (dp * mb);
                if (vp > 1 && micro_batches % pp != 0) continue;  // Megatron's interleaving rule.
                for (int zero : L.zero)
                  for (int sg_item : L.shard_group)
                    for (int rs_item : L.reshard) {
                      // zero=3 tries each reshard value; other stages have none (one pass).
                      if (zero < 3 && rs_item != L.reshard.front()) continue;
                      const int dpc = dp * cp;
                      int sg = sg_item;
                      if (sg < 0) sg = nvlink_domain / tp;  // the DP ranks inside one NVLink domain
                      if (sg >= dpc) sg = 0;
                      if (sg > 0 && (sg < 2 || dpc % sg != 0 || zero == 0 || !f.transformer))
                        continue;
                      if (sg_item < 0 && sg == 0) continue;  // same as shard_group=0, already tried
                      for (Recompute rc : L.recompute) {
                        Layout l;
                        l.tp = tp;
                        l.pp = pp;
                        l.cp = cp;
                        l.dp = dp;
                        l.ep = ep;
                        l.etp = etp;
                        l.vp = vp;
                        l.micro_batch = mb;
                        l.zero = zero;
                        l.shard_group = sg;
                        l.reshard = zero == 3 ? rs_item : -1;
                        l.fsdp = false;
                        l.sequence_parallel = tp > 1;
                        l.schedule = vp > 1 ? PipeSchedule::Interleaved : PipeSchedule::OneFOneB;
                        l.recompute = rc;
                        emit(l);
                      }
                    }
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace

std::vector<Layout> enumerate_layouts(const SpaceFacts& f, const LayoutSpace& space, int gpus,
                                      int nvlink_domain) {
  std::vector<Layout> out;
  for_each_layout(f, space, gpus, nvlink_domain, [&](const Layout& l) { out.push_back(l); });
  return out;
}

std::uint64_t count_layouts(const SpaceFacts& f, const LayoutSpace& space, int gpus,
                            int nvlink_domain) {
  std::uint64_t n = 0;
  for_each_layout(f, space, gpus, nvlink_domain, [&](const Layout&) { ++n; });
  return n;
}

std::vector<int> gpu_counts(const PlanRequest& r, int gpus_per_node) {
  std::vector<int> c;
  auto keep = [&](long long n) {
    if (n >= r.gpus_min && n <= r.gpus_max && n % std::max(1, gpus_per_node) == 0)
      c.push_back(static_cast<int>(n));
  };
  if (!r.gpu_counts.empty()) {
    for (int n : r.gpu_counts) keep(n);
  } else {
    // The ladder runs over node counts, so nodes of any size (8 GPUs, 72 GPUs) get rungs.
    long long per = std::max(1, gpus_per_node);
    for (long long p = 1; p * per <= 4LL * r.gpus_max; p *= 2) {
      keep(p * per);
      if (p % 4 == 0) keep((p + p / 4) * per);
      if (p % 2 == 0) keep((p + p / 2) * per);
    }
  }
  std::sort(c.begin(), c.end());
  c.erase(std::unique(c.begin(), c.end()), c.end());
  return c;
}

std::pair<std::uint64_t, std::uint64_t> Planner::slice(std::uint64_t size, int part, int parts) {
  check_internal(parts >= 1 && part >= 0 && part < parts, "plan: bad slice");
  std::uint64_t p = static_cast<std::uint64_t>(part), n = static_cast<std::uint64_t>(parts);
  std::uint64_t base = size / n, extra = size % n;
  std::uint64_t begin = p * base + std::min(p, extra);
  return {begin, begin + base + (p < extra ? 1 : 0)};
}

}  // namespace tutti
