// Energy both ways (physical timeline vs the model-card convention) and CO2 from a grid carbon
// intensity (topologies/catalog/grid_carbon.json).
// See docs/facility.md "Energy both ways, per token, CO2".
#include <cmath>

#include "tutti/core/config.hpp"
#include "tutti/core/error.hpp"
#include "tutti/core/units.hpp"
#include "tutti/facility/facility.hpp"
#include "tutti/topologies/catalog.hpp"

namespace tutti {

std::vector<GridRegion> parse_grid_carbon(const Doc& doc, std::string* default_id) {
  Obj root = doc.root();
  root.req("kind").choice({"grid_carbon"});
  root.allow("notes");
  std::string dflt = root.req("default").string();
  std::vector<GridRegion> out;
  Arr regions = root.req("regions").arr();
  for (std::size_t i = 0; i < regions.size(); ++i) {
    Obj e = regions.at(i).obj();
    GridRegion g;
    g.id = e.req("id").string();
    g.name = e.req("name").string();
    g.kg_per_J = e.req("intensity_kg_per_kWh").number(0.0, 2.0) / kJoulePerKWh;
    g.source = e.req("source").string();
    if (g.source.size() < 8) e.req("source").fail("a citation (publisher, title, year, figure)");
    e.done();
    out.push_back(g);
  }
  root.done();
  bool found = false;
  for (const auto& g : out) found = found || g.id == dflt;
  if (!found) root.req("default").fail("the id of one of the regions");
  if (default_id) *default_id = dflt;
  return out;
}

const std::vector<GridRegion>& builtin_grid_regions() {
  static const std::vector<GridRegion> regions =
      parse_grid_carbon(Catalog::builtin().file("grid_carbon"));
  return regions;
}

const GridRegion& grid_region(const std::string& id) {
  std::string known;
  for (const auto& g : builtin_grid_regions()) {
    if (g.id == id) return g;
    known += (known.empty() ? "" : ", ") + g.id;
  }
  throw InputError("--facility", "grid", "\"" + id + "\"",
                   "a region of topologies/catalog/grid_carbon.json: " + known);
}

EnergyAccounting account_energy(const FacilityInputs& in, const FacilityOptions& o,
                                double run_wall_s, double energy_it_J) {
  EnergyAccounting a;
  const int job = in.job_gpus > 0 ? in.job_gpus : in.gpus;
  a.physical_it_J = energy_it_J;
  a.physical_facility_J = energy_it_J * in.pue;
  a.gpu_hours = job * run_wall_s / kHour;
  // The model-card convention (e.g. Meta's Llama model cards, Strubell et al. 2019): GPU-hours
  // x the GPU's power limit x PUE. Counts only the job's GPUs, at TDP, nothing else in the room.
  a.model_card_J = job * run_wall_s * in.gpu.cap_W() * in.pue;
  const double tokens = in.iterations * in.tokens_per_iteration;
  a.tokens = tokens;
  if (tokens > 0 && std::isfinite(a.physical_facility_J)) {
    a.physical_J_per_token = a.physical_facility_J / tokens;
    a.model_card_J_per_token = a.model_card_J / tokens;
  }
  if (o.carbon_kg_per_kWh >= 0) {
    a.grid = "user";
    a.grid_name = "given with --facility carbon=";
    a.grid_source = "user";
    a.kg_co2_per_J = o.carbon_kg_per_kWh / kJoulePerKWh;
  } else {
    const GridRegion& g = grid_region(o.grid_region);
    a.grid = g.id;
    a.grid_name = g.name;
    a.grid_source = g.source;
    a.kg_co2_per_J = g.kg_per_J;
  }
  a.physical_co2_kg = a.physical_facility_J * a.kg_co2_per_J;
  a.model_card_co2_kg = a.model_card_J * a.kg_co2_per_J;
  return a;
}

}  // namespace tutti
