// Ring algebra: bytes each rank sends and algorithm steps for the standard
// ring collectives on n ranks over a buffer of `bytes` (the whole buffer for
// all-reduce, the gathered output for all-gather, the input for reduce-scatter).
// all-reduce: 2(n-1)/n of the buffer in 2(n-1) steps; all-gather and
// reduce-scatter: (n-1)/n in n-1 steps; point-to-point: the message in 1 step.
#pragma once
#include "net/cluster.h"

namespace trainplan::net {

inline double ring_bytes_per_rank(Collective kind, double bytes, int n) {
  if (kind == Collective::point_to_point) return n > 1 ? bytes : 0.0;
  const double share = n > 1 ? double(n - 1) / n : 0.0;
  return (kind == Collective::all_reduce ? 2.0 : 1.0) * share * bytes;
}

inline int ring_steps(Collective kind, int n) {
  if (n < 2) return 0;
  if (kind == Collective::point_to_point) return 1;
  return kind == Collective::all_reduce ? 2 * (n - 1) : n - 1;
}

}  // namespace trainplan::net
