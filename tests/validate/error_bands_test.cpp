// Held-out error bands: quantiles by hand, bands from a validation's held-out
// errors, verdicts that never use a run's own source; and the shipped
// data/error-bands.json is the one the committed corpus gives.
#include <gtest/gtest.h>

#include <filesystem>

#include "spec/load.h"
#include "validate/error_bands.h"

namespace trainplan::validate {
namespace {

TEST(ErrorBands, QuantileInterpolatesBetweenSortedValues) {
  // Sorted 1 2 3 4: position q x 3.
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 0.1), 1.3);
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 1.0), 4.0);
  EXPECT_DOUBLE_EQ(quantile({}, 0.5), 0.0);
}

// The held-out error as estimate would have priced the run (RunResult::error_as_priced).
RunResult timed_run(const std::string& family, double as_priced_error) {
  RunResult r;
  r.family = family;
  r.timed = true;
  r.error_as_priced = as_priced_error;
  r.error_cross_source = 9.0;  // the family fit's held-out figure: must not be used
  r.error_in_sample = 9.0;     // must not be used
  return r;
}

RunResult memory_run(const std::string& source, double error, double total_gib, bool oom = false) {
  RunResult r;
  r.run.source_id = source;
  r.run.out_of_memory = oom;
  if (!oom) r.run.memory = MeasuredMemory{};
  r.memory_error = error;
  r.estimate.memory.total_bytes = total_gib;
  r.estimate.memory.capacity_bytes = 80;
  return r;
}

TEST(ErrorBands, ThroughputFromHeldOutErrorsPerFamily) {
  ValidationResult v;
  for (double e : {-0.2, -0.1, 0.0, 0.1, 0.2}) v.runs.push_back(timed_run("a100", e));
  v.runs.push_back(timed_run("h100", 0.3));
  const spec::ErrorBands b = error_bands(v, 0.5, "test");
  // Every family: -0.2 -0.1 0 0.1 0.2 0.3; the 25th percentile at position 1.25.
  EXPECT_EQ(b.throughput.runs, 6);
  EXPECT_DOUBLE_EQ(b.throughput.low, -0.075);
  EXPECT_DOUBLE_EQ(b.throughput.high, 0.175);
  EXPECT_DOUBLE_EQ(b.throughput_by_family.at("a100").low, -0.1);
  EXPECT_DOUBLE_EQ(b.throughput_by_family.at("a100").median, 0.0);
  EXPECT_EQ(b.throughput_by_family.at("h100").runs, 1);
  EXPECT_EQ(b.memory.runs, 0);
}

// Source "x" alone under-predicts by 50%: its own runs must be judged by the
// other source's band (exact), and "y"'s by x's.
TEST(ErrorBands, VerdictsLeaveTheRunsOwnSourceOut) {
  ValidationResult v;
  v.runs.push_back(memory_run("x", -0.5, 70));
  v.runs.push_back(memory_run("x", -0.5, 70, true));
  v.runs.push_back(memory_run("y", 0.0, 70));
  v.runs.push_back(memory_run("y", 0.0, 90, true));
  const HeldOutVerdicts h = held_out_fit_verdicts(v, 0.8);
  // x's ran run and OOM: y's band is exact, 70 fits. y's ran run: x's band puts 70 at 140: marginal.
  EXPECT_EQ(h.ran.fits, 1);
  EXPECT_EQ(h.ran.marginal, 1);
  EXPECT_EQ(h.published_oom.fits, 1);
  EXPECT_EQ(h.published_oom.does_not_fit, 1);
  EXPECT_EQ(h.published_oom.marginal, 0);
}

TEST(ErrorBands, ShippedFileMatchesTheCorpus) {
  const std::filesystem::path root = spec::data_root();
  const spec::ErrorBands shipped = spec::load_error_bands((root / "data" / "error-bands.json").string());
  const ValidationResult v = validate_runs(load_measured_dir((root / "data" / "measured").string()),
                                           spec::Calibration{}, default_fit_parameters(), false);
  const spec::ErrorBands now = error_bands(v, shipped.coverage, shipped.computed_on);
  const auto same = [](const spec::ErrorBand& a, const spec::ErrorBand& b, const std::string& what) {
    EXPECT_EQ(a.runs, b.runs) << what << ": regenerate with trainplan validate --write-error-bands";
    EXPECT_NEAR(a.low, b.low, 2e-3) << what;
    EXPECT_NEAR(a.median, b.median, 2e-3) << what;
    EXPECT_NEAR(a.high, b.high, 2e-3) << what;
  };
  same(shipped.throughput, now.throughput, "throughput");
  same(shipped.memory, now.memory, "memory");
  EXPECT_EQ(shipped.memory_families, now.memory_families);
  ASSERT_EQ(shipped.throughput_by_family.size(), now.throughput_by_family.size());
  for (const auto& [family, band] : now.throughput_by_family) same(shipped.throughput_by_family.at(family), band, family);
  // At this commit, each run judged by a band without its own source: of 24
  // published OOMs 17 do not fit and 3 are marginal; 52 of 564 runs that ran
  // are marginal (9.2%; the Megatron-LM CI's 33 MoE runs, 1-15% under-predicted,
  // widen the band's low end from -9.4% to -9.9%). Refused: none (issue 40; the
  // two optimum-habana CI runs refused before, CodeLlama-13B ZeRO-1 on Gaudi2 and
  // BLOOM-7B1 ZeRO-3 on Gaudi1, now fit: see
  // Validation.MemoryErrorAndFitBoundaryDoNotRegress).
  const HeldOutVerdicts h = held_out_fit_verdicts(v, shipped.coverage);
  EXPECT_GE(h.published_oom.does_not_fit + h.published_oom.marginal, 20);
  EXPECT_EQ(h.ran.does_not_fit, 0);
  EXPECT_LE(double(h.ran.marginal) / (h.ran.fits + h.ran.marginal), 0.10);
}

}  // namespace
}  // namespace trainplan::validate
