#pragma once
// The sifts of a 4-ary min-heap kept in a random-access container, for the engines' queues (the
// native engine's events, FlowNetwork's flow completions): a node's four children are adjacent
// (one cache line for 16-byte entries) and a sift has half the levels of a binary heap. Entries
// compare with operator<; `place(i, e)` stores e at index i (an indexed heap also records where
// e now is). O(log4 n) per sift.
#include <algorithm>
#include <cstddef>

namespace tutti::quad_heap {

/// Moves the entry at `i` up to where its parent is not larger.
template <class V, class Place>
void sift_up(V& v, std::size_t i, Place place) {
  const auto e = v[i];
  while (i > 0) {
    const std::size_t p = (i - 1) / 4;
    if (!(e < v[p])) break;
    place(i, v[p]);
    i = p;
  }
  place(i, e);
}

/// Moves the entry at `i` down to where no child is smaller.
template <class V, class Place>
void sift_down(V& v, std::size_t i, Place place) {
  const auto e = v[i];
  const std::size_t n = v.size();
  while (true) {
    const std::size_t c0 = 4 * i + 1;
    if (c0 >= n) break;
    std::size_t m = c0;
    const std::size_t ce = std::min(c0 + 4, n);
    for (std::size_t c = c0 + 1; c < ce; ++c)
      if (v[c] < v[m]) m = c;
    if (!(v[m] < e)) break;
    place(i, v[m]);
    i = m;
  }
  place(i, e);
}

}  // namespace tutti::quad_heap
