// A prediction with its held-out error band: the measured figure's range, the
// band chosen for a family, and the memory verdict. Figures by hand.
#include <gtest/gtest.h>

#include "cost/uncertainty.h"

namespace trainplan::cost {
namespace {

// error = predicted / measured - 1, so measured = predicted / (1 + error).
TEST(Uncertainty, MeasuredRangeInvertsTheRelativeError) {
  const spec::ErrorBand band{100, -0.2, 0.0, 0.25};
  const Range r = measured_range(100.0, band);
  EXPECT_DOUBLE_EQ(r.low, 80.0);    // 100 / 1.25: the prediction was 25% high
  EXPECT_DOUBLE_EQ(r.high, 125.0);  // 100 / 0.8: the prediction was 20% low
}

// A family with kMinRunsForFamilyBand runs takes its own band; one with fewer
// takes every family's, widened to its own where that spreads further (gaudi3:
// every family -10% .. +10%, its own 9 runs -5% .. +180%: -10% .. +180%); a
// family with fewer than spec::kMinRunsForRanking runs, or none, takes every family's.
TEST(Uncertainty, FamilyBandNeedsEnoughRunsAndWidensWhereItsOwnSpreadFurther) {
  spec::ErrorBands bands;
  bands.throughput = {400, -0.1, 0.0, 0.1};
  bands.throughput_by_family["a100"] = {kMinRunsForFamilyBand, -0.05, 0.0, 0.05};
  bands.throughput_by_family["gaudi1"] = {kMinRunsForFamilyBand - 1, -0.08, 0.0, 0.09};
  bands.throughput_by_family["gaudi3"] = {9, -0.05, 0.5, 1.8};
  bands.throughput_by_family["gaudi4"] = {spec::kMinRunsForRanking - 1, -0.9, 0.0, 3.0};
  const ThroughputBand a100 = throughput_band(bands, "a100");
  EXPECT_EQ(a100.scope, BandScope::family);
  EXPECT_DOUBLE_EQ(a100.band.high, 0.05);
  const ThroughputBand gaudi1 = throughput_band(bands, "gaudi1");  // inside every family's
  EXPECT_EQ(gaudi1.scope, BandScope::every_family);
  EXPECT_DOUBLE_EQ(gaudi1.band.low, -0.1);
  const ThroughputBand gaudi3 = throughput_band(bands, "gaudi3");
  EXPECT_EQ(gaudi3.scope, BandScope::every_family_widened);
  EXPECT_EQ(gaudi3.family_runs, 9);
  EXPECT_DOUBLE_EQ(gaudi3.band.low, -0.1);
  EXPECT_DOUBLE_EQ(gaudi3.band.high, 1.8);
  EXPECT_EQ(gaudi3.band.runs, 400);
  for (const char* few : {"gaudi4", "trainium2"}) {
    EXPECT_EQ(throughput_band(bands, few).scope, BandScope::every_family) << few;
    EXPECT_DOUBLE_EQ(throughput_band(bands, few).band.high, 0.1) << few;
  }
}

// Memory band -11.6% .. +4.6%: a measured peak up to 1 / 0.884 = 1.131x the prediction.
TEST(Uncertainty, FitVerdictUsesTheBandsUnderPrediction) {
  const spec::ErrorBand memory{214, -0.116, -0.036, 0.046};
  const double capacity = 80.0;
  EXPECT_EQ(fit_verdict(70.0, capacity, memory), FitVerdict::fits);      // up to 79.2
  EXPECT_EQ(fit_verdict(72.0, capacity, memory), FitVerdict::marginal);  // up to 81.4
  EXPECT_EQ(fit_verdict(80.0, capacity, memory), FitVerdict::marginal);
  EXPECT_EQ(fit_verdict(80.5, capacity, memory), FitVerdict::does_not_fit);
  EXPECT_STREQ(to_string(FitVerdict::marginal), "marginal");
}

// Ranking band from -10% to +18%: half-width 14%. Plans 10% apart tie; 20% do
// not, whichever way round; without a band nothing ties.
TEST(Uncertainty, PlansTieInsideTheRankingBand) {
  spec::ErrorBand ranking;
  ranking.runs = 600;
  ranking.low = -0.10;
  ranking.high = 0.18;
  EXPECT_TRUE(tied(100, 110, ranking));
  EXPECT_TRUE(tied(110, 100, ranking));
  EXPECT_FALSE(tied(100, 120, ranking));
  EXPECT_FALSE(tied(100, 110, spec::ErrorBand{}));
}

// One estimate under the bands, by hand: 1,000 tokens/s with the a100 band
// -20% .. +25% gives 800 .. 1,250 measured; a 10 s step 8 .. 12.5 s; 70 GiB
// under the memory band -10% .. +5% peaks at 66.7 .. 77.8 GiB, which 80 GiB
// holds; the memory band's runs include no trainium1.
TEST(Uncertainty, EstimateRangesPutsTheFamilysBandsOnEveryFigure) {
  spec::ErrorBands bands;
  bands.throughput = {400, -0.5, 0.0, 0.5};
  bands.throughput_by_family["a100"] = {kMinRunsForFamilyBand, -0.2, 0.0, 0.25};
  bands.memory = {200, -0.1, 0.0, 0.05};
  bands.memory_families = {"a100"};
  Estimate e;
  e.tokens_per_s = 1000;
  e.time.step_s = 10;
  const double gib = double(1 << 30);
  e.memory.total_bytes = 70 * gib;
  e.memory.capacity_bytes = 80 * gib;
  const EstimateRanges r = estimate_ranges(e, bands, "a100");
  EXPECT_EQ(r.throughput_band_scope, BandScope::family);
  EXPECT_TRUE(r.memory_band_has_family);
  EXPECT_DOUBLE_EQ(r.tokens_per_s.low, 800);
  EXPECT_DOUBLE_EQ(r.tokens_per_s.high, 1250);
  EXPECT_DOUBLE_EQ(r.step_s.low, 8);
  EXPECT_DOUBLE_EQ(r.step_s.high, 12.5);
  EXPECT_NEAR(r.memory_peak_bytes.high / gib, 70 / 0.9, 1e-9);
  EXPECT_EQ(r.verdict, FitVerdict::fits);
  const EstimateRanges other = estimate_ranges(e, bands, "trainium1");
  EXPECT_EQ(other.throughput_band_scope, BandScope::every_family);
  EXPECT_FALSE(other.memory_band_has_family);
  EXPECT_DOUBLE_EQ(other.tokens_per_s.low, 1000 / 1.5);
}

}  // namespace
}  // namespace trainplan::cost
