// A prediction with its held-out error band: the measured figure's range, the
// band chosen for a family, and the memory verdict. Figures by hand.
#include <gtest/gtest.h>

#include "cost/uncertainty.h"

namespace tp::cost {
namespace {

// error = predicted / measured - 1, so measured = predicted / (1 + error).
TEST(Uncertainty, MeasuredRangeInvertsTheRelativeError) {
  const spec::ErrorBand band{100, -0.2, 0.0, 0.25};
  const Range r = measured_range(100.0, band);
  EXPECT_DOUBLE_EQ(r.low, 80.0);    // 100 / 1.25: the prediction was 25% high
  EXPECT_DOUBLE_EQ(r.high, 125.0);  // 100 / 0.8: the prediction was 20% low
}

TEST(Uncertainty, FamilyBandNeedsEnoughRuns) {
  spec::ErrorBands bands;
  bands.throughput = {400, -0.1, 0.0, 0.1};
  bands.throughput_by_family["a100"] = {kMinRunsForFamilyBand, -0.05, 0.0, 0.05};
  bands.throughput_by_family["gaudi1"] = {kMinRunsForFamilyBand - 1, -0.3, 0.0, 0.3};
  EXPECT_EQ(&throughput_band(bands, "a100"), &bands.throughput_by_family.at("a100"));
  EXPECT_EQ(&throughput_band(bands, "gaudi1"), &bands.throughput);
  EXPECT_EQ(&throughput_band(bands, "trainium2"), &bands.throughput);
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

}  // namespace
}  // namespace tp::cost
