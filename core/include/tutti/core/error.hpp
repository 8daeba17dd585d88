#pragma once
// Two error families (docs/style.md habit 4). Library code throws; only cli/ maps them to exit
// codes:
//   InputError    -> exit 2 (the user can fix it: bad file, bad key, infeasible request)
//   InternalError -> exit 70 (a bug in tutti)
#include <stdexcept>
#include <string>

namespace tutti {

/// Bad user input. The message reads `FILE: KEY.PATH: got FOUND, expected EXPECTED`.
/// `file` may be empty for command-line input ("--parallel", "--set").
class InputError : public std::runtime_error {
 public:
  InputError(std::string file, std::string key_path, std::string found, std::string expected);
  /// Free-form input error (already formatted); e.g. infeasible layouts with a suggestion.
  explicit InputError(std::string message);
  const std::string& file() const { return file_; }
  const std::string& key_path() const { return key_path_; }
  const std::string& found() const { return found_; }
  const std::string& expected() const { return expected_; }

 private:
  std::string file_, key_path_, found_, expected_;
};

/// A bug in tutti (an invariant broke). Never thrown for user input.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/// Throws InternalError with `what` when `cond` is false. For invariants, never user input.
inline void check_internal(bool cond, const char* what) {
  if (!cond) throw InternalError(what);
}

}  // namespace tutti
