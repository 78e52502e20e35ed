// A plan as a launcher job, and a launcher config read into a command's
// scenario and plan: --from-config and --like take the model, cluster, batch
// and plan from the file, and a flag given beside it that states the same
// thing differently is refused, naming both. Writing files is the caller's.
#pragma once
#include <set>
#include <string>
#include <vector>

#include "app/scenario.h"
#include "export/launch_config.h"

namespace trainplan::app {

// `plan` of `scenario` as the job the export formats write.
exporting::LaunchJob launch_job(const Scenario& scenario, const spec::Plan& plan);

// How a command takes the file's plan: as the job itself (estimate, export:
// a plan flag given beside the file must agree with it), or as the reference
// that search ranks alternatives against (search's plan flags narrow freely).
enum class LaunchUse { job, reference };

// Reads `file` with the launch's command-line `overrides` (exporting::read_launch_config) and
// fills `scenario` and `plan` from it, checking the options named in `given` (the long flags the
// user gave, "--tp" ...) against what the file states. Returns what was read.
exporting::ReadLaunch apply_launch_config(const std::string& file, const std::set<std::string>& given,
                                          ScenarioOptions& scenario, PlanOptions& plan, LaunchUse use = LaunchUse::job,
                                          const std::vector<std::string>& overrides = {});

}  // namespace trainplan::app
