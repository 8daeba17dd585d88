// Cost: capex amortised over a stated life, opex, owned vs rented (docs/facility.md "Cost").
#include <cmath>
#include <limits>

#include "tutti/core/units.hpp"
#include "tutti/facility/facility.hpp"

namespace tutti {

CostResult compute_cost(const FacilityInputs& in, const FacilityOptions& o, const PowerResult& p,
                        double run_wall_s, double run_energy_facility_J) {
  CostResult c;
  c.servers_usd = in.node_price_usd > 0 ? in.nodes * in.node_price_usd : in.gpus * in.gpu_price_usd;
  c.network_usd = in.network_capex_usd;
  c.storage_usd = in.storage_capex_usd;
  // The build-out is sized for the provisioned (nameplate) IT load, not the average draw.
  c.facility_usd = in.buildout_usd_per_W * p.nameplate_it_W;
  const double hardware = c.servers_usd + c.network_usd + c.storage_usd;
  c.capex_usd = hardware + c.facility_usd;
  c.amortized_usd_per_year =
      hardware / o.hardware_life_years + c.facility_usd / o.facility_life_years;
  c.maintenance_usd_per_year = o.maintenance_frac_per_year * hardware;
  c.electricity_usd_per_year = p.facility_W * in.electricity_usd_per_J * kYear * o.utilization;
  const int per_rack = nodes_per_rack(in);
  const int racks = in.racks > 0 ? in.racks : (in.nodes + per_rack - 1) / per_rack;
  c.rack_space_usd_per_year = in.rack_usd_per_s * kYear * racks;
  c.opex_usd_per_year =
      c.electricity_usd_per_year + c.maintenance_usd_per_year + c.rack_space_usd_per_year;

  // Origins: a sum is as good as its weakest part (a part with no price makes the sum unknown).
  c.servers_origin = in.servers_origin;
  c.network_origin = in.network_origin;
  c.storage_origin = in.storage_origin;
  c.facility_origin = in.buildout_origin;
  c.capex_origin = combine(combine(c.servers_origin, c.network_origin),
                           combine(c.storage_origin, c.facility_origin));
  c.electricity_origin = in.electricity_origin;
  c.rack_origin = in.rack_origin;
  c.owned_origin = combine(c.capex_origin, c.electricity_origin);
  if (c.rack_origin != PriceOrigin::None) c.owned_origin = combine(c.owned_origin, c.rack_origin);
  c.cloud_origin = in.cloud_usd_per_gpu_hour > 0 ? in.cloud_origin : PriceOrigin::None;

  // Fixed costs accrue all year; the cluster does paid work `utilization` of it, so each hour of
  // work carries 1 / utilization hours of them (the same basis for $/GPU-h and the run).
  const double fixed_per_year =
      c.amortized_usd_per_year + c.maintenance_usd_per_year + c.rack_space_usd_per_year;
  const double gpu_hours_per_year = in.gpus * kYear / kHour;
  // Electricity per GPU-hour of work at the training draw (through PUE).
  const double elec_per_gpu_hour = p.facility_W / in.gpus * kHour * in.electricity_usd_per_J;
  c.usd_per_gpu_hour = fixed_per_year / (gpu_hours_per_year * o.utilization) + elec_per_gpu_hour;

  c.energy_cost_per_run_usd = run_energy_facility_J * in.electricity_usd_per_J;
  c.cost_per_run_usd =
      fixed_per_year / (kYear * o.utilization) * run_wall_s + c.energy_cost_per_run_usd;
  const double tokens = in.iterations * in.tokens_per_iteration;
  c.usd_per_million_tokens = tokens > 0 ? c.cost_per_run_usd / (tokens / 1e6) : 0.0;

  c.cloud_usd_per_gpu_hour = in.cloud_usd_per_gpu_hour;
  if (in.cloud_usd_per_gpu_hour > 0) {
    c.cloud_cost_per_run_usd = in.gpus * run_wall_s / kHour * in.cloud_usd_per_gpu_hour;
    // Owned per used GPU-hour F / (G H u) + e equals the rental price c at
    // u = F / (G H (c - e)); above 1 buying never pays off.
    double margin = in.cloud_usd_per_gpu_hour - elec_per_gpu_hour;
    c.breakeven_utilization = margin > 0 ? fixed_per_year / (gpu_hours_per_year * margin)
                                         : std::numeric_limits<double>::infinity();
  }
  return c;
}

}  // namespace tutti
