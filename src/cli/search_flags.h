// The flags of search, sweep and compare (app::SearchQuery registered on a
// command), the instance list they parse, and the progress bar and no-plan
// message a long search prints on stderr.
#pragma once
#include <CLI/CLI.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "app/search_query.h"
#include "cli/scenario.h"
#include "report/plan_text.h"
#include "report/table_render.h"
#include "search/ranker.h"

namespace trainplan::cli {

void add_instances_option(CLI::App* c, app::SearchQuery& f, const std::string& default_text);
void add_narrowing_options(CLI::App* c, app::SearchQuery& f);
void add_objective_options(CLI::App* c, app::SearchQuery& f);
void add_failure_options(CLI::App* c, app::SearchQuery& f);
void add_run_options(CLI::App* c, app::SearchQuery& f);

// "1,2,4" or "a..b" (a, 2a, 4a, ... up to b, and b itself). Throws CLI::ValidationError.
std::vector<int> parse_instances(const std::string& text);
// Runs each search with a progress bar on stderr when it is a terminal, the
// work takes a second or more, and `quiet` is off.
app::SearchRunner with_progress(bool quiet);

// "trainplan: no feasible plan for M on HW at X instances: <why_none_kept>", on `notes` (the program's stderr).
void say_no_feasible_plan(std::ostream& notes, const std::string& model, const std::string& hardware,
                          const std::string& instances, const search::DropStats& drops);

}  // namespace trainplan::cli
