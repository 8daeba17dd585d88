// Per-kind keys of ops (kind_key.hpp).
#include "tutti/models/kind_key.hpp"

#include "tutti/models/program.hpp"

namespace tutti {

std::string kind_key(const Op& op) {
  if (op.kind == OpKind::Collective) return std::string("collective.") + to_string(op.group);
  return to_string(op.kind);
}

}  // namespace tutti
