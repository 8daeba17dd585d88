#include "tutti/topologies/fabric.hpp"

#include "clos.hpp"
#include "node_layer.hpp"
#include "tutti/core/error.hpp"

namespace tutti {

namespace detail {
namespace {
class SingleNode final : public NodeLayer {
 public:
  std::string describe() const override { return "single node (no scale-out fabric)"; }

 protected:
  void route_fabric(int, int, std::uint64_t, std::vector<std::uint32_t>&) const override {
    throw InternalError("single-node topology asked to route between nodes");
  }
};
}  // namespace

std::shared_ptr<const Topology> build_single_node(const FabricHardware& hw, const FabricSpec& spec,
                                                  FabricFacts& facts, const std::string& file) {
  int domain_nodes = hw.node.scaleup == ScaleUp::NVSwitch
                         ? std::max(1, hw.node.nvlink_domain_gpus / std::max(1, hw.gpus_per_node))
                         : 1;
  if (hw.nodes > domain_nodes)
    throw InputError(file, "fabric.kind", "\"none\"",
                     "a scale-out fabric (fat_tree, rail_optimized, ...) for more than one node");
  auto t = std::make_shared<SingleNode>();
  t->build_nodes(hw, spec);
  facts.description = t->describe();
  facts.tiers = 0;
  facts.link_bw_Bps = 0;
  return t;
}
}  // namespace detail

std::shared_ptr<const Topology> build_fabric(const FabricHardware& hw, const FabricSpec& spec,
                                             FabricFacts& facts, const std::string& file) {
  facts = FabricFacts{};
  std::shared_ptr<const Topology> t;
  switch (spec.kind) {
    case FabricKind::None:
      t = detail::build_single_node(hw, spec, facts, file);
      break;
    case FabricKind::FatTree:
    case FabricKind::RailOptimized:
    case FabricKind::DualPlane:
    case FabricKind::RailOnly:
      t = detail::build_clos(hw, spec, facts, file);
      break;
    case FabricKind::Dragonfly:
      t = detail::build_dragonfly(hw, spec, facts, file);
      break;
    case FabricKind::Torus:
      t = detail::build_torus(hw, spec, facts, file);
      break;
  }
  if (t == nullptr) throw InternalError("unknown fabric kind");
  // The diameter walks routes from three sources to every GPU (the largest share of building a
  // 100k-GPU cluster after the graph itself); callers that never show it skip it.
  if (spec.measure_diameter) {
    const auto* layer = dynamic_cast<const detail::NodeLayer*>(t.get());
    check_internal(layer != nullptr, "build_fabric: a generator that is not a NodeLayer");
    layer->measure_diameter(facts);
  }
  return t;
}

}  // namespace tutti
