// The two tables `trainplan sweep` prints, declared once: scaling (the best or
// fixed plan per hardware and instance count, with throughput, efficiency, price
// and time and cost to train) and utilisation_with_failures. The caller adds the
// rows; name_scaling_table sets the title, the price kind and the closing notes.
#pragma once
#include <string>

#include "report/table.h"

namespace trainplan::cli {

report::Table scaling_table();
report::Table failures_table(const std::string& recovery);
// `what`: "<model> (<workload>), best plan by <objective>" or "..., plan held fixed by flags".
void name_scaling_table(report::Table& scaling, const std::string& what, const std::string& price_kinds);

}  // namespace trainplan::cli
