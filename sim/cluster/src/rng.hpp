#pragma once
// Seeded draws for the cluster simulator, identical on every platform: std::mt19937_64 is fully
// specified by the standard, the distributions below are ours (std:: ones are not portable).
#include <cmath>
#include <cstdint>
#include <random>

namespace tutti::cluster_detail {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : g_(seed) {}
  /// Uniform in (0, 1).
  double uniform() { return (static_cast<double>(g_() >> 11) + 0.5) * 0x1.0p-53; }
  /// Exponential with the given mean.
  double exponential(double mean) { return -mean * std::log(uniform()); }
  /// Standard normal (Box-Muller, one of the pair).
  double normal() {
    const double u = uniform(), v = uniform();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
  }
  /// Integer in [0, n).
  std::uint64_t below(std::uint64_t n) {
    return static_cast<std::uint64_t>(uniform() * static_cast<double>(n)) % n;
  }

 private:
  std::mt19937_64 g_;
};

}  // namespace tutti::cluster_detail
