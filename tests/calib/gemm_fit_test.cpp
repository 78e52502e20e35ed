// The GEMM curve from imported timings: hand-computed efficiencies, a known
// curve recovered, leave-one-shape-out errors, and the refusals.
#include <gtest/gtest.h>

#include <cmath>

#include "calib/gemm_csv.h"
#include "calib/gemm_fit.h"
#include "spec/error.h"

using trainplan::calib::GemmTiming;

namespace {

GemmTiming timing(double m, double n, double k, double seconds, int line, const std::string& dtype = "bf16") {
  GemmTiming t;
  t.m = m, t.n = n, t.k = k, t.seconds = seconds, t.line = line, t.dtype = dtype;
  return t;
}

// Timings that follow ceiling 0.8, m_half 64, n_half 128, k_half 32 of a 1e15 FLOP/s peak exactly.
std::vector<GemmTiming> exact_rows() {
  const trainplan::spec::GemmEfficiency g{0.8, 64, 128, 32};
  std::vector<GemmTiming> rows;
  int line = 2;
  for (double m : {128.0, 1024.0, 8192.0})
    for (double n : {256.0, 4096.0})
      for (double k : {64.0, 2048.0}) rows.push_back(timing(m, n, k, 2 * m * n * k / (1e15 * g.at(m, n, k)), line++));
  return rows;
}

}  // namespace

TEST(GemmFit, EfficiencyIsFlopsOverTimeOverPeak) {
  // 2 x 4096^3 = 1.374e11 FLOPs in 0.5 ms is 274.9 TFLOP/s: 27.49% of 1 PFLOP/s.
  std::vector<GemmTiming> rows = exact_rows();
  rows.push_back(timing(4096, 4096, 4096, 0.5e-3, 99));
  const auto fit = trainplan::calib::fit_gemm_timings(rows, 1e15, "t.csv");
  EXPECT_NEAR(fit.shapes.back().efficiency, 2.0 * 4096 * 4096 * 4096 / 0.5e-3 / 1e15, 1e-12);
  EXPECT_NEAR(fit.shapes.back().efficiency, 0.27488, 1e-5);
}

TEST(GemmFit, RecoversAKnownCurveAndPredictsHeldOutShapesExactly) {
  const auto fit = trainplan::calib::fit_gemm_timings(exact_rows(), 1e15, "t.csv");
  EXPECT_NEAR(fit.efficiency.ceiling, 0.8, 1e-4);
  EXPECT_NEAR(fit.efficiency.m_half, 64, 0.05);
  EXPECT_NEAR(fit.efficiency.n_half, 128, 0.1);
  EXPECT_NEAR(fit.efficiency.k_half, 32, 0.05);
  EXPECT_EQ(fit.distinct_shapes, 12);
  ASSERT_EQ(fit.shapes.size(), 12u);
  EXPECT_LT(fit.max_held_out, 1e-4);
  EXPECT_LT(fit.median_in_fit, 1e-5);
  for (std::size_t i = 1; i < fit.shapes.size(); ++i) EXPECT_LT(fit.shapes[i - 1].timing.line, fit.shapes[i].timing.line);
}

TEST(GemmFit, AnOutlierShowsInItsHeldOutErrorMoreThanInTheFit) {
  std::vector<GemmTiming> rows = exact_rows();
  rows[5].seconds *= 1.5;  // one slow shape
  const auto fit = trainplan::calib::fit_gemm_timings(rows, 1e15, "t.csv");
  EXPECT_GT(fit.shapes[5].error_held_out, fit.shapes[5].error_in_fit);
  // Predicted from the others, the slow shape's time is about 1/1.5 of what was measured.
  EXPECT_NEAR(fit.shapes[5].error_held_out, 1 - 1 / 1.5, 0.05);
  EXPECT_LT(fit.median_held_out, 0.1);  // the others, though the outlier pulls on every fit it is in
}

TEST(GemmFit, RowsOfOneShapeAreHeldOutTogether) {
  std::vector<GemmTiming> rows = exact_rows();
  rows.push_back(rows[0]);
  rows.back().line = 50;
  const auto fit = trainplan::calib::fit_gemm_timings(rows, 1e15, "t.csv");
  EXPECT_EQ(fit.distinct_shapes, 12);
  EXPECT_EQ(fit.shapes.size(), 13u);
}

TEST(GemmFit, FewerThanFiveShapesAreRefused) {
  std::vector<GemmTiming> rows = exact_rows();
  rows.resize(4);
  try {
    trainplan::calib::fit_gemm_timings(rows, 1e15, "t.csv");
    FAIL();
  } catch (const trainplan::spec::SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("at least 5 distinct GEMM shapes"), std::string::npos) << e.what();
  }
}

TEST(GemmFit, ACeilingFarFromThePeakIsRefusedAsTimingsInAnotherUnit) {
  std::vector<GemmTiming> rows = exact_rows();
  for (auto& r : rows) r.seconds *= 1e4;  // ceiling 0.8 becomes 0.008%: microseconds written as seconds, say
  try {
    trainplan::calib::fit_gemm_timings(rows, 1e15, "t.csv");
    FAIL();
  } catch (const trainplan::spec::SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("t.csv: seconds: timings whose largest GEMM"), std::string::npos)
        << e.what();
  }
  for (auto& r : rows) r.seconds *= 1e-4 / 300;  // 240 times the peak
  EXPECT_THROW(trainplan::calib::fit_gemm_timings(rows, 1e15, "t.csv"), trainplan::spec::SpecError);
}

TEST(GemmFit, ShapesFarBelowTheirHalvesDoNotExtrapolatePastTheCeilingAFileHolds) {
  // Every call 1 us, whatever its size (launch-bound): efficiency grows with FLOPs and never levels off.
  std::vector<GemmTiming> rows;
  int line = 2;
  for (double m : {16.0, 32.0, 64.0, 128.0, 256.0}) rows.push_back(timing(m, m, m, 1e-6, line++));
  const double peak = 2 * 256.0 * 256 * 256 / 1e-6 / 0.5;  // the largest at 50%
  const auto fit = trainplan::calib::fit_gemm_timings(rows, peak, "t.csv");
  EXPECT_LE(fit.efficiency.ceiling, 4.0);
  EXPECT_GT(fit.efficiency.ceiling, 0.5);
}

TEST(GemmFit, OneDtypeIsChosenOrNamed) {
  trainplan::calib::GemmCsv csv;
  csv.file = "t.csv";
  csv.rows = {timing(1, 1, 1, 1, 2, "bf16"), timing(1, 1, 1, 1, 3, "fp32"), timing(2, 1, 1, 1, 4, "bf16")};
  EXPECT_EQ(trainplan::calib::rows_of_dtype(csv, "bf16").size(), 2u);
  EXPECT_EQ(trainplan::calib::rows_of_dtype(csv, "fp32").size(), 1u);
  try {
    trainplan::calib::rows_of_dtype(csv, "");
    FAIL();
  } catch (const trainplan::spec::SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("--dtype"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("bf16, fp32"), std::string::npos) << e.what();
  }
  EXPECT_THROW(trainplan::calib::rows_of_dtype(csv, "fp8"), trainplan::spec::SpecError);
  csv.rows.erase(csv.rows.begin() + 1);
  EXPECT_EQ(trainplan::calib::rows_of_dtype(csv, "").size(), 2u);
}

// The CPU fixture, timed by tools/measure_gemm.py on the project's build host (fixtures/README.md):
// a real CSV keeps the curve's held-out median error within the 10%. The peak only
// scales the ceiling, so any peak gives the same errors.
TEST(GemmFit, CpuFixtureFromMeasureGemmHoldsOutWithinTenPercent) {
  const auto csv = trainplan::calib::read_gemm_csv(std::string(TRAINPLAN_SOURCE_DIR) +
                                            "/tests/calib/fixtures/gemm_cpu_llama3.2-3b_tp4_fp32.csv");
  EXPECT_EQ(csv.meta.at("tool"), "tools/measure_gemm.py");
  EXPECT_EQ(csv.meta.at("backend"), "cpu");
  const auto rows = trainplan::calib::rows_of_dtype(csv, "");
  ASSERT_EQ(rows.size(), 15u);  // 5 linears x forward, dgrad, wgrad
  const auto at_1 = trainplan::calib::fit_gemm_timings(rows, 1e11, csv.file);
  const auto at_2 = trainplan::calib::fit_gemm_timings(rows, 2e11, csv.file);
  EXPECT_LE(at_1.median_held_out, 0.10);
  EXPECT_NEAR(at_1.median_held_out, at_2.median_held_out, 1e-6);
  EXPECT_NEAR(at_1.efficiency.ceiling, 2 * at_2.efficiency.ceiling, 1e-6 * at_1.efficiency.ceiling);
}
