// `trainplan calibrate import --collectives` end to end on the format
// fixtures: the written calibration, priced by net::Cluster, gives back the
// log's bus bandwidth at its largest message within 5%, and `estimate` reads it.
#include <gtest/gtest.h>

#include <cmath>

#include "calib/bus_bandwidth.h"
#include "calib/collective_calibration.h"
#include "calib/collective_log.h"
#include "collective_cli.h"
#include "net/cluster.h"
#include "spec/calibration_io.h"

using namespace trainplan::calib;
using namespace trainplan::calib::testing;

namespace {

// Imports `logs` for `hardware` and compares, per run, the fitted busbw at the run's largest
// message with the busbw column of the log there.
void expect_largest_busbw_within(const std::vector<std::string>& logs, const std::string& hardware, double tolerance) {
  const std::string out = scratch_dir("import") + "/c.json";
  std::string command = std::string(TRAINPLAN_BINARY) + " calibrate import --hardware " + hardware + " --out " + out +
                        " --collectives";
  for (const auto& l : logs) command += " " + fixture(l);
  const Outcome o = shell(command);
  ASSERT_EQ(o.code, 0) << o.out;
  const trainplan::spec::CalibrationFile file = trainplan::spec::load_calibration(out);
  const StoredCollectives stored = stored_collectives(file, out);
  const trainplan::net::Cluster cluster(stored.hardware);
  ASSERT_EQ(stored.runs.size(), logs.size());
  for (std::size_t i = 0; i < logs.size(); ++i) {
    const CollectiveRun log = load_collective_log(fixture(logs[i])).front();
    const CollectiveSample& largest = log.samples.back();
    const double seconds = predicted_seconds(cluster, run_layout(log, cluster.devices_per_instance()), log.op,
                                             largest.bytes, file.calibration.collective);
    const double fitted = busbw_bytes_per_s(log.op, log.ranks, largest.bytes, seconds);
    EXPECT_NEAR(fitted / largest.busbw_bytes_per_s, 1.0, tolerance)
        << logs[i] << ": fitted " << fitted / 1e9 << " GB/s, log " << largest.busbw_bytes_per_s / 1e9 << " GB/s";
  }
  std::filesystem::remove_all(std::filesystem::path(out).parent_path());
}

}  // namespace

TEST(CollectiveImport, NcclTestsFittedBusbwAtTheLargestMessageMatchesTheLog) {
  expect_largest_busbw_within({"nccl_all_reduce_p5_8ranks.log"}, "p5.48xlarge", 0.05);
  // Inside and across instances together: intra_node from the first, inter_node from the second.
  expect_largest_busbw_within({"nccl_all_reduce_p5_8ranks.log", "nccl_all_gather_p5_16ranks_2hosts.log"},
                              "p5.48xlarge", 0.05);
}

TEST(CollectiveImport, NccomTestFittedBusbwAtTheLargestMessageMatchesTheLog) {
  expect_largest_busbw_within({"nccom_allr_trn1_32ranks.log"}, "trn1.32xlarge", 0.05);
  expect_largest_busbw_within({"nccom_allr_trn1_32ranks.log", "nccom_allg_trn1_64ranks_2nodes.log"}, "trn1.32xlarge",
                              0.05);
}

TEST(CollectiveImport, HcclDemoImportsToo) {
  expect_largest_busbw_within({"hccl_all_reduce_dl1_8ranks.log"}, "dl1.24xlarge", 0.05);
}

TEST(CollectiveImport, TheCalibrationServesEstimate) {
  const std::string dir = scratch_dir("import-estimate");
  const Outcome imported = shell(std::string(TRAINPLAN_BINARY) + " calibrate import --hardware trn1.32xlarge --out " +
                                 dir + "/c.json --format csv --collectives " + fixture("nccom_allr_trn1_32ranks.log"));
  ASSERT_EQ(imported.code, 0) << imported.out;
  const auto rows = csv_rows(imported.out, "collective");
  ASSERT_EQ(rows.size(), 11u);
  EXPECT_NEAR(std::stod(rows.back().at("busbw_bytes_per_s")), 116.49 * 1073741824.0, 1);  // GiB/s as printed
  const Outcome estimate = shell(std::string(TRAINPLAN_BINARY) + " estimate --hardware trn1.32xlarge --instances 1 "
                                 "--tp 8 --global-batch 32 --calibration " + dir + "/c.json");
  EXPECT_EQ(estimate.code, 0) << estimate.out;
  std::filesystem::remove_all(dir);
}

TEST(CollectiveImport, BadInputIsOneLineAndExit2) {
  const std::string dir = scratch_dir("import-bad");
  const std::string bad = dir + "/bad.log";
  std::FILE* f = std::fopen(bad.c_str(), "w");
  std::fputs("nccom-test -r 2 allr\n size(B) count(elems) type time(us) algbw(GB/s) busbw(GB/s)\n 1024 256 fp32 ten 0.1 0.1\n", f);
  std::fclose(f);
  const Outcome o = shell(std::string(TRAINPLAN_BINARY) + " calibrate import --hardware trn1.32xlarge --out " + dir +
                          "/c.json --collectives " + bad);
  EXPECT_EQ(o.code, 2) << o.out;
  EXPECT_EQ(o.out, "trainplan: " + bad + ":3: time(us): a finite number, got 'ten'\n");
  EXPECT_FALSE(std::filesystem::exists(dir + "/c.json"));
  // Ranks that cannot tile the instance named.
  const Outcome tiles = shell(std::string(TRAINPLAN_BINARY) + " calibrate import --hardware dl1.24xlarge --out " + dir +
                              "/c.json --collectives " + fixture("nccom_allr_trn1_32ranks.log"));
  EXPECT_EQ(tiles.code, 2) << tiles.out;
  EXPECT_NE(tiles.out.find("is --hardware the instance it ran on?"), std::string::npos) << tiles.out;
  std::filesystem::remove_all(dir);
}
