// Origins per part of a calibration: read as written, inferred for files that
// predate them, and checked like every other field.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "expect_spec_error.h"
#include "spec/calibration_io.h"
#include "spec/calibration_lookup.h"
#include "spec/calibration_origins.h"
#include "spec/load.h"

using nlohmann::json;
using trainplan::spec::calibration_from_json;
using trainplan::spec::calibration_to_json;
using trainplan::spec::test_support::expect_spec_error;

namespace {

json minimal(const std::string& origin) {
  return {{"name", "t"},
          {"accelerator", "x"},
          {"origin", origin},
          {"description", "d"},
          {"gemm", {{"ceiling", 0.7}, {"m_half", 16}, {"n_half", 16}, {"k_half", 16}}},
          {"attention_factor", 0.8},
          {"memory", {{"ceiling", 0.7}, {"bytes_half", 0}}},
          {"collective", {{"intra_node", 0.7}, {"inter_node", 0.7}, {"step_latency_s", 1e-5}}},
          {"step_overhead_s", 0}};
}

}  // namespace

TEST(CalibrationOrigins, FittedFileWithoutOriginsFittedWhatItsParametersName) {
  json j = minimal("fitted");
  j["fit"] = {{"parameters", json::array({{{"name", "gemm.ceiling"}}, {{"name", "attention_factor"}},
                                           {{"name", "collective.inter_node"}}})}};
  const auto c = calibration_from_json(j, "f.json").calibration;
  EXPECT_EQ(c.origins.at("gemm_ceiling"), "fitted");
  EXPECT_EQ(c.origins.at("gemm_shape"), "assumed");  // the m/n/k halves stayed at the defaults
  EXPECT_EQ(c.origins.at("attention_factor"), "fitted");
  EXPECT_EQ(c.origins.at("memory"), "assumed");
  EXPECT_EQ(c.origins.at("collective"), "fitted");
  EXPECT_EQ(c.origins.at("step_overhead_s"), "assumed");
}

// A parameter the fit left at its prior because no run depended on it
// ("fitted": false) is no fitted part: a GPU stack's runs say nothing of
// pipeline graph cuts or lazy host tracing.
TEST(CalibrationOrigins, AParameterNoRunMovedStaysAssumed) {
  json j = minimal("fitted");
  j["fit"] = {{"parameters", json::array({{{"name", "gemm.ceiling"}, {"fitted", true}},
                                           {{"name", "memory.ceiling"}, {"fitted", true}},
                                           {{"name", "memory.attention_softmax.ceiling"}, {"fitted", false}},
                                           {{"name", "host_trace_s_per_layer"}, {"fitted", false}}})}};
  const auto c = calibration_from_json(j, "f.json").calibration;
  EXPECT_EQ(c.origins.at("gemm_ceiling"), "fitted");
  EXPECT_EQ(c.origins.at("memory"), "fitted");  // one of its parameters moved
  EXPECT_EQ(c.origins.at("host_trace_s_per_layer"), "assumed");
  const auto h100 = trainplan::spec::load_calibration(trainplan::spec::data_root() + "/data/calibration/h100.json").calibration;
  EXPECT_EQ(h100.origins.at("host_trace_s_per_layer"), "assumed");
  EXPECT_EQ(h100.origins.at("pipeline_microbatch_overhead_s"), "assumed");
}

TEST(CalibrationOrigins, ShippedFittedFileHasTheGemmCeilingFittedAndTheShapeAssumed) {
  const auto c = trainplan::spec::load_calibration(trainplan::spec::data_root() + "/data/calibration/h100+megatron-lm.json").calibration;
  EXPECT_EQ(c.origins.at("gemm_ceiling"), "fitted");
  EXPECT_EQ(c.origins.at("gemm_shape"), "assumed");
  EXPECT_EQ(c.origins.at("memory"), "fitted");
}

TEST(CalibrationOrigins, KernelFileWithoutOriginsMeasuredAllButCollectivesAndOverhead) {
  const auto c = calibration_from_json(minimal("measured"), "k.json").calibration;
  EXPECT_EQ(c.origins.at("gemm_shape"), "measured");
  EXPECT_EQ(c.origins.at("memory"), "measured");
  EXPECT_EQ(c.origins.at("collective"), "assumed");
  EXPECT_EQ(c.origins.at("step_overhead_s"), "assumed");
}

TEST(CalibrationOrigins, AssumedFileAndBuiltInDefaultAssumeEverything) {
  EXPECT_EQ(calibration_from_json(minimal("assumed"), "a.json").calibration.origins, trainplan::spec::uniform_origins("assumed"));
  trainplan::spec::HardwareSpec hw;
  EXPECT_EQ(trainplan::spec::assumed_calibration(hw).origins, trainplan::spec::uniform_origins("assumed"));
}

TEST(CalibrationOrigins, WrittenOriginsWinAndALegacyGemmKeyCoversBothGemmParts) {
  json j = minimal("measured");
  j["origins"] = {{"gemm", "fitted"}, {"collective", "measured"}};
  const auto c = calibration_from_json(j, "o.json").calibration;
  EXPECT_EQ(c.origins.at("gemm_ceiling"), "fitted");
  EXPECT_EQ(c.origins.at("gemm_shape"), "fitted");
  EXPECT_EQ(c.origins.at("collective"), "measured");
  EXPECT_EQ(c.origins.at("memory"), "measured");  // not written: inferred
}

TEST(CalibrationOrigins, RoundTripKeepsEveryPart) {
  json j = minimal("fitted");
  j["origins"] = {{"gemm_ceiling", "measured"}, {"gemm_shape", "measured"}};
  const auto file = calibration_from_json(j, "r.json");
  const auto again = calibration_from_json(calibration_to_json(file), "r.json");
  EXPECT_EQ(again.calibration.origins, file.calibration.origins);
  EXPECT_EQ(again.calibration.origins.size(), trainplan::spec::calibration_parts().size());
  EXPECT_FALSE(again.extra->contains("origins"));
}

TEST(CalibrationOrigins, BadWordsAndUnknownPartsAreRefusedWithTheirPath) {
  json word = minimal("fitted");
  word["origins"] = {{"memory", "guessed"}};
  expect_spec_error([&] { calibration_from_json(word, "b.json"); }, "$.origins.memory", "measured, fitted, assumed",
                    "b.json");
  json part = minimal("fitted");
  part["origins"] = {{"gemm_ceilng", "fitted"}};
  expect_spec_error([&] { calibration_from_json(part, "b.json"); }, "$.origins.gemm_ceilng", "gemm_ceiling", "b.json");
  json array = minimal("fitted");
  array["origins"] = json::array();
  expect_spec_error([&] { calibration_from_json(array, "b.json"); }, "$.origins", "an object", "b.json");
}
