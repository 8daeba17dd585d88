#pragma once
// Private: the generator functions behind build_fabric().
#include <memory>
#include <string>

#include "tutti/topologies/fabric.hpp"

namespace tutti::detail {

std::shared_ptr<const Topology> build_clos(const FabricHardware& hw, const FabricSpec& spec,
                                           FabricFacts& facts, const std::string& file);
std::shared_ptr<const Topology> build_dragonfly(const FabricHardware& hw, const FabricSpec& spec,
                                                FabricFacts& facts, const std::string& file);
std::shared_ptr<const Topology> build_torus(const FabricHardware& hw, const FabricSpec& spec,
                                            FabricFacts& facts, const std::string& file);
std::shared_ptr<const Topology> build_single_node(const FabricHardware& hw, const FabricSpec& spec,
                                                  FabricFacts& facts, const std::string& file);

}  // namespace tutti::detail
