#pragma once
// What a collective microbenchmark times (`tutti exec bench`, measurement files, calibration): the
// collectives of the Program that nccl-tests times, plus its "sendrecv" ring exchange. The
// collectives are program.hpp's Coll: both enums list them from the one table
// TUTTI_COLL_TIMED_VALUES, so CollOp's first enumerators have Coll's values and names (also checked
// at compile time in coll_op.cpp), to_coll is a cast and the bus factor has one formula
// (bus_factor(Coll, n)).
#include <cstdint>
#include <optional>

#include "tutti/core/enum.hpp"
#include "tutti/models/program.hpp"

namespace tutti {

// clang-format off
#define TUTTI_COLL_OP_VALUES(X) TUTTI_COLL_TIMED_VALUES(X) X(SendRecv, "sendrecv")
// clang-format on
TUTTI_ENUM(CollOp, std::uint8_t, TUTTI_COLL_OP_VALUES);

/// The collective a microbenchmark op times; nullopt for SendRecv (point to point).
std::optional<Coll> to_coll(CollOp op);

/// nccl-tests' bus bandwidth factor of a microbenchmark op: bus_factor(*to_coll(op), n) for a
/// collective, 1 for SendRecv (one message per rank: busbw = algbw); 0 when n <= 0.
double bus_factor(CollOp op, int n);

}  // namespace tutti
