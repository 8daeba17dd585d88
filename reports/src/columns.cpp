#include "tutti/reports/columns.hpp"

#include "tutti/core/error.hpp"

namespace tutti::reports {

namespace {
// clang-format off
constexpr ColumnDef kColumns[] = {
    // configurations and architectures
    {"architecture",              "Architecture",       Unit::Text},
    {"cluster_file",              "Cluster file",       Unit::Text},
    {"configuration",             "Configuration",      Unit::Text},
    {"name",                      "Configuration",      Unit::Text},
    {"point",                     "#",                  Unit::Text},
    {"status",                    "Status",             Unit::Text},
    {"gpus",                      "GPUs",               Unit::Count},
    {"layout",                    "Layout",             Unit::Text},
    {"engine",                    "Timed by",           Unit::Text},
    {"bottleneck",                "Bottleneck",         Unit::Text},
    {"oversubscription",          "Oversubscription",   Unit::Text},
    {"ratio",                     "Ratio",              Unit::Number},
    // time
    {"iteration_time_s",          "Iteration",          Unit::Seconds},
    {"time_to_train_s",           "Time to train",      Unit::Seconds},
    {"effective_time_to_train_s", "With failures",      Unit::Seconds},
    {"compute_s",                 "Compute",            Unit::Seconds},
    {"exposed_comm_s",            "Exposed comm",       Unit::Seconds},
    {"bubble_s",                  "Bubble",             Unit::Seconds},
    {"other_s",                   "Other",              Unit::Seconds},
    {"total_s",                   "Total",              Unit::Seconds},
    {"time_s",                    "Time per iteration", Unit::Seconds},
    {"share",                     "Share",              Unit::Fraction},
    {"share_of_iteration",        "Share of iteration", Unit::Fraction},
    {"slowdown_pct",              "vs as built",        Unit::Percent},
    {"time_vs_recommended_pct",   "Time vs rec.",       Unit::Percent},
    {"cost_vs_recommended_pct",   "Cost vs rec.",       Unit::Percent},
    // throughput and memory
    {"tokens_per_s_per_gpu",      "Tokens/s/GPU",       Unit::Number},
    {"tflops_per_gpu",            "TFLOP/s per GPU",    Unit::Number},
    {"mfu",                       "MFU",                Unit::Fraction},
    {"goodput",                   "Goodput",            Unit::Fraction},
    {"memory_per_gpu_bytes",      "Memory per GPU",     Unit::Bytes},
    // links
    {"tier",                      "Tier",               Unit::Text},
    {"busiest_link",              "Busiest link",       Unit::Text},
    {"utilization",               "Utilisation",        Unit::Fraction},
    {"bytes_per_iteration_B",     "Bytes per iteration", Unit::Bytes},
    {"links_listed",              "Links listed",       Unit::Count},
    // money, power, energy
    {"capex_usd",                 "Capex",              Unit::Usd},
    {"total_cost_usd",            "Total cost",         Unit::Usd},
    {"network_capex_usd",         "Network capex",      Unit::Usd},
    {"cost_per_run_usd",          "Cost per run",       Unit::Usd},
    {"cloud_cost_per_run_usd",    "Cloud cost per run", Unit::Usd},
    {"usd_per_million_tokens",    "$/M tokens",         Unit::Usd},
    {"network_power_W",           "Network power",      Unit::Watts},
    {"peak_facility_power_W",     "Peak facility power", Unit::Watts},
    {"avg_it_W",                  "Average IT power",   Unit::Watts},
    {"energy_J",                  "Energy",             Unit::Joules},
    {"energy_per_run_J",          "Energy per run",     Unit::Joules},
    {"energy_J_per_token",        "Energy per token",   Unit::Joules},
    // bills of materials
    {"item",                      "Item",               Unit::Text},
    {"kind",                      "Kind",               Unit::Text},
    {"count",                     "Count",              Unit::Count},
    {"unit_price_usd",            "Unit price",         Unit::Usd},
    {"cost_usd",                  "Cost",               Unit::Usd},
    {"power_W",                   "Power",              Unit::Watts},
    // key-value tables
    {"part",                      "Part",               Unit::Text},
    {"field",                     "Field",              Unit::Text},
    {"value",                     "Value",              Unit::Text},
    {"constraint",                "Constraint",         Unit::Text},
    {"what",                      "What",               Unit::Text},
};
// clang-format on

const ColumnDef& find(std::string_view key) {
  for (const ColumnDef& c : kColumns)
    if (c.key == key) return c;
  throw InternalError("report column \"" + std::string(key) + "\" is not in the registry " +
                      "(reports/src/columns.cpp)");
}
}  // namespace

std::span<const ColumnDef> column_registry() {
  return kColumns;
}

Column column(std::string_view key, std::string help) {
  const ColumnDef& c = find(key);
  return {std::string(c.key), std::string(c.label), c.unit, std::move(help)};
}

Column column_as(std::string_view key, std::string label, std::string help) {
  const ColumnDef& c = find(key);
  return {std::string(c.key), std::move(label), c.unit, std::move(help)};
}

}  // namespace tutti::reports
