// The tables `calibrate collectives`, `calibrate import` and `calibrate check`
// print for collective runs, under fixed keys: collective_runs (each size against
// the fitted model), collective_fit (the shares and latency per tier) and
// collective_check (each size held out of the fit).
#pragma once
#include <string>
#include <vector>

#include "calib/collective_fit.h"
#include "calib/collective_run.h"
#include "net/cluster.h"
#include "report/table.h"
#include "spec/calibration.h"

namespace trainplan::cli {

report::Table runs_table(const std::vector<calib::CollectiveRun>& runs, const net::Cluster& cluster,
                         const spec::CollectiveEfficiency& fitted);
report::Table fit_table(const calib::CollectiveFit& fit, const std::string& hardware, const std::string& base);
report::Table check_table(const std::vector<calib::CollectiveCheck>& checks);

}  // namespace trainplan::cli
