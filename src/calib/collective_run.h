// A collective benchmark as trainplan reads it, whoever ran it: one operation
// on `ranks` ranks spread evenly over `instances` hosts, timed at several
// message sizes. Sizes and bandwidths follow nccl-tests' definitions
// (bus_bandwidth.h): `bytes` is the whole buffer (all-reduce), the gathered
// output (all-gather), the input (reduce-scatter) or the message (send/recv).
#pragma once
#include <string>
#include <vector>

#include "net/cluster.h"

namespace trainplan::calib {

struct CollectiveSample {
  double bytes = 0;              // S, nccl-tests' "size" column
  double seconds = 0;            // one operation
  double algbw_bytes_per_s = 0;  // S / seconds, as the log printed it (B/s)
  double busbw_bytes_per_s = 0;  // algbw x the collective's factor, as the log printed it (B/s)
  int line = 0;                  // line in the log it came from; 0 when measured here
};

struct CollectiveRun {
  std::string source;  // the log file, or "mpi" for `calibrate collectives`
  std::string tool;    // nccl-tests, nccom-test, hccl_demo, trainplan-mpi
  net::Collective op = net::Collective::all_reduce;
  int ranks = 0;
  int instances = 0;   // hosts the ranks span (1: inside one instance)
  std::string device;  // what the log says the ranks ran on, if it says
  std::vector<std::string> notes;  // assumptions made reading it
  std::vector<CollectiveSample> samples;
};

// "all_reduce", "all_gather", "reduce_scatter", "sendrecv" (point_to_point).
const char* collective_name(net::Collective op);
// Those names; false for anything else.
bool parse_collective_name(const std::string& text, net::Collective& op);

}  // namespace trainplan::calib
