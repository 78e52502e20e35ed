// `trainplan compare`: hardware side by side for one model and workload, at
// equal instance count, equal budget or equal deadline: the best plan on each,
// tokens per dollar under each price kind, and the ratio to the first hardware.
#include <cstdio>
#include <iostream>
#include <memory>
#include <set>

#include "cli/commands.h"
#include "cli/query.h"
#include "cli/search_flags.h"
#include "report/column_choice.h"
#include "cost/evaluate.h"

namespace tp::cli {
namespace {

struct CompareOptions {
  report::JsonDocument document;
  app::SearchQuery flags;
  std::string at = "instances";
};

int run(const CompareOptions& o) {
  using report::NumberStyle;
  app::SearchQuery f = o.flags;
  if (o.at == "budget") {
    if (f.budget_usd <= 0) throw CLI::ValidationError("--budget", "compare --at budget needs --budget USD");
    f.objective = "time-to-train";
  } else if (o.at == "deadline") {
    if (f.deadline_days <= 0) throw CLI::ValidationError("--deadline", "compare --at deadline needs --deadline DAYS");
    f.objective = "cost-to-train";
  }
  const std::vector<int> counts = parse_instances(f.instances);
  // At equal instances each count is its own comparison; at a budget or a
  // deadline the counts are the range each hardware's best plan is sought in.
  std::vector<std::vector<int>> groups;
  if (o.at == "instances")
    for (int n : counts) groups.push_back({n});
  else
    groups.push_back(counts);
  const auto hardware = app::split_hardware(f.scenario.hardware);
  std::vector<app::Scenario> scenarios;
  std::set<std::string> kinds_set;
  std::vector<std::string> kinds;
  std::vector<spec::PriceChoice> prices;
  for (const auto& hw : hardware) {
    scenarios.push_back(app::load_scenario(f.scenario, hw));
    prices.push_back(app::price_of(scenarios.back().hardware, f));
    for (const auto& q : scenarios.back().hardware.prices)
      if (kinds_set.insert(q.kind).second) kinds.push_back(q.kind);
  }
  report::Table t;
  t.key = "hardware_compared";
  t.title = "Hardware compared at equal " + o.at + ": " + scenarios.front().model.name + ", seq " +
            std::to_string(scenarios.front().workload.seq_len) + ", global batch " +
            std::to_string(scenarios.front().workload.global_batch_seqs) + " (best by " + f.objective + ", " +
            f.price + " prices where listed)";
  t.columns = {{"hardware", ""}, {"stack, precision", ""}, {"instances", "", NumberStyle::integer}, {"plan", ""},
               {"throughput", "tokens/s", NumberStyle::integer}, {"MFU", "", NumberStyle::percent, 1},
               {"time to train", "days", NumberStyle::fixed, 2}, {"price", ""},
               {"cost to train, at that price", "USD", NumberStyle::integer}};
  t.columns.back().key = "cost_to_train_usd";
  for (const auto& k : kinds) t.columns.push_back({"tokens per USD " + k, "", NumberStyle::integer});
  t.columns.push_back({search::to_string(app::objective(f)) + std::string(" vs first"), "", NumberStyle::fixed, 3});
  std::size_t without_plan = 0;
  for (const std::vector<int>& group : groups) {
    double first = 0;
    for (std::size_t h = 0; h < scenarios.size(); ++h) {
      const app::Scenario& s = scenarios[h];
      const spec::PriceChoice& price = prices[h];
      const search::SearchResult r = app::search_best(
          f, s, group, price, with_progress(f.quiet), "compare " + s.hardware.name);
      std::vector<report::Cell> row{s.hardware.name, s.stack.name + ", " + spec::to_string(s.workload.precision)};
      if (r.top.empty()) {
        ++without_plan;
        say_no_feasible_plan(s.model.name, s.hardware.name,
                             group.size() == 1 ? std::to_string(group.front()) : f.instances, r.drops);
        row.push_back(group.size() == 1 ? report::Cell{double(group.front())} : report::Cell{});
        row.push_back(std::string("no feasible plan"));
        while (row.size() < t.columns.size()) row.push_back(report::Cell{});
        t.add_row(row);
        continue;
      }
      const search::RankedPlan& b = r.top.front();
      const cost::Estimate& e = b.dag_estimate;
      char rate[64];
      std::snprintf(rate, sizeof rate, "%s $%.2f/h", price.kind.c_str(), price.usd_per_instance_hour);
      row.insert(row.end(), {double(b.evaluation.plan.instances), report::describe(b.evaluation.plan), e.tokens_per_s, e.mfu,
                             b.dag_score.time_to_train_s / 86400.0,
                             price.available() ? report::Cell{std::string(rate)} : report::Cell{std::string("none")},
                             b.dag_score.cost_to_train_usd});
      for (const auto& k : kinds) {
        const spec::PriceQuote* q = s.hardware.price(k);
        row.push_back(q ? report::Cell{cost::tokens_per_usd(e.tokens_per_s, b.evaluation.plan.instances, q->usd_per_instance_hour)}
                        : report::Cell{});
      }
      if (first == 0) first = b.dag_score.objective;
      row.push_back(b.dag_score.objective / first);
      t.add_row(row);
    }
  }
  for (const app::Scenario& s : scenarios)
    for (const std::string& note : app::scenario_notes(s)) t.notes.push_back(note);
  for (const spec::PriceChoice& price : prices)
    if (!price.note.empty()) t.notes.push_back(price.note);
  t.notes.push_back(std::string("Ratio: this hardware's objective figure over the first hardware's") +
                    (groups.size() > 1 ? " at the same instance count" : "") +
                    " (higher is better for throughput and tokens per dollar, lower for time and cost).");
  if (without_plan == groups.size() * scenarios.size()) return 2;  // each reason is said; no table
  t.reading_view = {"hardware", "stack_precision", "instances", "plan", "throughput_tokens_per_s", "mfu",
                    "time_to_train_days", "price", "cost_to_train_usd", t.columns.back().machine_key()};
  report::render_tables(std::cout, report::choose_columns({t}, f.scenario.format, f.columns), f.scenario.format,
                        o.document);
  return 0;
}

}  // namespace

void add_compare_command(CLI::App& app) {
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
  c->callback([o, c] {
    o->document = json_document(*c);
    const int code = run(*o);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace tp::cli
