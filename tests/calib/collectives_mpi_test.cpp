// `trainplan calibrate collectives` under mpirun with 2 and 4 ranks over
// loopback (--quick): its printed busbw is nccl-tests' busbw of its own printed
// time and size, and the calibration it writes loads. One process without
// mpirun measures nothing and exits 2. Skipped without mpirun or MPI.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>

#include "calib/bus_bandwidth.h"
#include "calib/collective_calibration.h"
#include "calib/collective_run.h"
#include "collective_cli.h"
#include "spec/calibration_io.h"

using namespace trainplan::calib;
using namespace trainplan::calib::testing;

namespace {

std::string mpirun_path() {
  const Outcome o = shell("command -v mpirun");
  return o.code == 0 && !o.out.empty() ? o.out.substr(0, o.out.find('\n')) : "";
}

// Open MPI leaves its own allocations at MPI_Finalize (ompi_op_base_op_select, MCA plugins it
// unloads), which LeakSanitizer reports in setup/test-sanitizers.sh; the processes that
// initialise MPI run without leak checking. The rest of the collectives code is leak-checked
// in-process by collective_fit_test and collective_log_test.
std::string without_mpi_leak_check() {
  const char* asan = std::getenv("ASAN_OPTIONS");
  return std::string("ASAN_OPTIONS='") + (asan ? std::string(asan) + ":" : "") + "detect_leaks=0' ";
}

bool built_with_mpi() {
  const Outcome o = shell(std::string(TRAINPLAN_BINARY) + " calibrate collectives --quick --out /dev/null/x.json");
  return o.out.find("built without MPI") == std::string::npos;
}

void check_run(int ranks) {
  const std::string mpirun = mpirun_path();
  if (mpirun.empty()) GTEST_SKIP() << "mpirun not found (Debian: openmpi-bin)";
  if (!built_with_mpi()) GTEST_SKIP() << "trainplan was built without MPI";
  // Open MPI refuses root unless told; the test host runs as root.
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  const std::string dir = scratch_dir("mpi" + std::to_string(ranks));
  const std::string out = dir + "/c.json";
  // Standard output alone: mpirun forwards the ranks' standard error at any moment, into the csv.
  const Outcome o = shell("(" + without_mpi_leak_check() + mpirun + " --oversubscribe -np " + std::to_string(ranks) +
                          " " + TRAINPLAN_BINARY + " calibrate collectives --quick --quiet --format csv --out " + out +
                          " 2>" + dir + "/stderr)");
  ASSERT_EQ(o.code, 0) << o.out << shell("cat " + dir + "/stderr").out;
  const auto rows = csv_rows(o.out, "collective");
  ASSERT_EQ(rows.size(), 4u * 8u) << o.out;  // four collectives, 1 KiB to 16 MiB in steps of 4
  for (const auto& row : rows) {
    trainplan::net::Collective op{};
    ASSERT_TRUE(parse_collective_name(row.at("collective"), op)) << row.at("collective");
    EXPECT_EQ(std::stoi(row.at("ranks")), ranks);
    EXPECT_EQ(std::stoi(row.at("instances")), 1);
    const double size = std::stod(row.at("size_bytes")), time = std::stod(row.at("time_s"));
    const double busbw = std::stod(row.at("busbw_bytes_per_s")), algbw = std::stod(row.at("algbw_bytes_per_s"));
    EXPECT_GE(size, 1024);
    EXPECT_GT(time, 0);
    EXPECT_NEAR(algbw, size / time, 1e-9 * algbw);
    // nccl-tests' factor, written out here rather than taken from the code under test.
    const double n = ranks;
    const double factor = op == trainplan::net::Collective::all_reduce      ? 2 * (n - 1) / n
                          : op == trainplan::net::Collective::point_to_point ? 1.0
                                                                  : (n - 1) / n;
    EXPECT_NEAR(busbw, size / time * factor, 1e-9 * busbw) << row.at("collective") << " " << size;
  }
  const trainplan::spec::CalibrationFile file = trainplan::spec::load_calibration(out);
  EXPECT_EQ(file.calibration.origin, "measured");
  EXPECT_GT(file.calibration.collective.intra_node, 0);
  EXPECT_LE(file.calibration.collective.intra_node, 1);
  const StoredCollectives stored = stored_collectives(file, out);
  ASSERT_EQ(stored.runs.size(), 4u);
  EXPECT_EQ(stored.runs[0].ranks, ranks);
  EXPECT_EQ(stored.hardware.devices_per_instance(), ranks);
  const Outcome check = shell(std::string(TRAINPLAN_BINARY) + " calibrate check " + out);
  EXPECT_EQ(check.code, 0) << check.out;
  std::filesystem::remove_all(dir);
}

}  // namespace

TEST(CollectivesMpi, TwoRanksOverLoopback) { check_run(2); }
TEST(CollectivesMpi, FourRanksOverLoopback) { check_run(4); }

TEST(CollectivesMpi, OneProcessWithoutMpirunMeasuresNothingAndExits2) {
  const std::string dir = scratch_dir("mpi1");
  const Outcome o =
      shell(without_mpi_leak_check() + TRAINPLAN_BINARY + " calibrate collectives --quick --out " + dir + "/c.json");
  EXPECT_EQ(o.code, 2) << o.out;
  const bool without = o.out.find("built without MPI") != std::string::npos;
  EXPECT_TRUE(without || o.out.find("one rank") != std::string::npos) << o.out;
  EXPECT_FALSE(std::filesystem::exists(dir + "/c.json"));
  std::filesystem::remove_all(dir);
}
