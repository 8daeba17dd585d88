#include "run.hpp"

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace tutti::testing {

namespace {
std::string read_file(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'')
      q += "'\\''";
    else
      q += c;
  }
  return q + "'";
}
}  // namespace

nlohmann::json RunResult::json() const {
  try {
    return nlohmann::json::parse(out);
  } catch (const std::exception& e) {
    FAIL("stdout is not JSON: " << e.what() << "\nstdout: " << out.substr(0, 400)
                                << "\nstderr: " << err.substr(0, 400));
  }
  return {};
}

std::string src(const std::string& relative) {
  return std::string(TUTTI_SOURCE_DIR) + "/" + relative;
}

namespace {
// Every folder temp_dir() made, removed when the test process exits (each doctest case runs in its
// own process under ctest). TUTTI_KEEP_TEST_TMP=1 keeps them for debugging.
struct TempDirs {
  std::vector<std::string> dirs;
  ~TempDirs() {
    const char* keep = std::getenv("TUTTI_KEEP_TEST_TMP");
    if (keep && *keep && std::string(keep) != "0") return;
    for (const auto& d : dirs) {
      std::error_code ec;
      std::filesystem::remove_all(d, ec);
    }
  }
};
TempDirs& temp_dirs() {
  static TempDirs dirs;
  return dirs;
}
}  // namespace

std::string temp_dir() {
  std::string root = "/tmp";
  if (const char* t = std::getenv("TMPDIR"); t && *t) root = t;
  std::string tmpl = root + "/tutti-test-XXXXXX";
  char* d = mkdtemp(tmpl.data());
  REQUIRE(d != nullptr);
  temp_dirs().dirs.emplace_back(d);
  return d;
}

bool skip_under_sanitizers(const char* what) {
  const char* on = std::getenv("TUTTI_SANITIZER_SUITE");
  if (!on || !*on || std::string(on) == "0") return false;
  std::printf("tutti-skip: %s runs in the Release suite, not under the sanitizers\n", what);
  MESSAGE("tutti-skip: " << what);
  return true;
}

RunResult run_shell(const std::string& command) {
  std::string dir = temp_dir();
  std::string out = dir + "/out", err = dir + "/err";
  std::string full = "cd " + quote(TUTTI_SOURCE_DIR) + " && ( " + command + " ) >" + quote(out) +
                     " 2>" + quote(err);
  int status = std::system(full.c_str());
  RunResult r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_file(out);
  r.err = read_file(err);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return r;
}

RunResult run_tutti(const std::vector<std::string>& args, const std::string& stdin_text) {
  std::string cmd = quote(std::string(TUTTI_BINARY_DIR) + "/tutti");
  for (const auto& a : args) {
    cmd += ' ';
    cmd += quote(a);
  }
  if (!stdin_text.empty()) {
    std::string dir = temp_dir();
    std::string in = dir + "/stdin";
    std::ofstream(in) << stdin_text;
    cmd += " <" + quote(in);
  } else {
    cmd += " </dev/null";
  }
  return run_shell(cmd);
}

std::string json_diff(const nlohmann::json& a, const nlohmann::json& e, double rel_tol,
                      double abs_tol, bool allow_extra) {
  struct Walk {
    double rel, abs;
    bool extra;
    std::string go(const nlohmann::json& a, const nlohmann::json& e, const std::string& path) {
      std::string p = path.empty() ? "(top)" : path;
      if (e.is_number() && a.is_number()) {
        double x = a.get<double>(), y = e.get<double>();
        if (std::fabs(x - y) <= abs + rel * std::fabs(y)) return "";
        std::ostringstream o;
        o << p << ": got " << x << ", expected " << y << " (rel tol " << rel << ")";
        return o.str();
      }
      if (e.type() != a.type()) return p + ": got " + a.dump() + ", expected " + e.dump();
      if (e.is_object()) {
        for (auto it = e.begin(); it != e.end(); ++it) {
          if (!a.contains(it.key())) return p + "." + it.key() + ": missing";
          auto d = go(a[it.key()], it.value(), path.empty() ? it.key() : path + "." + it.key());
          if (!d.empty()) return d;
        }
        if (!extra)
          for (auto it = a.begin(); it != a.end(); ++it)
            if (!e.contains(it.key())) return p + "." + it.key() + ": unexpected key";
        return "";
      }
      if (e.is_array()) {
        if (a.size() != e.size())
          return p + ": got " + std::to_string(a.size()) + " elements, expected " +
                 std::to_string(e.size());
        for (std::size_t i = 0; i < e.size(); ++i) {
          auto d = go(a[i], e[i], path + "." + std::to_string(i));
          if (!d.empty()) return d;
        }
        return "";
      }
      return a == e ? "" : p + ": got " + a.dump() + ", expected " + e.dump();
    }
  } w{rel_tol, abs_tol, allow_extra};
  return w.go(a, e, "");
}

}  // namespace tutti::testing
