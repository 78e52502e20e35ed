// One line per plan, as every table and message writes it:
// "TP 8 / PP 1 / SP / v2 / CP 2 / mb 1 / ZeRO 1 / selective / async TP".
// And the table of how many plans a search considered, kept and dropped, and why.
#pragma once
#include <string>

#include "report/table.h"
#include "search/ranker.h"
#include "spec/plan.h"

namespace trainplan::report {

std::string describe(const spec::Plan& plan);
Table drop_table(const search::DropStats& drops, const std::string& title);

}  // namespace trainplan::report
