// Tests for report::estimate_summary and report::reliability_summary: they
// arrange cost figures without changing them, and flag the clamped case.
#include "report/figures_summary.h"

#include <gtest/gtest.h>

#include <sstream>

namespace trainplan::report {
namespace {

TEST(FiguresSummary, StepTimeSharesAreOfStepTime) {
  cost::Estimate e;
  e.time = {.forward_compute_s = 1.0, .backward_compute_s = 2.0, .pipeline_bubble_s = 0.5,
            .dp_comm_exposed_s = 0.5, .step_s = 4.0};
  e.memory.capacity_bytes = 16.0 * 1073741824.0;
  e.memory.weights_bytes = 4.0 * 1073741824.0;
  e.memory.total_bytes = 8.0 * 1073741824.0;
  e.memory.fits = true;
  const Summary s = estimate_summary(e, "llama2-7b");
  ASSERT_EQ(s.sections.size(), 2u);
  EXPECT_DOUBLE_EQ(s.sections[0].total_value(), 4.0);
  EXPECT_DOUBLE_EQ(s.sections[0].lines[1].value, 2.0);
  std::ostringstream out;
  render_summary(out, s, Format::text);
  EXPECT_NE(out.str().find("50.0%"), std::string::npos);          // backward: 2 of 4 s
  EXPECT_NE(out.str().find("4.00 GiB   25.0%"), std::string::npos);  // weights: 4 of 16 GiB
  EXPECT_TRUE(s.notes.empty());
}

TEST(FiguresSummary, ReliabilityShowsUtilisationAndFlagsNoProgress) {
  cost::ReliabilityResult r;
  r.utilisation = 0.9881;
  r.lost_hours_per_day = 0.2856;
  std::ostringstream out;
  render_summary(out, reliability_summary(r, "seed 002"), Format::text);
  EXPECT_NE(out.str().find("98.81%"), std::string::npos);
  EXPECT_NE(out.str().find("0.29"), std::string::npos);
  r.can_progress = false;
  r.utilisation = 0;
  EXPECT_EQ(reliability_summary(r, "x").notes.size(), 1u);
}

}  // namespace
}  // namespace trainplan::report
