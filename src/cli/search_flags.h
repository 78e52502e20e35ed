// Flags shared by search, sweep and compare: instance counts, narrowing of the
// plan space, objective, price, limits, failures, threads and progress; their
// translation into search:: and cost:: values; and small shared renderers.
#pragma once
#include <CLI/CLI.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/scenario.h"
#include "cost/train_time.h"
#include "report/table.h"
#include "report/table_render.h"
#include "search/objective.h"
#include "search/plan_space.h"
#include "search/ranker.h"
#include "spec/error_bands.h"
#include "spec/price_choice.h"

namespace tp::cli {

struct SearchFlags {
  app::ScenarioOptions scenario;
  std::string instances = "1..128";
  // Narrowing: 0 / -1 / "any" leave an axis free.
  int tp = 0, pp = 0, virtual_stages = 0, micro_batch = 0, zero = -1, cp = 0, ep = 0, etp = 0;
  std::string sp = "any", recompute = "any", overlap_dp = "any";
  // Async TP is a framework feature (Megatron-LM's TP communication overlap on
  // NVIDIA) that Neuron and DeepSpeed stacks did not offer: opt-in.
  std::string overlap_tp = "off";
  std::string objective = "throughput";
  std::string price = "on-demand";
  std::vector<std::string> price_usd_hour;  // HW=RATE, the user's own rates
  std::string prices_file;                  // a JSON object of the same
  double budget_usd = 0, deadline_days = 0;
  bool strict_memory = false;  // drop plans whose memory fits only as predicted
  std::string error_bands;     // the bands --strict-memory reads; default data/error-bands.json
  int top = 10, threads = 0;
  bool quiet = false;
  std::string columns;  // report/column_choice.h: empty (the reading view in text), "all", or keys
  // Failures (0: descriptor default or assumption; see cost/train_time.h).
  double mtbf_hours = 0, checkpoint_gb_per_s = 0, restart_minutes = 0, checkpoint_interval_minutes = 0;
  std::string recovery = "automatic";
};

void add_instances_option(CLI::App* c, SearchFlags& f, const std::string& default_text);
void add_narrowing_options(CLI::App* c, SearchFlags& f);
void add_objective_options(CLI::App* c, SearchFlags& f);
void add_failure_options(CLI::App* c, SearchFlags& f);
void add_run_options(CLI::App* c, SearchFlags& f);

// "1,2,4" or "a..b" (a, 2a, 4a, ... up to b, and b itself). Throws CLI::ValidationError.
std::vector<int> parse_instances(const std::string& text);
std::vector<std::string> split_hardware(const std::string& text);
// Throws spec::SpecError (exit 2) before any work when `path`'s folder does not
// exist, so a long run never ends in "cannot write". Empty: nothing to check.
void check_output_path(const std::string& path, const std::string& option);
// The same for a plot, which must also end in .png or .svg.
void check_plot_path(const std::string& path, const std::string& option);

search::SpaceConstraints constraints(const SearchFlags& f, const std::vector<int>& instances);
cost::FailureSettings failure_settings(const SearchFlags& f);
search::Objective objective(const SearchFlags& f);
// With --strict-memory, the held-out memory band every kept plan must fit at; loads the bands file.
void apply_strict_memory(const SearchFlags& f, search::SearchOptions& options);
// The held-out error bands: --error-bands, else the shipped file where it exists (a trimmed install may lack it).
std::optional<spec::ErrorBands> error_bands_of(const SearchFlags& f);
// The price of an instance-hour on this hardware (spec/price_choice.h); throws
// SpecError when the hardware has none and the objective or a budget needs one.
spec::PriceChoice price_of(const spec::HardwareSpec& hardware, const SearchFlags& flags);

// Runs one search with a progress bar on stderr when it is a terminal and not quiet.
search::SearchResult run_with_progress(const cost::Evaluator& evaluator, const search::PlanSpace& space,
                                       const search::Scorer& scorer, search::SearchOptions options, bool quiet,
                                       const std::string& label);

// "TP 8 / PP 1 / SP / v1 / mb 1 / ZeRO 1 / selective"
std::string describe(const spec::Plan& plan);
// "trainplan: no feasible plan for M on HW at X instances: <why_none_kept>", on stderr.
void say_no_feasible_plan(const std::string& model, const std::string& hardware, const std::string& instances,
                          const search::DropStats& drops);
// How many plans were considered, dropped and why.
report::Table drop_table(const search::DropStats& drops, const std::string& title);

}  // namespace tp::cli
