#include "calib/collectives_mpi.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "calib/bus_bandwidth.h"

#if TRAINPLAN_HAVE_MPI
#include <mpi.h>

#include <cstring>
#include <memory>
#endif

namespace trainplan::calib {

std::vector<double> collective_sizes(bool quick, double max_bytes) {
  const double top = std::min(max_bytes, quick ? 16.0 * (1 << 20) : double(1 << 30));
  std::vector<double> sizes;
  for (double s = 1024; s <= top; s *= quick ? 4 : 2) sizes.push_back(s);
  return sizes;
}

#if !TRAINPLAN_HAVE_MPI

bool mpi_available() { return false; }

MpiSweep run_mpi_sweep(const MpiSweepOptions&) {
  throw std::logic_error("trainplan was built without MPI (install libopenmpi-dev and rebuild)");
}

#else

bool mpi_available() { return true; }

namespace {

// MPI_Finalize on every way out, exceptions included.
struct MpiSession {
  MpiSession() {
    int ready = 0;
    MPI_Initialized(&ready);
    if (!ready) MPI_Init(nullptr, nullptr);
  }
  ~MpiSession() {
    int done = 0;
    MPI_Finalized(&done);
    if (!done) MPI_Finalize();
  }
};

MpiTopology topology() {
  MpiTopology t;
  int rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &t.ranks);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  t.rank = rank;
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local);
  int local_rank = 0, local_size = 0;
  MPI_Comm_rank(local, &local_rank);
  MPI_Comm_size(local, &local_size);
  MPI_Comm_free(&local);
  const int leader = local_rank == 0 ? 1 : 0;
  int smallest = 0;
  MPI_Allreduce(&leader, &t.hosts, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&local_size, &t.ranks_per_host, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&local_size, &smallest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  t.even = smallest == t.ranks_per_host;
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(version, &length);
  t.library = std::string(version, std::min<std::size_t>(std::size_t(length), std::strcspn(version, "\n,")));
  return t;
}

double mean_over_ranks(double v, int ranks) {
  double sum = 0;
  MPI_Allreduce(&v, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return sum / ranks;
}

// Every rank copies `bytes` at once; the best of a few, averaged over ranks.
double copy_bandwidth(double bytes, int ranks) {
  const std::size_t n = std::size_t(bytes);
  std::unique_ptr<char[]> a(new char[n]), b(new char[n]);
  std::memset(a.get(), 1, n);
  std::memset(b.get(), 2, n);
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    std::memcpy(b.get(), a.get(), n);
    best = std::min(best, MPI_Wtime() - t0);
  }
  return mean_over_ranks(bytes / std::max(best, 1e-9), ranks);
}

struct Buffers {
  std::vector<float> send, recv;
};

// One operation of `op` on S = `bytes` (nccl-tests' sizes: whole buffer, gathered output,
// reduce-scatter input, message). Returns the S it really moved (whole elements per rank).
double run_once(net::Collective op, double bytes, int ranks, int rank, Buffers& b) {
  const int count = int(bytes / sizeof(float));
  switch (op) {
    case net::Collective::all_reduce:
      MPI_Allreduce(b.send.data(), b.recv.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      return double(count) * sizeof(float);
    case net::Collective::all_gather: {
      const int each = count / ranks;
      MPI_Allgather(b.send.data(), each, MPI_FLOAT, b.recv.data(), each, MPI_FLOAT, MPI_COMM_WORLD);
      return double(each) * ranks * sizeof(float);
    }
    case net::Collective::reduce_scatter: {
      const int each = count / ranks;
      MPI_Reduce_scatter_block(b.send.data(), b.recv.data(), each, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      return double(each) * ranks * sizeof(float);
    }
    case net::Collective::point_to_point:
      MPI_Sendrecv(b.send.data(), count, MPI_FLOAT, (rank + 1) % ranks, 0, b.recv.data(), count, MPI_FLOAT,
                   (rank + ranks - 1) % ranks, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      return double(count) * sizeof(float);
  }
  return 0;
}

// One size: a warm-up, a probe that sets the repetitions (the same on every rank: from the
// slowest rank's probe), then `rounds` timed loops. Each loop's time is nccl-tests' figure (the
// per-iteration mean, averaged over ranks); the median loop is kept, against a noisy host.
CollectiveSample time_size(net::Collective op, double bytes, int ranks, int rank, Buffers& b, double floor_s,
                           int rounds) {
  run_once(op, bytes, ranks, rank, b);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  const double moved = run_once(op, bytes, ranks, rank, b);
  double probe = MPI_Wtime() - t0, slowest = 0;
  MPI_Allreduce(&probe, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  const int iters = int(std::clamp(std::ceil(floor_s / std::max(slowest, 1e-7)), 2.0, 1000.0));
  std::vector<double> loops;
  for (int r = 0; r < rounds; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) run_once(op, bytes, ranks, rank, b);
    loops.push_back(mean_over_ranks((MPI_Wtime() - t0) / iters, ranks));
  }
  std::sort(loops.begin(), loops.end());
  const double seconds = std::max(loops[loops.size() / 2], 1e-9);  // MPI_Wtime ticks: never 0
  return {moved, seconds, algbw_bytes_per_s(moved, seconds), busbw_bytes_per_s(op, ranks, moved, seconds), 0};
}

}  // namespace

MpiSweep run_mpi_sweep(const MpiSweepOptions& o) {
  MpiSession session;
  MpiSweep out;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  out.root = rank == 0;
  out.topology = topology();
  if (o.check) o.check(out.topology);
  const int ranks = out.topology.ranks;
  if (ranks < 2) return out;
  const std::vector<double> sizes = collective_sizes(o.quick, o.max_bytes);
  const double largest = sizes.empty() ? 0 : sizes.back();
  out.copy_bytes_per_s = copy_bandwidth(std::clamp(largest, 1.0 * (1 << 20), 64.0 * (1 << 20)), ranks);
  Buffers b;
  b.send.assign(std::size_t(largest / sizeof(float)) + 1, 1.0f);
  b.recv.assign(b.send.size(), 0.0f);
  const double floor_s = o.quick ? 0.004 : 0.05;  // per timed loop
  const int rounds = o.quick ? 3 : 5;
  const net::Collective ops[] = {net::Collective::all_reduce, net::Collective::all_gather,
                                 net::Collective::reduce_scatter, net::Collective::point_to_point};
  const int total = int(std::size(ops) * sizes.size());
  int done = 0;
  for (net::Collective op : ops) {
    CollectiveRun run;
    run.source = "mpi";
    run.tool = "trainplan-mpi";
    run.op = op;
    run.ranks = ranks;
    run.instances = out.topology.hosts;
    run.device = out.topology.library;
    for (double s : sizes) {
      const bool splits = op == net::Collective::all_gather || op == net::Collective::reduce_scatter;
      if (!splits || s >= double(sizeof(float)) * ranks) run.samples.push_back(time_size(op, s, ranks, rank, b, floor_s, rounds));
      if (out.root && o.progress) o.progress(++done, total);
    }
    out.runs.push_back(std::move(run));
  }
  return out;
}

#endif

}  // namespace trainplan::calib
