// Where two plans' step times differ most: the part of StepBreakdown in which
// the second spends the most time beyond the first. Used to name the cause
// when a published or reference layout trails the search's leader.
#pragma once
#include <string>

#include "cost/estimate.h"

namespace trainplan::report {

struct StepDifference {
  std::string part;      // as the step-time tables name it; empty when nothing is slower
  double seconds = 0;    // how much more the second spends there
};

StepDifference largest_step_difference(const cost::StepBreakdown& first, const cost::StepBreakdown& second);

// Every part times `factor` (e.g. instances, to compare device-seconds per step).
cost::StepBreakdown scaled(const cost::StepBreakdown& breakdown, double factor);

}  // namespace trainplan::report
