// The table `trainplan compare` prints, from an app::CompareResult: a row per
// hardware per comparison (its best plan, or "no feasible plan"), each cost
// column under the price it was reckoned at, the scenarios' assumptions and
// the price fallbacks as notes.
#pragma once
#include "app/compare.h"
#include "report/table.h"

namespace trainplan::cli {

report::Table compare_table(const app::CompareResult& result);

}  // namespace trainplan::cli
