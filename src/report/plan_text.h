// One line per plan, as every table and message writes it:
// "TP 8 / PP 1 / SP / v2 / CP 2 / mb 1 / ZeRO 1 / selective / async TP", or
// spelled out with every degree as estimate's header states it
// ("TP 8, PP 1, DP 16, SP on, virtual stages 1, ..."). And the table of how many plans a search considered, kept and dropped, and why.
#pragma once
#include <string>

#include "report/table.h"
#include "search/ranker.h"
#include "spec/plan.h"

namespace trainplan::report {

enum class PlanText { compact, spelled_out };
std::string describe(const spec::Plan& plan, PlanText style = PlanText::compact);
Table drop_table(const search::DropStats& drops, const std::string& title);

}  // namespace trainplan::report
