// The measurement behind `trainplan calibrate collectives`: MPI all-reduce,
// all-gather, reduce-scatter and a send/recv ring on every rank of
// MPI_COMM_WORLD, timed as nccl-tests times NCCL, and each rank's memcpy
// bandwidth. Initialises and finalises MPI itself; results reach rank 0 only.
// Built without MPI: mpi_available() is false and run_mpi_sweep throws.

// Timing: per size a warm-up, a probe that sets the repetitions, then loops whose
// time is nccl-tests' (per-iteration mean averaged over ranks,
// NVIDIA/nccl-tests@c6afef0b src/common.cu BenchTime); the median of 3 loops (5
// without --quick) is kept against a noisy host. FP32 sum; the send/recv ring
// sends rank r to r+1 as nccl-tests' src/sendrecv.cu does.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "calib/collective_run.h"

namespace trainplan::calib {

bool mpi_available();  // false when built without MPI (CMake found none)

struct MpiTopology {
  int rank = 0;  // this process
  int ranks = 0;
  int hosts = 0;           // distinct shared-memory nodes (MPI_Comm_split_type SHARED)
  int ranks_per_host = 0;  // the most on any host
  bool even = true;        // every host holds ranks_per_host ranks
  std::string library;     // MPI_Get_library_version, first line
};

struct MpiSweepOptions {
  bool quick = false;
  double max_bytes = 1 << 30;  // largest message (quick: 16 MiB)
  // Called on every rank once the topology is known, before anything is measured;
  // an exception it throws ends the sweep (MPI finalised) on every rank.
  std::function<void(const MpiTopology&)> check;
  std::function<void(int done, int total)> progress;  // rank 0 only
};

struct MpiSweep {
  bool root = false;  // this process is rank 0 and holds the results
  MpiTopology topology;
  double copy_bytes_per_s = 0;  // mean over ranks, all copying at once
  std::vector<CollectiveRun> runs;  // empty with one rank: nothing to measure
};

// 1 KiB to max_bytes: doubling (quick: x4, up to 16 MiB).
std::vector<double> collective_sizes(bool quick, double max_bytes);

MpiSweep run_mpi_sweep(const MpiSweepOptions& options);

}  // namespace trainplan::calib
