// `trainplan calibrate collectives`: time MPI collectives across the ranks
// mpirun started and fit the collective part of a calibration for the
// hardware they ran on (default: this host, each rank a device).
#include <unistd.h>

#include <iostream>
#include <memory>

#include "calib/collectives_mpi.h"
#include "calib/host_fabric.h"
#include "cli/calibrate_collectives.h"
#include "cli/collective_output.h"
#include "cli/output_paths.h"
#include "cli/query.h"
#include "cli/validators.h"
#include "report/progress.h"
#include "spec/error.h"
#include "spec/load.h"

namespace trainplan::cli {
namespace {

struct CollectiveOptions {
  bool quick = false, quiet = false;
  std::string hardware = "host";
  long long max_bytes = 1LL << 30;
  CollectiveOutput output;
};

// Refusals before anything is measured; every rank sees the same topology, so every rank
// refuses, and only rank 0 says why.
void check_topology(const calib::MpiTopology& t, const CollectiveOptions& o, const spec::HardwareSpec* named) {
  try {
    if (!t.even)
      throw spec::SpecError("calibrate collectives", "ranks",
                            "the same number of ranks on every host (the model lays groups evenly over instances)");
    if (t.hosts > 1 && !named)
      throw spec::SpecError("calibrate collectives", "--hardware",
                            "an instance type for a run across " + std::to_string(t.hosts) +
                                " hosts: the one whose network the inter_node share is of (the host model has none)");
    if (named && t.ranks > 1) {
      calib::CollectiveRun probe;
      probe.ranks = t.ranks;
      probe.instances = t.hosts;
      probe.source = "--hardware " + o.hardware;
      calib::run_layout(probe, named->devices_per_instance());
    }
  } catch (const spec::SpecError&) {
    if (t.rank == 0) throw;
    throw CLI::RuntimeError(2);
  }
}

int run_collectives(const CollectiveOptions& o) {
  if (!calib::mpi_available()) {
    std::cerr << "trainplan: calibrate collectives: this trainplan was built without MPI (CMake found none); install "
                 "Open MPI (libopenmpi-dev openmpi-bin; setup/install-deps.sh) and rebuild\n";
    return 2;
  }
  check_output_path(o.output.out, "--out");
  std::unique_ptr<spec::HardwareSpec> named;
  if (o.hardware != "host") named = std::make_unique<spec::HardwareSpec>(spec::load_hardware(o.hardware));
  if (!o.output.base.empty()) spec::load_calibration(o.output.base);  // refused before measuring

  calib::MpiSweepOptions sweep_options;
  sweep_options.quick = o.quick;
  sweep_options.max_bytes = double(o.max_bytes);
  sweep_options.check = [&](const calib::MpiTopology& t) { check_topology(t, o, named.get()); };
  sweep_options.progress = report::progress_reporter(std::cerr, report::ProgressOptions::for_stderr(o.quiet, "collectives"));
  const calib::MpiSweep sweep = calib::run_mpi_sweep(sweep_options);
  if (!sweep.root) return 0;
  const calib::MpiTopology& t = sweep.topology;
  if (t.ranks < 2) {
    std::cerr << "trainplan: calibrate collectives: one rank (started without mpirun?), so nothing was measured "
                 "across ranks or hosts and there is nothing to fit; start it as `mpirun -np N trainplan calibrate "
                 "collectives ...` with N >= 2 (one rank per host or per device)\n";
    return 2;
  }
  std::cerr << "calibrate collectives: " << t.ranks << " ranks on " << t.hosts << (t.hosts == 1 ? " host" : " hosts")
            << " (" << t.library << "); memcpy " << sweep.copy_bytes_per_s / 1e9 << " GB/s per rank\n";
  const spec::HardwareSpec hardware =
      named ? *named : calib::host_fabric_hardware(t.ranks_per_host, sweep.copy_bytes_per_s);
  const calib::CollectiveHardware stored =
      named ? calib::CollectiveHardware{o.hardware} : calib::CollectiveHardware{"host", t.ranks_per_host, sweep.copy_bytes_per_s};
  const std::string how = "measured by `trainplan calibrate collectives" + std::string(o.quick ? " --quick" : "") +
                          "` (" + t.library + ", " + std::to_string(t.ranks) + " ranks on " +
                          std::to_string(t.hosts) + (t.hosts == 1 ? " host" : " hosts") + ")";
  fit_and_write(sweep.runs, hardware, stored, how, o.output);
  return 0;
}

}  // namespace

void add_collectives_command(CLI::App& calibrate) {
  auto o = std::make_shared<CollectiveOptions>();
  CLI::App* c = calibrate.add_subcommand(
      "collectives",
      "Time MPI all-reduce, all-gather, reduce-scatter and send/recv from 1 KiB to 1 GiB on the ranks mpirun\n"
      "started, print time, algbw and busbw per size (nccl-tests' definitions), and fit the collective part\n"
      "of a calibration (share of link bandwidth per tier, per-step latency) for the hardware they ran on:\n"
      "this host (each rank a device, shares of memcpy bandwidth) unless --hardware names the instance\n"
      "type. Ranks on one host measure intra_node, ranks on several hosts inter_node. One process\n"
      "without mpirun measures nothing and exits 2.\n"
      "Example:  mpirun -np 4 trainplan calibrate collectives --quick --out host-collectives.json");
  c->add_flag("--quick", o->quick, "Sizes 1 KiB to 16 MiB in steps of 4 and shorter timing: seconds");
  c->add_option("-H,--hardware", o->hardware,
                "Instance type the ranks run on (a name from `trainplan list` or a hardware/*.json path), or host")
      ->capture_default_str();
  c->add_option("--max-bytes", o->max_bytes, "Largest message in bytes (at most 1 GiB; each rank holds two buffers)")
      ->check(whole_in(1024, 1LL << 30))
      ->capture_default_str();
  c->add_flag("-q,--quiet", o->quiet, "No progress bar");
  add_output_options(c, o->output, "the one estimate uses for --hardware, or the built-in default for host");
  c->callback([o, c] {
    o->output.document = json_document(*c);
    if (const int code = run_collectives(*o)) throw CLI::RuntimeError(code);
  });
}

}  // namespace trainplan::cli
