// The collective fit against data made by net::Cluster itself with known
// efficiencies: it must give them back; the held-out check must then be ~0;
// faster-than-raw data is capped and flagged; pure latency refuses to fit.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "calib/bus_bandwidth.h"
#include "calib/collective_calibration.h"
#include "calib/collective_fit.h"
#include "calib/host_fabric.h"
#include "spec/error.h"

using namespace trainplan::calib;
using trainplan::net::Collective;

namespace {

// An 8-device instance on a 100 GB/s switch with a 100 Gb/s network.
trainplan::spec::HardwareSpec test_hardware() {
  trainplan::spec::HardwareSpec hw = host_fabric_hardware(8, 100e9);
  hw.name = "test-8";
  hw.fabric_latency_s = 2e-6;
  hw.efa_gbps = 100;
  hw.efa_latency_s = 10e-6;
  return hw;
}

CollectiveRun model_run(const trainplan::net::Cluster& cluster, Collective op, int ranks, int instances,
                        const trainplan::spec::CollectiveEfficiency& e) {
  CollectiveRun run;
  run.source = "model";
  run.tool = "test";
  run.op = op;
  run.ranks = ranks;
  run.instances = instances;
  const RunLayout layout = run_layout(run, cluster.devices_per_instance());
  for (double s = 1024; s <= (1 << 30); s *= 4) {
    const double t = predicted_seconds(cluster, layout, op, s, e);
    run.samples.push_back({s, t, s / t, busbw_bytes_per_s(op, ranks, s, t), 0});
  }
  return run;
}

}  // namespace

TEST(CollectiveFit, RecoversTheEfficienciesTheDataWereMadeWith) {
  const trainplan::net::Cluster cluster(test_hardware());
  const trainplan::spec::CollectiveEfficiency truth{0.63, 0.41, 7e-6};
  const std::vector<CollectiveRun> runs = {model_run(cluster, Collective::all_reduce, 8, 1, truth),
                                           model_run(cluster, Collective::all_gather, 4, 1, truth),
                                           model_run(cluster, Collective::point_to_point, 8, 1, truth),
                                           model_run(cluster, Collective::reduce_scatter, 16, 2, truth),
                                           model_run(cluster, Collective::all_reduce, 4, 4, truth)};
  const CollectiveFit fit = fit_collectives(runs, cluster, {0.7, 0.7, 10e-6});
  EXPECT_TRUE(fit.intra.fitted);
  EXPECT_TRUE(fit.inter.fitted);
  EXPECT_EQ(fit.intra.runs, 3);
  EXPECT_EQ(fit.inter.runs, 2);
  EXPECT_NEAR(fit.efficiency.intra_node, 0.63, 1e-6);
  EXPECT_NEAR(fit.efficiency.inter_node, 0.41, 1e-6);
  EXPECT_NEAR(fit.efficiency.step_latency_s, 7e-6, 1e-10);
  for (const CollectiveCheck& c : check_collectives(runs, cluster, {0.7, 0.7, 10e-6})) {
    EXPECT_EQ(c.points, 11) << c.run;
    EXPECT_LT(c.max_rel_error, 1e-6) << c.run;
  }
}

TEST(CollectiveFit, ATierWithoutRunsKeepsTheStart) {
  const trainplan::net::Cluster cluster(test_hardware());
  const CollectiveFit fit =
      fit_collectives({model_run(cluster, Collective::all_reduce, 8, 1, {0.5, 0.9, 1e-6})}, cluster, {0.7, 0.33, 0});
  EXPECT_FALSE(fit.inter.fitted);
  EXPECT_EQ(fit.efficiency.inter_node, 0.33);
  EXPECT_NEAR(fit.efficiency.intra_node, 0.5, 1e-6);
}

TEST(CollectiveFit, FasterThanTheDescriptorIsCappedAndSaid) {
  const trainplan::net::Cluster cluster(test_hardware());
  const CollectiveFit fit =
      fit_collectives({model_run(cluster, Collective::all_reduce, 8, 1, {1.6, 0.7, 1e-6})}, cluster, {0.7, 0.7, 0});
  EXPECT_TRUE(fit.intra.capped);
  EXPECT_NEAR(fit.intra.uncapped_share, 1.6, 0.01);  // the latency refit with the capped share moves it a little
  EXPECT_EQ(fit.efficiency.intra_node, 1.0);
}

TEST(CollectiveFit, SmallMessagesAloneCannotFitAShare) {
  const trainplan::net::Cluster cluster(test_hardware());
  CollectiveRun run;
  run.source = "flat.log";
  run.op = Collective::all_reduce;
  run.ranks = 8;
  run.instances = 1;
  for (double s = 1024; s <= 65536; s *= 2) run.samples.push_back({s, 50e-6, 0, 0, 0});
  EXPECT_THROW(fit_collectives({run}, cluster, {}), trainplan::spec::SpecError);
  // Up to 16 MiB but flat (a loaded host): the large messages are taken as transfer alone, and it says so.
  for (double s = 131072; s <= (16 << 20); s *= 2) run.samples.push_back({s, 50e-6, 0, 0, 0});
  const CollectiveFit fit = fit_collectives({run}, cluster, {});
  EXPECT_TRUE(fit.intra.fitted);
  EXPECT_TRUE(fit.intra.latency_free);
  EXPECT_GT(fit.efficiency.intra_node, 0);
}

TEST(CollectiveFit, RanksThatDoNotTileTheInstanceAreRefused) {
  CollectiveRun run;
  run.source = "three.log";
  run.ranks = 3;
  run.instances = 1;
  EXPECT_THROW(run_layout(run, 8), trainplan::spec::SpecError);
  run.ranks = 24;  // 8 per instance on 3 instances: stride 1
  run.instances = 3;
  const RunLayout l = run_layout(run, 8);
  EXPECT_TRUE(l.across);
  EXPECT_EQ(l.group.size, 24);
  EXPECT_EQ(l.group.stride, 1);
  run.ranks = 6;  // 2 per instance: every 4th device
  const RunLayout spread = run_layout(run, 8);
  EXPECT_EQ(spread.group.stride, 4);
}

TEST(CollectiveFit, CalibrationKeepsTheBaseAndStoresTheRuns) {
  const trainplan::net::Cluster cluster(test_hardware());
  const std::vector<CollectiveRun> runs = {model_run(cluster, Collective::all_reduce, 8, 1, {0.5, 0.5, 2e-6})};
  trainplan::spec::CalibrationFile base;
  base.calibration.name = "base";
  base.calibration.origin = "fitted";
  base.calibration.gemm.ceiling = 0.61;
  const CollectiveFit fit = fit_collectives(runs, cluster, base.calibration.collective);
  const CollectiveProvenance p{"measured in a test", "2026-01-01", "base.json",
                               {"host", 8, 100e9}};
  const trainplan::spec::CalibrationFile file = collective_calibration(base, runs, fit, p, "c");
  EXPECT_EQ(file.calibration.gemm.ceiling, 0.61);
  EXPECT_EQ(file.calibration.origin, "measured");
  EXPECT_NEAR(file.calibration.collective.intra_node, 0.5, 1e-6);
  EXPECT_EQ(file.calibration.origins.at("gemm_ceiling"), "fitted");
  EXPECT_EQ(file.calibration.origins.at("collective"), "measured");
  // Through JSON and back, as `calibrate check` reads it.
  const auto again = trainplan::spec::calibration_from_json(trainplan::spec::calibration_to_json(file), "c.json");
  const StoredCollectives stored = stored_collectives(again, "c.json");
  ASSERT_EQ(stored.runs.size(), 1u);
  EXPECT_EQ(stored.runs[0].samples.size(), runs[0].samples.size());
  EXPECT_EQ(stored.hardware.devices_per_instance(), 8);
  EXPECT_EQ(stored.start.intra_node, 0.7);
  auto broken = trainplan::spec::calibration_to_json(file);
  broken["collectives"]["runs"][0]["samples"][2]["seconds"] = -1;
  EXPECT_THROW(stored_collectives(trainplan::spec::calibration_from_json(broken, "b.json"), "b.json"), trainplan::spec::SpecError);
}

// A dense sweep (2,000 sizes from 1 KiB to 1 GiB, as a log of repeated or
// stepped invocations gives): sizes within an eighth of an octave fit as one
// point, so the efficiencies come back as from a sparse sweep, and the
// leave-one-size-out check holds out 48 sizes, not 2,000.
TEST(CollectiveFit, ADenseSweepFitsByEighthOctaveBinsAndChecksAtMost48Sizes) {
  const trainplan::net::Cluster cluster(test_hardware());
  const trainplan::spec::CollectiveEfficiency truth{0.63, 0.41, 7e-6};
  CollectiveRun dense = model_run(cluster, Collective::all_reduce, 8, 1, truth);
  dense.samples.clear();
  const RunLayout layout = run_layout(dense, cluster.devices_per_instance());
  for (int i = 0; i < 2000; ++i) {
    const double s = 1024 * std::pow(2.0, 20.0 * i / 1999);
    const double t = predicted_seconds(cluster, layout, Collective::all_reduce, s, truth);
    dense.samples.push_back({s, t, s / t, busbw_bytes_per_s(Collective::all_reduce, 8, s, t), 0});
  }
  const CollectiveFit fit = fit_collectives({dense}, cluster, {0.7, 0.7, 10e-6});
  EXPECT_EQ(fit.points, 161);  // 20 octaves x 8 bins, and the top size's own
  EXPECT_NEAR(fit.efficiency.intra_node, 0.63, 1e-3);
  const auto checks = check_collectives({dense}, cluster, {0.7, 0.7, 10e-6});
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_LE(checks[0].points, 48);
  EXPECT_GE(checks[0].points, 40);
  EXPECT_LT(checks[0].max_rel_error, 0.01);
}
