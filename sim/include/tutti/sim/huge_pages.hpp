#pragma once
// An allocator for the engines' large pools (per-op records, flows, per-link lists): blocks of
// 2 MiB or more are 2 MiB-aligned and, on Linux, marked MADV_HUGEPAGE, so that transparent huge
// pages back them where the system enables them on request (`madvise` mode, Debian's default).
// The native engine walks these pools in an order set by events, not by addresses: with 4 KiB
// pages many of its accesses at 16,384 GPUs also miss the TLB (405B vp=4 16k ECMP: 7-9% less
// user + sys time with huge pages in two concurrent pairs of runs, bench/engine.md). Smaller blocks
// come from operator new. Contents and results do not depend on it; memory grows by at most 2 MiB
// per large block.
#include <cstddef>
#include <cstdlib>
#include <new>
#include <vector>
#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace tutti {

template <class T>
struct HugePageAllocator {
  using value_type = T;
  static constexpr std::size_t kHuge = std::size_t{2} << 20;

  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kHuge) {
      if constexpr (alignof(T) > __STDCPP_DEFAULT_NEW_ALIGNMENT__)
        return static_cast<T*>(::operator new (bytes, std::align_val_t{alignof(T)}));
      else
        return static_cast<T*>(::operator new(bytes));
    }
    const std::size_t size = (bytes + kHuge - 1) / kHuge * kHuge;
    void* p = std::aligned_alloc(kHuge, size);
    if (p == nullptr) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    madvise(p, size, MADV_HUGEPAGE);  // advice only: a refusal leaves 4 KiB pages
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n * sizeof(T) >= kHuge) {
      std::free(p);
    } else {
      if constexpr (alignof(T) > __STDCPP_DEFAULT_NEW_ALIGNMENT__)
        ::operator delete (p, std::align_val_t{alignof(T)});
      else
        ::operator delete(p);
    }
  }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const noexcept {
    return true;
  }
};

/// A vector whose large buffers may be backed by huge pages (HugePageAllocator).
template <class T>
using HugeVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace tutti
