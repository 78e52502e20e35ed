// `trainplan compare`: hardware side by side for one model and workload, at
// equal instance count, equal budget or equal deadline: the best plan on each,
// tokens per dollar under each price kind, and the ratio to the first hardware.
#include <memory>

#include "app/compare.h"
#include "cli/commands.h"
#include "cli/compare_table.h"
#include "cli/query.h"
#include "cli/search_flags.h"
#include "report/column_choice.h"

namespace trainplan::cli {
namespace {

struct CompareOptions {
  report::JsonDocument document;
  app::SearchQuery flags;
  std::string at = "instances";
};

CommandOutput run(const CompareOptions& o, std::ostream& notes) {
  if (o.at == "budget" && o.flags.budget_usd <= 0)
    throw CLI::ValidationError("--budget", "compare --at budget needs --budget USD");
  if (o.at == "deadline" && o.flags.deadline_days <= 0)
    throw CLI::ValidationError("--deadline", "compare --at deadline needs --deadline DAYS");
  const app::CompareResult result =
      app::run_compare(o.flags, o.at, parse_instances(o.flags.instances), with_progress(o.flags.quiet));
  std::size_t without_plan = 0, plans = 0;
  for (const app::CompareGroup& group : result.groups)
    for (const app::ComparedPlan& plan : group.plans) {
      ++plans;
      if (plan.best) continue;
      ++without_plan;
      say_no_feasible_plan(notes, result.scenarios.front().model.name, result.scenarios[plan.hardware].hardware.name,
                           group.instance_counts.size() == 1 ? std::to_string(group.instance_counts.front())
                                                             : o.flags.instances,
                           plan.drops);
    }
  if (without_plan == plans) return {.exit_code = 2};  // each reason is said; no table
  return {.format = o.flags.scenario.format, .head = o.document,
          .made = report::choose_columns({compare_table(result)}, o.flags.scenario.format, o.flags.columns)};
}

}  // namespace

SharedCommand add_compare_command(CLI::App& app) {
  auto o = std::make_shared<CompareOptions>();
  CLI::App* c = app.add_subcommand("compare", "Hardware side by side at equal instance count, budget or deadline");
  c->footer(
      "\nExamples:\n"
      "  trainplan compare --hardware trn1.32xlarge,p4d.24xlarge,dl1.24xlarge --at instances --instances 16\n"
      "  trainplan compare --hardware trn1.32xlarge,p5.48xlarge --at budget --budget 500000 --instances 1..256");
  add_scenario_options(c, o->flags.scenario, true);
  add_instances_option(c, o->flags, "16");
  c->add_option("--at", o->at, "instances (each count of --instances compared on its own: --instances 8,16,64), "
                               "budget (fastest within --budget) or deadline (cheapest within --deadline)")
      ->capture_default_str()
      ->check(CLI::IsMember({"instances", "budget", "deadline"}));
  add_narrowing_options(c, o->flags);
  add_objective_options(c, o->flags);
  add_failure_options(c, o->flags);
  add_run_options(c, o->flags);
  return {c, [o, c](std::ostream& notes) {
            o->document = json_document(*c);
            return run(*o, notes);
          }};
}

}  // namespace trainplan::cli
