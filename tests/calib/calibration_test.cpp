#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "spec/calibration_io.h"
#include "calib/fit.h"
#include "calib/host_hardware.h"
#include "spec/error.h"

using namespace trainplan::calib;
using namespace trainplan::spec;

namespace {
nlohmann::json valid() {
  return {{"name", "t"}, {"accelerator", "x"}, {"origin", "fitted"}, {"description", "d"},
          {"gemm", {{"ceiling", 0.6}, {"m_half", 10}, {"n_half", 20}, {"k_half", 30}}},
          {"attention_factor", 0.5}, {"memory", {{"ceiling", 0.8}, {"bytes_half", 1000}}},
          {"memory_by_op", {{"softmax", {{"ceiling", 0.4}, {"bytes_half", 0}}}}},
          {"collective", {{"intra_node", 0.7}, {"inter_node", 0.6}, {"step_latency_s", 1e-5}}},
          {"step_overhead_s", 0.01}, {"fitted_on", "published runs"}};
}
}  // namespace

TEST(CalibrationIo, RoundTripKeepsExtraSections) {
  const CalibrationFile f = calibration_from_json(valid(), "mem");
  EXPECT_EQ(f.calibration.gemm.n_half, 20);
  EXPECT_EQ(f.calibration.memory_for("softmax").ceiling, 0.4);
  EXPECT_EQ(f.calibration.memory_for("gelu").ceiling, 0.8);
  EXPECT_EQ((*f.extra)["fitted_on"], "published runs");
  // Written back, the file also says where each part came from: a fitted file that names no fit
  // parameters fitted every part (spec/calibration_origins.h).
  nlohmann::json expected = valid();
  expected["attention_backward_factor"] = 1.0;  // absent: the backward at the forward's efficiency
  expected["pipeline_microbatch_overhead_s"] = 0.0;  // absent: no pipeline hand-off cost
  expected["host_trace_s_per_layer"] = 0.0;          // absent: no host recording per micro-batch
  expected["origins"] = {{"gemm_ceiling", "fitted"}, {"gemm_shape", "fitted"}, {"attention_factor", "fitted"},
                         {"memory", "fitted"},       {"collective", "fitted"}, {"step_overhead_s", "fitted"},
                         {"pipeline_microbatch_overhead_s", "fitted"}, {"host_trace_s_per_layer", "fitted"}};
  EXPECT_EQ(calibration_to_json(f), expected);
  EXPECT_EQ(calibration_to_json(calibration_from_json(expected, "mem")), expected);
}

TEST(CalibrationIo, BadFilesNameTheField) {
  auto expect_error = [](nlohmann::json j, const std::string& path) {
    try {
      calibration_from_json(j, "bad.json");
      FAIL() << "accepted a bad file at " << path;
    } catch (const trainplan::spec::SpecError& e) {
      EXPECT_EQ(e.json_path(), path);
      EXPECT_EQ(e.file(), "bad.json");
    }
  };
  auto j = valid();
  j["origin"] = "guessed";
  expect_error(j, "$.origin");
  j = valid();
  j["gemm"].erase("k_half");
  expect_error(j, "$.gemm.k_half");
  j = valid();
  j["memory"]["ceiling"] = -1;
  expect_error(j, "$.memory.ceiling");
  j = valid();
  j["collective"]["intra_node"] = "fast";
  expect_error(j, "$.collective.intra_node");
  j = valid();
  j["memory_by_op"]["matmul"] = {{"ceiling", 0.5}, {"bytes_half", 0}};
  expect_error(j, "$.memory_by_op.matmul");
  j = valid();
  j["attention_backward_factor"] = 0;
  expect_error(j, "$.attention_backward_factor");
  EXPECT_THROW(load_calibration("/nonexistent/file.json"), trainplan::spec::SpecError);
}

TEST(Fit, RecoversGemmParametersFromSyntheticPoints) {
  const GemmEfficiency truth{0.8, 40, 12, 25};
  std::vector<Measurement> pts;
  for (double m : {8., 32., 128., 1024.})
    for (double n : {16., 256., 2048.})
      for (double k : {16., 64., 4096.}) {
        Measurement x;
        x.op = "gemm", x.m = m, x.n = n, x.k = k, x.flops = 2 * m * n * k;
        x.median_s = x.flops / (1e11 * truth.at(m, n, k));
        pts.push_back(x);
      }
  const GemmEfficiency g = fit_gemm(pts, 1e11);
  EXPECT_NEAR(g.ceiling, 0.8, 1e-3);
  EXPECT_NEAR(g.m_half, 40, 0.1);
  EXPECT_NEAR(g.n_half, 12, 0.1);
  EXPECT_NEAR(g.k_half, 25, 0.1);
}

TEST(Fit, MemoryLineGivesCeilingAndHalfSize) {
  // time = (bytes + 1e6) / (0.5 * 2e10): ceiling 0.5, bytes_half 1e6.
  std::vector<Measurement> pts;
  for (double b : {1e5, 1e6, 1e7, 1e8}) {
    Measurement x;
    x.op = "gelu", x.bytes = b, x.median_s = (b + 1e6) / (0.5 * 2e10);
    pts.push_back(x);
  }
  const MemoryEfficiency m = fit_memory(pts, 2e10);
  EXPECT_NEAR(m.ceiling, 0.5, 1e-6);
  EXPECT_NEAR(m.bytes_half, 1e6, 1);
}

TEST(HostHardware, UsesMeasuredPeakAndBandwidth) {
  CalibrationFile f = calibration_from_json(valid(), "mem");
  EXPECT_THROW(host_hardware(f), trainplan::spec::SpecError);  // a fitted file describes no host
  (*f.extra)["host"] = {{"cpu", "Test CPU"}, {"fma_peak_flops_per_s", 7e11}, {"stream_bytes_per_s", 3.8e10}};
  const auto hw = host_hardware(f);
  EXPECT_EQ(hw.name, "host");
  EXPECT_EQ(hw.devices_per_instance(), 1);
  EXPECT_EQ(hw.peak_bf16_flops_per_s, 7e11);
  EXPECT_EQ(hw.hbm_bytes_per_s, 3.8e10);
  EXPECT_TRUE(hw.prices.empty());
}
