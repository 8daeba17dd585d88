// Cost: capex amortised over a stated life, opex, owned vs rented (docs/facility.md "Cost").
#include <cmath>
#include <limits>

#include "tutti/core/units.hpp"
#include "tutti/sim/facility.hpp"

namespace tutti {

CostResult compute_cost(const FacilityInputs& in, const FacilityOptions& o, const PowerResult& p,
                        double run_wall_s, double run_energy_facility_J) {
  CostResult c;
  c.servers_usd = in.node_price_usd > 0 ? in.nodes * in.node_price_usd
                                        : in.gpus * in.gpu_price_usd;
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
  c.opex_usd_per_year = c.electricity_usd_per_year + c.maintenance_usd_per_year;

  const double fixed_per_year = c.amortized_usd_per_year + c.maintenance_usd_per_year;
  const double gpu_hours_per_year = in.gpus * kYear / kHour;
  // Electricity per GPU-hour of work at the training draw (through PUE).
  const double elec_per_gpu_hour = p.facility_W / in.gpus * kHour * in.electricity_usd_per_J;
  c.usd_per_gpu_hour = fixed_per_year / (gpu_hours_per_year * o.utilization) + elec_per_gpu_hour;

  c.energy_cost_per_run_usd = run_energy_facility_J * in.electricity_usd_per_J;
  c.cost_per_run_usd = fixed_per_year / kYear * run_wall_s + c.energy_cost_per_run_usd;
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
