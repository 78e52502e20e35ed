#include "cost/train_time.h"

#include <gtest/gtest.h>

#include "spec/load.h"

namespace trainplan::cost {
namespace {

// data/reliability/seed-002-assumptions.json: 6 bytes per parameter for BF16
// with stochastic rounding, 6.74e9 parameters -> about 40.4 GB per checkpoint.
TEST(TrainTime, CheckpointBytesAreWeightsPlusOptimizerState) {
  const auto model = spec::load_model("llama2-7b");
  EXPECT_DOUBLE_EQ(checkpoint_bytes(model, spec::Stack{}, spec::Precision::bf16_sr), 6.0 * double(model.total_parameters()));
  EXPECT_NEAR(checkpoint_bytes(model, spec::Stack{}, spec::Precision::bf16_sr), 4.044e10, 0.01e10);
  EXPECT_DOUBLE_EQ(checkpoint_bytes(model, spec::Stack{}, spec::Precision::mixed_bf16), 14.0 * double(model.total_parameters()));
}

// Seed document 002: 98.81% (automatic) and 77.83% (manual) at 128 instances,
// under the assumptions file's failure rate and 5 GB/s storage.
TEST(TrainTime, ReproducesSeed002UtilisationThroughTheFlags) {
  const auto model = spec::load_model("llama2-7b");
  const auto hw = spec::load_hardware("trn1.32xlarge");
  const spec::Workload w{4096, 1024, 1e12, spec::Precision::bf16_sr};
  FailureSettings s;
  s.mtbf_hours_per_instance = 1 / 1.58e-4;
  s.checkpoint_bytes_per_s = 5e9;
  EXPECT_NEAR(reliability(reliability_input(model, hw, spec::Stack{}, w, 128, s)).utilisation, 0.9881, 0.001);
  s.recovery = Recovery::manual;
  EXPECT_NEAR(reliability(reliability_input(model, hw, spec::Stack{}, w, 128, s)).utilisation, 0.7783, 0.001);
  // Descriptor defaults apply when no flag is given.
  const ReliabilityInput d = reliability_input(model, hw, spec::Stack{}, w, 4, FailureSettings{});
  EXPECT_DOUBLE_EQ(d.failures_per_instance_hour, hw.failures_per_instance_hour);
  EXPECT_DOUBLE_EQ(d.checkpoint_write_bytes_per_s, hw.checkpoint_storage_bytes_per_s);
}

TEST(TrainTime, WallTimeDividesByUtilisation) {
  // 1e9 tokens at 1e5 tokens/s is 1e4 s; at 50% utilisation 2e4 s; 4 instances at 10 USD/h.
  const TrainingTime t = training_time(1e9, 1e5, 4, 10.0, 0.5);
  EXPECT_DOUBLE_EQ(t.wall_s, 2e4);
  EXPECT_DOUBLE_EQ(t.cost_usd, 2e4 / 3600.0 * 40.0);
  EXPECT_DOUBLE_EQ(tokens_per_usd(1e5, 4, 10.0), 1e5 * 3600.0 / 40.0);
}

}  // namespace
}  // namespace trainplan::cost
