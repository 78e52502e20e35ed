// Where the search ranks the layouts that published runs chose as their best
// (data/published-choices/), under the calibration `search` would use for the
// choice's stack: fitted on that stack's runs of the family where it has at
// least validate::kOwnStackFitRuns timed runs (as data/calibration/<family>+<stack>.json
// is), else the family's in-sample fit from `validate`. Reported: the leader,
// the published plan's rank and objective against it, the best plan that
// keeps the published TP / PP / SP layout, and the published plan's rank among
// the plans the source compared (those keeping the fields it held fixed).
#pragma once
#include <string>
#include <vector>

#include "report/table.h"
#include "validate/measured_run.h"
#include "validate/validation.h"

namespace trainplan::app {

struct ChoiceCheck {
  validate::PublishedChoice choice;
  std::string leader, best_with_layout;  // plans as describe() writes them
  long published_rank = 0, feasible = 0;
  double published_ratio = 0;    // published objective / leader's (throughput)
  double layout_ratio = 0;       // best with the published layout / leader's
  // Among the plans that keep the fields the source held fixed (where it names
  // them): the published plan's rank and how many such plans are feasible.
  long rank_where_searched = 0, feasible_where_searched = 0;
  std::string cause;             // where the published plan spends most beyond the leader
  std::string fitted_on;         // which runs the calibration was fitted on
};

// Choices whose hardware has no fit in `v` are skipped.
std::vector<ChoiceCheck> check_published_choices(const std::vector<validate::PublishedChoice>& choices,
                                                 const validate::ValidationResult& v);
report::Table choices_table(const std::vector<ChoiceCheck>& checks);

}  // namespace trainplan::app
