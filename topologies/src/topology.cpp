#include "tutti/topologies/topology.hpp"

namespace tutti {
const char* to_string(Tier t) {
  switch (t) {
    case Tier::NVLink: return "nvlink";
    case Tier::PCIe: return "pcie";
    case Tier::Access: return "access";
    case Tier::LeafSpine: return "leaf_spine";
    case Tier::SpineCore: return "spine_core";
    case Tier::Local: return "local";
    case Tier::Global: return "global";
    case Tier::Torus: return "torus";
  }
  return "?";
}
}  // namespace tutti
