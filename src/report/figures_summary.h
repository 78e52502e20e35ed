// Ready-made summaries of cost figures for the CLI: where one step's time and
// one device's memory go (from cost::Estimate), and what failures cost (from
// cost::ReliabilityResult). They only arrange figures the cost layer computed.
#pragma once
#include "cost/estimate.h"
#include "cost/reliability.h"
#include "report/summary.h"

namespace trainplan::report {

// Sections: step time by part (shares of step_s), memory by kind (shares of capacity).
Summary estimate_summary(const cost::Estimate& estimate, const std::string& title);

// Sections: utilisation and overheads (percent), checkpoint and failure times, per-day figures.
// A note says so when the cluster cannot make progress (utilisation clamped to 0).
Summary reliability_summary(const cost::ReliabilityResult& result, const std::string& title);

}  // namespace trainplan::report
