#include "tutti/models/coll_op.hpp"

#include <string_view>

namespace tutti {

namespace {
// CollOp's collectives are Coll's first enumerators, in the same order and under the same names:
// one table of collective names, whichever enum a caller holds.
constexpr bool same_as_coll() {
  for (std::size_t i = 0; i < enum_index(CollOp::SendRecv); ++i)
    if (std::string_view(EnumTable<CollOp>::names[i]) != EnumTable<Coll>::names[i]) return false;
  return true;
}
static_assert(enum_index(CollOp::SendRecv) == enum_count<CollOp> - 1);
static_assert(enum_index(CollOp::SendRecv) <= enum_count<Coll>);
static_assert(same_as_coll(), "CollOp's collectives must be Coll's, in order, with its names");
}  // namespace

std::optional<Coll> to_coll(CollOp op) {
  if (op == CollOp::SendRecv) return std::nullopt;
  return static_cast<Coll>(enum_index(op));
}

double bus_factor(CollOp op, int n) {
  if (n <= 0) return 0;
  auto c = to_coll(op);
  return c ? bus_factor(*c, n) : 1.0;
}

}  // namespace tutti
