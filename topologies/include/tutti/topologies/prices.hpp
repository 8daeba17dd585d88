#pragma once
// The user's own prices (quotes) on top of the catalog's: `--prices FILE` on simulate, plan and
// report, and the `prices` section of a plan request. Format: schemas/prices.schema.json.
//
//   {"source": "Vendor quote Q-1, 2026-11",
//    "gpus": {"h100-sxm": {"price": "$22000", "cloud": "$2.10/h"}},
//    "nodes": {"dgx-h100": "$260000"}, "switches": {"qm9700": "$24000"},
//    "nics": {"cx7": "$1800"}, "optics": {"osfp-400g-sr4": "$700"}, "storage": {"ddn-ai400x2":
//    "$300k"}, "electricity": "$0.06/kWh", "buildout": "$9/W", "rack_space_per_month": "$1500"}
//
// Every price a run uses then carries its origin (PriceOrigin): the catalog's cited value, a
// catalog value marked as an estimate, the user's quote, or none (no price anywhere: reported as
// "no price", never as $0).
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "tutti/core/config.hpp"
#include "tutti/core/enum.hpp"

namespace tutti {

// clang-format off
#define TUTTI_PRICE_ORIGIN_VALUES(X) \
  X(Catalog, "catalog") X(Estimate, "estimate") X(User, "user") X(None, "no price")
// clang-format on
/// Where a money figure came from. For a sum of several prices: the weakest part's origin
/// (None over Estimate over User over Catalog), see combine().
TUTTI_ENUM(PriceOrigin, std::uint8_t, TUTTI_PRICE_ORIGIN_VALUES);

/// The origin of a sum of two priced parts: "no price" if either has none, else "estimate" if
/// either is one, else "user" if either is a quote, else "catalog".
PriceOrigin combine(PriceOrigin a, PriceOrigin b);
/// Origin of a catalog price: Estimate when the entry lists "price" among its estimates, None
/// when the price is 0.
PriceOrigin catalog_origin(double price_usd, bool estimate);

/// A GPU's quotes: purchase price of the GPU alone and its rental price per GPU-hour.
struct GpuQuote {
  std::optional<double> price_usd;
  std::optional<double> cloud_usd_per_s;  ///< USD per GPU-second.
};

/// User prices by catalog id. Absent = the catalog's price applies.
struct Prices {
  std::string file;    ///< Where they came from ("prices.json", "plan.json: prices").
  std::string source;  ///< The user's citation for the quotes ("" = not given).
  std::map<std::string, GpuQuote> gpus;
  std::map<std::string, double> nodes_usd, switches_usd, nics_usd, optics_usd, storage_usd;
  std::optional<double> electricity_usd_per_J;
  std::optional<double> buildout_usd_per_W;  ///< Facility build-out per W of IT capacity.
  std::optional<double> rack_usd_per_s;      ///< Rack space / colocation, per rack.
  bool empty() const;
};

/// Parses a prices object (the whole file, or a plan request's `prices` section). Every id is
/// checked against the built-in catalog; every price is a unit string ("$22000", "$2.1/h",
/// "$0.06/kWh"). Throws InputError naming the file, the key path, what was found and expected.
Prices parse_prices(Obj o);
/// Reads a prices file (strict; see parse_prices).
Prices load_prices(const std::string& path);
/// {"file", "source", keys given, with prices in USD} for the JSON output.
nlohmann::json to_json(const Prices& p);

}  // namespace tutti
