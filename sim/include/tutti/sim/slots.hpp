#pragma once
// Slot reuse for the engines' pools (flows, sets, comm instances, joins, tags): a freed index is
// handed out again before the pool grows, so steady-state runs allocate nothing. O(1).
#include <vector>

namespace tutti {

/// An index into `pool` (a vector or deque) to (re)initialise: the last freed one, else a new
/// default element.
template <class Pool, class Id>
Id take_slot(Pool& pool, std::vector<Id>& free) {
  if (!free.empty()) {
    Id id = free.back();
    free.pop_back();
    return id;
  }
  pool.emplace_back();
  return static_cast<Id>(pool.size() - 1);
}

}  // namespace tutti
