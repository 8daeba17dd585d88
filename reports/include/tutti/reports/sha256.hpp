#pragma once
// SHA-256 (FIPS 180-4) of a byte string, for echoing input files with a digest that
// `sha256sum FILE` reproduces.
#include <string>
#include <string_view>

namespace tutti::reports {

/// Lower-case hex SHA-256 digest of `data` (64 characters).
std::string sha256_hex(std::string_view data);

}  // namespace tutti::reports
