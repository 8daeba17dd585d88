#pragma once
// `tutti validate --live` / `--measurements FILE` (cli/validate_live.cpp), hooked into the
// validate subcommand by cli/validate.cpp.
#include "common.hpp"

namespace tutti::cli {

/// Adds --live, --measurements, --calibration, --tolerance and the replay options to `sub`.
bool setup_validate_live(CLI::App* sub, Globals& g);
/// True when the parsed command line asked for --live or --measurements.
bool validate_live_selected();
/// Runs the live or recorded comparison.
int run_validate_live_selected(const Globals& g);

}  // namespace tutti::cli
