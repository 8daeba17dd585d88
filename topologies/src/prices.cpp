// The user's prices: strict parser (every id checked against the catalog) and origins.
#include "tutti/topologies/prices.hpp"

#include <nlohmann/json.hpp>

#include "tutti/core/error.hpp"
#include "tutti/topologies/catalog.hpp"

namespace tutti {

PriceOrigin combine(PriceOrigin a, PriceOrigin b) {
  auto rank = [](PriceOrigin o) {
    switch (o) {
      case PriceOrigin::Catalog:
        return 0;
      case PriceOrigin::User:
        return 1;
      case PriceOrigin::Estimate:
        return 2;
      case PriceOrigin::None:
        return 3;
    }
    return 3;
  };
  return rank(a) >= rank(b) ? a : b;
}

PriceOrigin catalog_origin(double price_usd, bool estimate) {
  if (price_usd <= 0) return PriceOrigin::None;
  return estimate ? PriceOrigin::Estimate : PriceOrigin::Catalog;
}

bool Prices::empty() const {
  return gpus.empty() && nodes_usd.empty() && switches_usd.empty() && nics_usd.empty() &&
         optics_usd.empty() && storage_usd.empty() && !electricity_usd_per_J &&
         !buildout_usd_per_W && !rack_usd_per_s;
}

namespace {

// {"<catalog id>": "$price", ...}; `known` throws InputError listing the ids when one is unknown.
template <class Lookup>
std::map<std::string, double> id_prices(Obj o, Lookup known) {
  std::map<std::string, double> out;
  for (const std::string& id : o.keys()) {
    Value v = o.req(id);
    try {
      known(id);
    } catch (const InputError& e) {
      throw InputError(v.file(), v.path(), "\"" + id + "\"",
                       e.expected().empty() ? e.what() : e.expected());
    }
    out[id] = v.quantity(Dim::Money, 0.0, 1e12);
  }
  o.done();
  return out;
}

}  // namespace

Prices parse_prices(Obj o) {
  Prices p;
  p.file = o.file();
  const Catalog& cat = Catalog::builtin();
  p.source = o.string_or("source", "");
  o.allow("$schema");
  o.allow("notes");
  if (auto g = o.opt("gpus")) {
    Obj gs = g->obj();
    for (const std::string& id : gs.keys()) {
      Value v = gs.req(id);
      try {
        cat.gpu(id);
      } catch (const InputError& e) {
        throw InputError(v.file(), v.path(), "\"" + id + "\"",
                         e.expected().empty() ? e.what() : e.expected());
      }
      Obj q = v.obj();
      GpuQuote quote;
      if (auto x = q.opt("price")) quote.price_usd = x->quantity(Dim::Money, 0.0, 1e9);
      if (auto x = q.opt("cloud"))
        quote.cloud_usd_per_s = x->quantity(Dim::MoneyRate, 0.0, 1e3 / 3600.0);
      q.done();
      if (!quote.price_usd && !quote.cloud_usd_per_s)
        v.fail("an object with \"price\" and/or \"cloud\"");
      p.gpus[id] = quote;
    }
    gs.done();
  }
  if (auto x = o.opt("nodes"))
    p.nodes_usd = id_prices(x->obj(), [&](const std::string& id) { cat.node(id); });
  if (auto x = o.opt("switches"))
    p.switches_usd = id_prices(x->obj(), [&](const std::string& id) { cat.switch_(id); });
  if (auto x = o.opt("nics"))
    p.nics_usd = id_prices(x->obj(), [&](const std::string& id) { cat.nic(id); });
  if (auto x = o.opt("optics"))
    p.optics_usd = id_prices(x->obj(), [&](const std::string& id) { cat.optic(id); });
  if (auto x = o.opt("storage"))
    p.storage_usd = id_prices(x->obj(), [&](const std::string& id) { cat.storage(id); });
  if (auto x = o.opt("electricity"))
    p.electricity_usd_per_J = x->quantity(Dim::EnergyPrice, 0.0, 10.0 / 3.6e6);
  if (auto x = o.opt("buildout")) p.buildout_usd_per_W = buildout_usd_per_W(*x);
  if (auto x = o.opt("rack_space_per_month"))
    p.rack_usd_per_s = x->quantity(Dim::Money, 0.0, 1e7) / (365.0 * 86400.0 / 12.0);
  o.done();
  if (p.empty())
    o.value().fail(
        "at least one price (gpus, nodes, switches, nics, optics, storage, electricity, "
        "buildout, rack_space_per_month)");
  return p;
}

Prices load_prices(const std::string& path) {
  Doc d = Doc::load(path);
  return parse_prices(d.root());
}

nlohmann::json to_json(const Prices& p) {
  nlohmann::json j{{"file", p.file}, {"source", p.source.empty() ? "not stated" : p.source}};
  if (!p.gpus.empty()) {
    nlohmann::json g = nlohmann::json::object();
    for (const auto& [id, q] : p.gpus) {
      nlohmann::json e = nlohmann::json::object();
      if (q.price_usd) e["price_usd"] = *q.price_usd;
      if (q.cloud_usd_per_s) e["cloud_usd_per_gpu_hour"] = *q.cloud_usd_per_s * 3600.0;
      g[id] = e;
    }
    j["gpus"] = g;
  }
  auto put = [&](const char* key, const std::map<std::string, double>& m) {
    if (!m.empty()) j[key] = m;
  };
  put("nodes_usd", p.nodes_usd);
  put("switches_usd", p.switches_usd);
  put("nics_usd", p.nics_usd);
  put("optics_usd", p.optics_usd);
  put("storage_usd", p.storage_usd);
  if (p.electricity_usd_per_J) j["electricity_usd_per_kWh"] = *p.electricity_usd_per_J * 3.6e6;
  if (p.buildout_usd_per_W) j["buildout_usd_per_W"] = *p.buildout_usd_per_W;
  if (p.rack_usd_per_s)
    j["rack_space_usd_per_month"] = *p.rack_usd_per_s * (365.0 * 86400.0 / 12.0);
  return j;
}

}  // namespace tutti
