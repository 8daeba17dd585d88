#include "tutti/models/program.hpp"

#include "tutti/core/error.hpp"

namespace tutti {

std::uint16_t Program::intern(const std::string& name) {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<std::uint16_t>(i);
  check_internal(names.size() < 65535, "Program: too many op names");
  names.push_back(name);
  return static_cast<std::uint16_t>(names.size() - 1);
}

int rank_of(const Layout& l, int tp, int cp, int dp, int pp) {
  return tp + l.tp * (cp + l.cp * (dp + l.dp * pp));
}

RankCoords coords_of(const Layout& l, int rank) {
  RankCoords c;
  c.tp = rank % l.tp;
  rank /= l.tp;
  c.cp = rank % l.cp;
  rank /= l.cp;
  c.dp = rank % l.dp;
  c.pp = rank / l.dp;
  return c;
}

std::vector<int> group_ranks(const Layout& l, int rank, GroupDim dim) {
  RankCoords c = coords_of(l, rank);
  std::vector<int> g;
  switch (dim) {
    case GroupDim::TP:
      for (int i = 0; i < l.tp; ++i) g.push_back(rank_of(l, i, c.cp, c.dp, c.pp));
      break;
    case GroupDim::CP:
      for (int i = 0; i < l.cp; ++i) g.push_back(rank_of(l, c.tp, i, c.dp, c.pp));
      break;
    case GroupDim::DP:
      for (int i = 0; i < l.dp; ++i) g.push_back(rank_of(l, c.tp, c.cp, i, c.pp));
      break;
    case GroupDim::DPxCP:
      for (int d = 0; d < l.dp; ++d)
        for (int i = 0; i < l.cp; ++i) g.push_back(rank_of(l, c.tp, i, d, c.pp));
      break;
    case GroupDim::EP: {
      if (l.folded()) {  // ep consecutive local indices tp + tp*(cp + cp*dp) of the stage
        const int per = l.tp * l.cp * l.dp, first = c.pp * per;
        const int base = ((rank - first) / l.ep) * l.ep;
        for (int i = 0; i < l.ep; ++i) g.push_back(first + base + i);
        break;
      }
      int base = (c.dp / l.ep) * l.ep;
      for (int i = 0; i < l.ep; ++i) g.push_back(rank_of(l, c.tp, c.cp, base + i, c.pp));
      break;
    }
    case GroupDim::PP:
      for (int i = 0; i < l.pp; ++i) g.push_back(rank_of(l, c.tp, c.cp, c.dp, i));
      break;
    case GroupDim::DPShard: {
      // Index j = dp * cp + cp_index of the DPxCP group; shard groups are runs of shard_size.
      const int n = l.shard_size(), j = c.dp * l.cp + c.cp, base = j / n * n;
      for (int k = base; k < base + n; ++k) g.push_back(rank_of(l, c.tp, k % l.cp, k / l.cp, c.pp));
      break;
    }
    case GroupDim::DPReplica: {
      const int n = l.shard_size(), j = c.dp * l.cp + c.cp;
      for (int k = j % n; k < l.dp * l.cp; k += n)
        g.push_back(rank_of(l, c.tp, k % l.cp, k / l.cp, c.pp));
      break;
    }
    case GroupDim::EDP:
      if (l.folded()) {  // the same position in every EP group of the stage
        const int per = l.tp * l.cp * l.dp, first = c.pp * per;
        for (int i = (rank - first) % l.ep; i < per; i += l.ep) g.push_back(first + i);
        break;
      }
      for (int d = c.dp % l.ep; d < l.dp; d += l.ep)
        for (int i = 0; i < l.cp; ++i) g.push_back(rank_of(l, c.tp, i, d, c.pp));
      break;
  }
  return g;
}

double bus_factor(Coll c, int n) {
  if (n <= 0) return 0;
  switch (c) {
    case Coll::AllReduce:
      return 2.0 * (n - 1) / n;
    case Coll::AllGather:
    case Coll::ReduceScatter:
    case Coll::AllToAll:
      return static_cast<double>(n - 1) / n;
    case Coll::Broadcast:
      return 1.0;
  }
  return 0;
}

}  // namespace tutti
