#pragma once
// Coarsest equitable partition (colour refinement, 1-WL) of the graph of replicas, flows and links
// that the native engine groups replicas by (engine.cpp, Des::replica_groups, where the proof of
// exactness is). Partition refinement by splitter classes with the "all but the largest part"
// rule (Hopcroft; Cardon and Crochemore 1982): O((E + V) log V) for E flow hops and owners, where
// rebuilding every signature each round costs O(E) per round for as many rounds as the longest
// chain of splits (dozens on a DP ring).
#include <cstdint>
#include <vector>

namespace tutti {

/// Flows (each crossing links, with repeats, and owned by a replica or none), links, replicas.
struct EquitableGraph {
  int replicas = 0;
  std::vector<std::uint32_t> f_off{0};  // flow f crosses f_links[f_off[f] .. f_off[f + 1])
  std::vector<std::uint32_t> f_links;   // link indices, < l_colour.size()
  std::vector<std::int32_t> f_owner;    // owner replica, -1: none
  std::vector<std::uint32_t> f_colour;  // initial colour of each flow
  std::vector<char> f_late;             // flows left out of the base partition (see below)
  std::vector<std::uint32_t> l_colour;  // initial colour of each link
};

/// The replica classes of the coarsest equitable partition refining the initial colours (flows by
/// colour, links by colour, replicas all alike): in it, flows of a class have owners of one class
/// (or none) and cross the same number of links of each link class, links of a class are crossed
/// the same number of times by flows of each flow class, replicas of a class own the same number
/// of flows of each flow class. `base`: of the graph without the late flows; `full` (when not
/// null): with them, refined on from the base partition (the same partition: the full graph's
/// coarsest equitable partition restricted to the other elements is equitable for the base graph,
/// so it refines the base's coarsest one). Each is a class id per replica, numbered in order of
/// first occurrence. Flows of one initial colour must be all late or none. Deterministic.
void equitable_replica_classes(const EquitableGraph& g, std::vector<std::uint32_t>& base,
                               std::vector<std::uint32_t>* full);

}  // namespace tutti
