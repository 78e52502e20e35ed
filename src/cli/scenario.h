// The flags every planning subcommand shares (model, hardware, workload,
// calibration, output format, the plan) registered on a command; what they
// name becomes a scenario and a plan in app/scenario.h.
#pragma once
#include <CLI/CLI.hpp>

#include "app/scenario.h"

namespace trainplan::cli {

void add_scenario_options(CLI::App* command, app::ScenarioOptions& options, bool multiple_hardware = false);
void add_plan_options(CLI::App* command, app::PlanOptions& options);

}  // namespace trainplan::cli
