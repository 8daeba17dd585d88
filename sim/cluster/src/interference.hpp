#pragma once
// Link sharing between running jobs (private to the cluster simulator).
//
// A job that spans leaf groups (or nodes, on fabrics without leaves) routes one ring flow per
// rail between consecutive nodes of its placement through the cluster's routing formula; every
// fabric link above the access tier that a flow crosses carries it. Each flow asks for
// `demand` (the job's solo fabric busy share, in units of link capacity). A link is shared by
// water-filling (max-min fairness with demands, as the flow model's progressive filling does
// for elastic flows): flows asking less than the fair level get their demand, the others the
// level. A job's stretch is its worst ratio demand / share over its links, relative to the share
// it gets alone (its own flows colliding are already in its solo time).
#include <cstdint>
#include <vector>

namespace tutti {
class Topology;
namespace cluster_detail {
struct Shape;

class LinkShare {
 public:
  LinkShare(const Topology& t, const Shape& s);
  /// Adds job `j` on `gpus` with per-flow demand `demand`; appends jobs whose share may change.
  void add(int j, const std::vector<int>& gpus, double demand, std::vector<int>& touched);
  /// Removes job `j`; appends jobs whose share may change.
  void remove(int j, std::vector<int>& touched);
  /// Communication stretch (>= 1) of job `j` now.
  double stretch(int j) const;
  /// Leaf groups spanned by `gpus`; `domains` receives the NVLink domains spanned.
  int groups_spanned(const std::vector<int>& gpus, int& domains) const;
  /// Jobs currently loading `link` (for tests).
  int jobs_on(std::uint32_t link) const { return static_cast<int>(links_[link].users.size()); }

 private:
  struct Use {
    int job, flows;
  };
  struct LinkState {
    std::vector<Use> users;
    double level =
        1e300;         ///< Water level (share per flow of unsatisfied flows); huge = not saturated.
    double total = 0;  ///< Sum of the demands of its flows.
  };
  struct JobState {
    std::vector<std::pair<std::uint32_t, int>> links;  ///< (link, flows of the job on it)
    double demand = 0;
    bool active = false;
  };
  /// Re-solves `link`; true when its water level changed.
  bool solve(std::uint32_t link);
  double water_level(std::uint32_t link);
  const Topology& t_;
  const Shape& s_;
  std::vector<LinkState> links_;
  std::vector<JobState> jobs_;
  std::vector<std::uint32_t> path_, hops_;
  std::vector<Use> sort_;
};

}  // namespace cluster_detail
}  // namespace tutti
