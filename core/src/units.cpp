#include "tutti/core/units.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "tutti/core/format.hpp"
#include "tutti/core/limits.hpp"

namespace tutti {

namespace {

struct Unit {
  std::string_view suffix;
  double factor;
};

// Longest suffixes first inside each table so that "GiB" wins over "B".
constexpr std::array kBytes{Unit{"KiB", 1024.0},
                            Unit{"MiB", 1048576.0},
                            Unit{"GiB", kGiB},
                            Unit{"TiB", kGiB * 1024},
                            Unit{"PiB", kGiB * 1048576},
                            Unit{"KB", 1e3},
                            Unit{"kB", 1e3},
                            Unit{"MB", 1e6},
                            Unit{"GB", 1e9},
                            Unit{"TB", 1e12},
                            Unit{"PB", 1e15},
                            Unit{"B", 1.0}};
constexpr std::array kBandwidth{
    Unit{"Tbps", 1e12 / 8}, Unit{"Gbps", 1e9 / 8},    Unit{"Mbps", 1e6 / 8}, Unit{"Kbps", 1e3 / 8},
    Unit{"bps", 1.0 / 8},   Unit{"Tb/s", 1e12 / 8},   Unit{"Gb/s", 1e9 / 8}, Unit{"Mb/s", 1e6 / 8},
    Unit{"TB/s", 1e12},     Unit{"GB/s", 1e9},        Unit{"MB/s", 1e6},     Unit{"KB/s", 1e3},
    Unit{"GiB/s", kGiB},    Unit{"MiB/s", 1048576.0}, Unit{"B/s", 1.0},      Unit{"TBps", 1e12},
    Unit{"GBps", 1e9},      Unit{"MBps", 1e6},        Unit{"Bps", 1.0}};
constexpr std::array kTime{Unit{"ns", 1e-9},  Unit{"us", 1e-6},    Unit{"ms", 1e-3},
                           Unit{"min", 60.0}, Unit{"s", 1.0},      Unit{"h", kHour},
                           Unit{"d", kDay},   Unit{"w", 7 * kDay}, Unit{"y", kYear}};
constexpr std::array kPower{Unit{"kW", 1e3}, Unit{"MW", 1e6}, Unit{"GW", 1e9}, Unit{"W", 1.0}};
constexpr std::array kEnergy{Unit{"kWh", kJoulePerKWh},
                             Unit{"MWh", kJoulePerKWh * 1e3},
                             Unit{"GWh", kJoulePerKWh * 1e6},
                             Unit{"Wh", 3600.0},
                             Unit{"kJ", 1e3},
                             Unit{"MJ", 1e6},
                             Unit{"GJ", 1e9},
                             Unit{"J", 1.0}};
constexpr std::array kFlops{Unit{"PFLOPS", 1e15}, Unit{"TFLOPS", 1e12}, Unit{"GFLOPS", 1e9},
                            Unit{"EFLOPS", 1e18}, Unit{"FLOPS", 1.0}};
constexpr std::array kCount{Unit{"k", 1e3}, Unit{"K", 1e3},  Unit{"M", 1e6}, Unit{"B", 1e9},
                            Unit{"G", 1e9}, Unit{"T", 1e12}, Unit{"", 1.0}};
constexpr std::array kMoney{Unit{"k", 1e3}, Unit{"K", 1e3}, Unit{"M", 1e6}, Unit{"B", 1e9},
                            Unit{"", 1.0}};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Splits "3.35TB/s" into 3.35 and "TB/s"; nullopt if no leading number.
std::optional<std::pair<double, std::string_view>> split_number(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || !std::isfinite(v)) return std::nullopt;
  std::string_view rest(ptr, static_cast<std::size_t>(s.data() + s.size() - ptr));
  return std::make_pair(v, trim(rest));
}

template <std::size_t N>
std::optional<double> with_table(std::string_view text, const std::array<Unit, N>& table) {
  auto nv = split_number(text);
  if (!nv) return std::nullopt;
  for (const auto& u : table)
    if (nv->second == u.suffix) return nv->first * u.factor;
  return std::nullopt;
}

}  // namespace

static std::optional<double> parse_quantity_unchecked(std::string_view text, Dim d);

std::string dim_expectation(Dim d) {
  switch (d) {
    case Dim::Bytes:
      return "a size such as \"80GiB\" or \"512MB\"";
    case Dim::Bandwidth:
      return "a bandwidth such as \"400Gbps\" or \"900GB/s\"";
    case Dim::Time:
      return "a duration such as \"1.2us\", \"5ms\" or \"30d\"";
    case Dim::Power:
      return "a power such as \"700W\" or \"1.2kW\"";
    case Dim::Energy:
      return "an energy such as \"1kWh\" or \"3.6MJ\"";
    case Dim::FlopRate:
      return "a FLOP rate such as \"989.4TFLOPS\"";
    case Dim::Count:
      return "a count such as 2048, \"2T\" or \"1.5B\"";
    case Dim::EnergyPrice:
      return "an electricity price such as \"$0.08/kWh\"";
    case Dim::Money:
      return "an amount such as \"$25000\" or \"$1.2M\"";
    case Dim::MoneyRate:
      return "a rental price such as \"$2.5/h\"";
    case Dim::Ratio:
      return "a ratio such as 0.9 or \"90%\"";
  }
  return "a quantity";
}

double dim_max(Dim d) {
  switch (d) {
    case Dim::Bytes:
      return 1e21;
    case Dim::Bandwidth:
      return 1e16;
    case Dim::Time:
      return 1000.0 * kYear;
    case Dim::Power:
      return 1e11;
    case Dim::Energy:
      return 1e22;
    case Dim::FlopRate:
      return 1e21;
    case Dim::Count:
      return 1e18;
    case Dim::EnergyPrice:
      return 1000.0 / kJoulePerKWh;
    case Dim::Money:
      return 1e15;
    case Dim::MoneyRate:
      return 1e6 / kHour;
    case Dim::Ratio:
      return 1e9;
  }
  return 0.0;
}

std::optional<double> parse_quantity(std::string_view text, Dim d) {
  auto v = parse_quantity_unchecked(text, d);
  if (v && !std::isfinite(*v))
    return std::nullopt;  // "1e308B": the number times its unit overflowed
  return v;
}

std::optional<double> parse_quantity_unchecked(std::string_view text, Dim d) {
  text = trim(text);
  switch (d) {
    case Dim::Bytes:
      return with_table(text, kBytes);
    case Dim::Bandwidth:
      return with_table(text, kBandwidth);
    case Dim::Time:
      return with_table(text, kTime);
    case Dim::Power:
      return with_table(text, kPower);
    case Dim::Energy:
      return with_table(text, kEnergy);
    case Dim::FlopRate:
      return with_table(text, kFlops);
    case Dim::Count:
      return with_table(text, kCount);
    case Dim::Money:
      if (text.empty() || text.front() != '$') return std::nullopt;
      return with_table(text.substr(1), kMoney);
    case Dim::EnergyPrice: {
      if (text.empty() || text.front() != '$') return std::nullopt;
      auto slash = text.find('/');
      if (slash == std::string_view::npos) return std::nullopt;
      auto amount = split_number(text.substr(1, slash - 1));
      if (!amount || !amount->second.empty()) return std::nullopt;
      auto per = with_table(std::string("1") + std::string(text.substr(slash + 1)), kEnergy);
      if (!per) return std::nullopt;
      return amount->first / *per;
    }
    case Dim::MoneyRate: {
      if (text.empty() || text.front() != '$') return std::nullopt;
      auto slash = text.find('/');
      if (slash == std::string_view::npos) return std::nullopt;
      auto amount = split_number(text.substr(1, slash - 1));
      if (!amount || !amount->second.empty()) return std::nullopt;
      auto per = with_table(std::string("1") + std::string(text.substr(slash + 1)), kTime);
      if (!per) return std::nullopt;
      return amount->first / *per;
    }
    case Dim::Ratio: {
      auto nv = split_number(text);
      if (!nv) return std::nullopt;
      if (nv->second == "%") return nv->first / 100.0;
      if (nv->second.empty()) return nv->first;
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::string format_quantity(double v, Dim d) {
  // Four significant digits ("%.4g"), a space, then the largest unit the value reaches; the
  // ladders are format.hpp's (one formatter for every human-facing value).
  auto scaled = [&](std::initializer_list<std::pair<double, std::string_view>> steps) {
    std::vector<Rung> rungs;
    for (auto [f, name] : steps) rungs.push_back({f, 1, f, general(4), name});
    return format_si(v, {rungs});
  };
  switch (d) {
    case Dim::Bytes:
      return scaled({{1e15, "PB"}, {1e12, "TB"}, {1e9, "GB"}, {1e6, "MB"}, {1e3, "KB"}, {1, "B"}});
    case Dim::Bandwidth:
      return scaled({{1e12, "TB/s"}, {1e9, "GB/s"}, {1e6, "MB/s"}, {1, "B/s"}});
    case Dim::Time:
      return scaled({{kDay, "d"},
                     {kHour, "h"},
                     {60, "min"},
                     {1, "s"},
                     {1e-3, "ms"},
                     {1e-6, "us"},
                     {1e-9, "ns"}});
    case Dim::Power:
      return scaled({{1e6, "MW"}, {1e3, "kW"}, {1, "W"}});
    case Dim::Energy:
      return scaled({{kJoulePerKWh * 1e3, "MWh"}, {kJoulePerKWh, "kWh"}, {1, "J"}});
    case Dim::FlopRate:
      return scaled({{1e15, "PFLOP/s"}, {1e12, "TFLOP/s"}, {1e9, "GFLOP/s"}, {1, "FLOP/s"}});
    case Dim::Count:
      return scaled({{1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "k"}, {1, ""}});
    case Dim::Money:
      return scaled({{1e9, "B$"}, {1e6, "M$"}, {1e3, "k$"}, {1, "$"}});
    case Dim::EnergyPrice:
      return "$" + format_number(v * kJoulePerKWh, general(4)) + "/kWh";
    case Dim::MoneyRate:
      return "$" + format_number(v * kHour, general(4)) + "/h";
    case Dim::Ratio:
      return format_number(v * 100, general(4)) + "%";
  }
  return fmt::format("{}", v);
}

}  // namespace tutti
