// Algorithm and bus bandwidth exactly as nccl-tests defines them
// (NVIDIA/nccl-tests@a0b82b22:doc/PERFORMANCE.md, "Bus Bandwidth"; the
// GetBw functions of src/all_reduce.cu, all_gather.cu, reduce_scatter.cu,
// sendrecv.cu): algbw = S / t; busbw = algbw x 2(n-1)/n for all-reduce,
// x (n-1)/n for all-gather and reduce-scatter, x 1 for send/recv.
#pragma once
#include "net/cluster.h"

namespace trainplan::calib {

inline double bus_factor(net::Collective op, int ranks) {
  if (ranks < 1) return 0;
  const double share = double(ranks - 1) / ranks;
  switch (op) {
    case net::Collective::all_reduce: return 2 * share;
    case net::Collective::all_gather:
    case net::Collective::reduce_scatter: return share;
    case net::Collective::point_to_point: return 1;
  }
  return 0;
}

inline double algbw_bytes_per_s(double bytes, double seconds) { return bytes / seconds; }

inline double busbw_bytes_per_s(net::Collective op, int ranks, double bytes, double seconds) {
  return algbw_bytes_per_s(bytes, seconds) * bus_factor(op, ranks);
}

}  // namespace trainplan::calib
