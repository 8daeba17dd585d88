#pragma once
// Shared CLI plumbing: global options, the pending run, output helpers.
// Each subcommand lives in its own file with setup_<name>(CLI::App&, Globals&), which adds the
// subcommand and, when it is selected, stores the function to run in Globals::run.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace tutti::cli {

/// Exit codes (docs/style.md habit 4).
enum Exit : int { kOk = 0, kNo = 1, kUsage = 2, kInternal = 70 };

struct Globals {
  bool json = false;       ///< --json: machine output on stdout, diagnostics on stderr.
  std::string output;      ///< -o/--output: write the main output to this file.
  int verbosity = 0;       ///< -q: -1, -v: +1 per flag.
  std::uint64_t seed = 1;  ///< --seed: every random choice derives from it.
  std::vector<std::string>
      sets;                  ///< --set KEY.PATH=VALUE overrides (applied to the primary input).
  std::function<int()> run;  ///< Set by the selected subcommand's callback.
};

/// Writes `text` to -o FILE when given, else stdout. Throws InputError if the file cannot be
/// written.
void emit(const Globals& g, const std::string& text);
/// Pretty JSON (2-space indent, trailing newline) through emit().
void emit_json(const Globals& g, const nlohmann::json& j);
/// Diagnostic on stderr unless -q.
void note(const Globals& g, const std::string& text);

/// The whole of a file, bytes as stored. Throws InputError ("PATH: cannot read file").
std::string read_text(const std::string& path);
/// `s` quoted for a POSIX shell: unchanged when it holds only safe characters, else in '...'.
std::string shell_quote(const std::string& s);

/// The answer of a subcommand whose capability has not landed: says so plainly, exits 2.
int not_landed(const std::string& what, int issue);

// Subcommand registrations (one file each).
void setup_simulate(CLI::App& app, Globals& g);
void setup_plan(CLI::App& app, Globals& g);
void setup_report(CLI::App& app, Globals& g);
void setup_topo(CLI::App& app, Globals& g);
void setup_workload(CLI::App& app, Globals& g);
void setup_exec(CLI::App& app, Globals& g);
void setup_calibrate(CLI::App& app, Globals& g);
void setup_validate(CLI::App& app, Globals& g);
void setup_catalog(CLI::App& app, Globals& g);
void setup_serve(CLI::App& app, Globals& g);
void setup_cluster(CLI::App& app, Globals& g);

}  // namespace tutti::cli
