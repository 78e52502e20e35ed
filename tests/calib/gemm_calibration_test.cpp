// The file `calibrate import --gemm` writes: the base's other parts kept, its
// kernel sweep dropped, GEMM origins measured, and the timings read back for
// `calibrate check`.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "calib/gemm_calibration.h"
#include "spec/error.h"

using namespace trainplan::calib;

namespace {

GemmCsv five_shapes() {
  GemmCsv csv;
  csv.file = "t.csv";
  csv.device = "NVIDIA H100 80GB HBM3";
  csv.meta = {{"backend", "cuda"}};
  int line = 2;
  for (double m : {512.0, 1024.0, 2048.0, 4096.0, 8192.0}) {
    GemmTiming t;
    t.m = m, t.n = 4096, t.k = 4096, t.dtype = "bf16", t.line = line++, t.label = "shape";
    t.seconds = t.flops() / (1e15 * 0.7 * m / (m + 100));
    csv.rows.push_back(t);
  }
  return csv;
}

trainplan::spec::CalibrationFile kernel_base() {
  trainplan::spec::CalibrationFile base;
  base.calibration.name = "host-kernels";
  base.calibration.origin = "measured";
  base.calibration.attention_factor = 0.55;
  base.calibration.collective.intra_node = 0.4;
  base.calibration.origins = {{"gemm_ceiling", "measured"}, {"gemm_shape", "measured"}, {"attention_factor", "measured"},
                              {"memory", "measured"},       {"collective", "fitted"},       {"step_overhead_s", "assumed"},
                              {"pipeline_microbatch_overhead_s", "assumed"}, {"host_trace_s_per_layer", "assumed"}};
  (*base.extra)["measurements"] = nlohmann::json::array();
  (*base.extra)["host"] = {{"fma_peak_flops_per_s", 1e11}};
  (*base.extra)["model"] = nlohmann::json::object();
  (*base.extra)["collectives"] = {{"runs", nlohmann::json::array()}};
  return base;
}

}  // namespace

TEST(GemmCalibration, ReplacesTheGemmCurveKeepsTheRestAndSaysWhereItCameFrom) {
  const GemmCsv csv = five_shapes();
  const GemmFit fit = fit_gemm_timings(csv.rows, 1e15, csv.file);
  GemmProvenance p;
  p.how = "imported in a test";
  p.date = "2026-01-01";
  p.base = "base.json";
  p.hardware = "p5.48xlarge";
  p.accelerator = "NVIDIA H100-SXM5-80GB";
  p.dtype = "bf16";
  p.peak = {1e15, "hardware descriptor hardware/p5.48xlarge.json", false};
  const auto file = gemm_calibration(kernel_base(), csv, csv.rows, fit, p, "g");
  const auto& c = file.calibration;
  EXPECT_EQ(c.name, "g");
  EXPECT_EQ(c.origin, "measured");
  EXPECT_EQ(c.accelerator, "NVIDIA H100-SXM5-80GB");
  // n and k are the same in every row, so only the curve's values along m are pinned down.
  EXPECT_NEAR(c.gemm.at(2048, 4096, 4096), 0.7 * 2048 / 2148, 1e-4);
  EXPECT_NEAR(c.gemm.at(8192, 4096, 4096), 0.7 * 8192 / 8292, 1e-4);
  EXPECT_EQ(c.attention_factor, 0.55);
  EXPECT_EQ(c.collective.intra_node, 0.4);
  EXPECT_EQ(c.origins.at("gemm_ceiling"), "measured");
  EXPECT_EQ(c.origins.at("gemm_shape"), "measured");
  EXPECT_EQ(c.origins.at("collective"), "fitted");
  // The base's kernel sweep described the replaced curve and peak; its collective runs stay.
  EXPECT_FALSE(file.extra->contains("measurements"));
  EXPECT_FALSE(file.extra->contains("host"));
  EXPECT_FALSE(file.extra->contains("model"));
  EXPECT_TRUE(file.extra->contains("collectives"));
  EXPECT_NE(c.description.find("hardware descriptor hardware/p5.48xlarge.json"), std::string::npos) << c.description;

  // Through JSON and back, as `calibrate check` reads it.
  const auto again = trainplan::spec::calibration_from_json(trainplan::spec::calibration_to_json(file), "g.json");
  ASSERT_TRUE(has_gemm_timings(again));
  const StoredGemm stored = stored_gemm_timings(again, "g.json");
  ASSERT_EQ(stored.rows.size(), 5u);
  EXPECT_EQ(stored.rows[2].m, 2048);
  EXPECT_EQ(stored.rows[2].line, 4);
  EXPECT_EQ(stored.peak_flops_per_s, 1e15);
  EXPECT_EQ(stored.dtype, "bf16");
  EXPECT_EQ(stored.device, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(again.calibration.origins, c.origins);
}

TEST(GemmCalibration, AHostSectionIsWrittenForTheCpu) {
  const GemmCsv csv = five_shapes();
  GemmProvenance p;
  p.dtype = "bf16";
  p.peak = {1e15, "measured", true};
  p.host = HostPeaks{};
  p.host->peak.flops_per_s = 1e15;
  p.host->stream_bytes_per_s = 1e10;
  trainplan::spec::CalibrationFile base;
  base.calibration.origin = "assumed";
  const auto file = gemm_calibration(base, csv, csv.rows, fit_gemm_timings(csv.rows, 1e15, "t.csv"), p, "h");
  EXPECT_EQ((*file.extra)["host"]["stream_bytes_per_s"], 1e10);
  EXPECT_EQ(file.calibration.origins.at("memory"), "assumed");
}

TEST(GemmCalibration, ABadStoredSectionNamesItsPath) {
  trainplan::spec::CalibrationFile file;
  (*file.extra)["gemm_timings"] = {{"peak_flops_per_s", -1}};
  try {
    stored_gemm_timings(file, "g.json");
    FAIL();
  } catch (const trainplan::spec::SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("$.gemm_timings.peak_flops_per_s"), std::string::npos) << e.what();
  }
}
