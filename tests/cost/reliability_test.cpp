// Tests for cost::reliability: Young/Daly intervals by hand, the seed 002
// utilisations from data/reliability/seed-002-assumptions.json, scaling and
// degenerate inputs.
#include "cost/reliability.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "spec/error.h"

namespace trainplan::cost {
namespace {

nlohmann::json seed_002_assumptions() {
  std::ifstream in(std::string(TRAINPLAN_SOURCE_DIR) + "/data/reliability/seed-002-assumptions.json");
  EXPECT_TRUE(in.good());
  return nlohmann::json::parse(in);
}

ReliabilityInput seed_002_input(const nlohmann::json& a, const char* restart_key) {
  ReliabilityInput in;
  in.instances = a.at("instances").at("value").get<int>();
  in.failures_per_instance_hour = a.at("failures_per_instance_hour").at("value").get<double>();
  in.checkpoint_bytes = a.at("parameters").at("value").get<double>() *
                        a.at("checkpoint_bytes_per_parameter").at("value").get<double>();
  in.checkpoint_write_bytes_per_s = a.at("checkpoint_write_bytes_per_s").at("value").get<double>();
  in.checkpoint_load_bytes_per_s = a.at("checkpoint_load_bytes_per_s").at("value").get<double>();
  in.interval_s = a.at("interval_s").at("value").get<double>();
  in.restart_s = a.at(restart_key).at("value").get<double>();
  return in;
}

TEST(Reliability, YoungIntervalByHand) {
  // write 10 s, 8 instances at 0.01 failures per instance-hour: MTBF = 3600 / 0.08 = 45000 s;
  // Young: sqrt(2 * 10 * 45000) = sqrt(900000) = 948.68 s.
  ReliabilityInput in;
  in.instances = 8;
  in.failures_per_instance_hour = 0.01;
  in.checkpoint_bytes = 10e9;
  in.checkpoint_write_bytes_per_s = 1e9;
  in.checkpoint_load_bytes_per_s = 2e9;
  in.restart_s = 100;
  const ReliabilityResult r = reliability(in);
  EXPECT_DOUBLE_EQ(r.cluster_mtbf_s, 45000.0);
  EXPECT_DOUBLE_EQ(r.checkpoint_write_s, 10.0);
  EXPECT_DOUBLE_EQ(r.checkpoint_load_s, 5.0);
  EXPECT_NEAR(r.interval_s, 948.683, 1e-3);
  EXPECT_NEAR(r.failures_per_day, 1.92, 1e-12);
  // loss = 100 + 5 + (948.683 + 10) / 2 = 584.342 s; failure overhead = 584.342 / 45000 = 0.0129854;
  // checkpoint overhead = 10 / 948.683 = 0.0105409; U = (1 - 0.0129854) / 1.0105409 = 0.976719.
  EXPECT_NEAR(r.loss_per_failure_s, 584.342, 1e-3);
  EXPECT_NEAR(r.utilisation, 0.976719, 1e-6);
  EXPECT_NEAR(r.lost_hours_per_day, (1 - 0.976719) * 24, 1e-4);
  EXPECT_TRUE(r.can_progress);
}

TEST(Reliability, DalyIntervalByHand) {
  // Daly (2006) eq. 37: tau = sqrt(2 d M) [1 + sqrt(d / 2M) / 3 + (d / 2M) / 9] - d.
  // d = 10, M = 45000: d / 2M = 1 / 9000; sqrt = 0.0105409;
  // 948.683 * (1 + 0.00351364 + 0.0000123457) - 10 = 942.028 s.
  EXPECT_NEAR(optimal_checkpoint_interval_s(10, 45000, IntervalRule::daly), 942.028, 1e-3);
  // Past a write of two MTBFs Daly checkpoints once per MTBF.
  EXPECT_DOUBLE_EQ(optimal_checkpoint_interval_s(300, 100, IntervalRule::daly), 100.0);
}

TEST(Reliability, GivenIntervalIsUsed) {
  ReliabilityInput in;
  in.instances = 1;
  in.failures_per_instance_hour = 0.01;
  in.checkpoint_bytes = 1e9;
  in.checkpoint_write_bytes_per_s = 1e9;
  in.checkpoint_load_bytes_per_s = 1e9;
  in.interval_s = 600;
  EXPECT_DOUBLE_EQ(reliability(in).interval_s, 600.0);
  EXPECT_NEAR(reliability(in).checkpoint_overhead, 1.0 / 600.0, 1e-15);
}

// Seed document 002 (Llama 2 7B, 128 x trn1.32xlarge): 98.81% effective utilisation with
// automatic recovery, 77.83% with manual recovery. The restart times in the file are fitted
// to these two figures (the file says so); the other inputs are independent assumptions.
TEST(Reliability, ReproducesSeed002AutomaticRecovery) {
  const ReliabilityResult r = reliability(seed_002_input(seed_002_assumptions(), "restart_s_automatic"));
  EXPECT_NEAR(r.utilisation * 100, 98.81, 0.1);
  EXPECT_NEAR(r.cluster_mtbf_s / 3600, 49.5, 0.5);  // 128 * 1.58e-4 per hour
}

TEST(Reliability, ReproducesSeed002ManualRecovery) {
  const ReliabilityResult r = reliability(seed_002_input(seed_002_assumptions(), "restart_s_manual"));
  EXPECT_NEAR(r.utilisation * 100, 77.83, 0.1);
}

TEST(Reliability, UtilisationFallsAsClusterGrows) {
  const nlohmann::json a = seed_002_assumptions();
  for (const char* key : {"restart_s_automatic", "restart_s_manual"}) {
    ReliabilityInput in = seed_002_input(a, key);
    double previous = 1.0;
    for (int instances = 1; instances <= 8192; instances *= 2) {
      in.instances = instances;
      const double u = reliability(in).utilisation;
      // Strictly falling until the cluster cannot progress; then it stays at 0.
      if (previous > 0) {
        EXPECT_LT(u, previous) << key << " at " << instances << " instances";
      } else {
        EXPECT_EQ(u, 0.0) << key << " at " << instances << " instances";
      }
      previous = u;
    }
  }
}

TEST(Reliability, ZeroFailureRateGivesFullUtilisation) {
  ReliabilityInput in;
  in.instances = 1000;
  in.checkpoint_bytes = 1e12;
  in.checkpoint_write_bytes_per_s = 1e9;
  in.checkpoint_load_bytes_per_s = 1e9;
  in.restart_s = 3600;
  const ReliabilityResult r = reliability(in);
  EXPECT_DOUBLE_EQ(r.utilisation, 1.0);
  EXPECT_TRUE(std::isinf(r.cluster_mtbf_s));
  EXPECT_DOUBLE_EQ(r.failures_per_day, 0.0);
  EXPECT_DOUBLE_EQ(r.lost_hours_per_day, 0.0);
  EXPECT_TRUE(r.can_progress);
}

TEST(Reliability, HugeFailureRateClampsToZeroAndIsFlagged) {
  ReliabilityInput in;
  in.instances = 1000;
  in.failures_per_instance_hour = 1.0;  // a failure every 3.6 s
  in.checkpoint_bytes = 1e10;
  in.checkpoint_write_bytes_per_s = 1e9;
  in.checkpoint_load_bytes_per_s = 1e9;
  in.restart_s = 60;
  const ReliabilityResult r = reliability(in);
  EXPECT_DOUBLE_EQ(r.utilisation, 0.0);
  EXPECT_FALSE(r.can_progress);
  EXPECT_DOUBLE_EQ(r.lost_hours_per_day, 24.0);
}

TEST(Reliability, RejectsBadInput) {
  ReliabilityInput in;
  in.instances = 0;
  EXPECT_THROW(reliability(in), spec::SpecError);
  in.instances = 1;
  in.failures_per_instance_hour = -1;
  EXPECT_THROW(reliability(in), spec::SpecError);
  in.failures_per_instance_hour = 0;
  in.checkpoint_bytes = 1e9;  // but no bandwidth
  EXPECT_THROW(reliability(in), spec::SpecError);
}

}  // namespace
}  // namespace trainplan::cost
