#include <gtest/gtest.h>

#include <cmath>

#include "cost/prices.h"

using namespace trainplan;

// Seed document 001 (NeoX 20B / Pythia 6.9B on trn1.32xlarge at the 3-year reserved
// rate $7.59 per instance-hour): tokens per dollar = seq/s x 2048 x 3600 / ($/h),
// published rounded to the token.
TEST(Prices, ReproducesSeed001TokensPerDollar) {
  struct Row { int instances; double seqs_per_s; long long published_tokens_per_usd; };
  const Row rows[] = {{1, 10.4, 10102387}, {4, 35.8, 8693881},  {4, 13.60, 3302704}, {8, 26.80, 3254134},
                      {16, 54.30, 3296632}, {32, 107.50, 3263241}, {64, 212.00, 3217708}};
  const spec::PriceQuote reserved{"reserved-3y", 7.59, "2026-11-22", "seed 001"};
  for (const Row& r : rows) {
    const auto f = cost::price_figures(reserved, r.seqs_per_s * 2048, r.instances, 1e9);
    EXPECT_EQ(std::llround(f.tokens_per_usd), r.published_tokens_per_usd) << r.instances << " instances";
    EXPECT_DOUBLE_EQ(f.usd_per_hour, 7.59 * r.instances);
    EXPECT_NEAR(f.usd_per_million_tokens * f.tokens_per_usd, 1e6, 1e-6);
    EXPECT_NEAR(f.cost_to_train_usd, 1e9 / f.tokens_per_usd, 1e-9);
  }
}
