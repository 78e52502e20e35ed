#include "cli/compare_table.h"

#include <cstdio>

#include "report/number_format.h"
#include "report/plan_text.h"

namespace trainplan::cli {
namespace {

// "on-demand $21.50/h", or empty where the hardware lists no price.
std::string rate_text(const spec::PriceChoice& price) {
  if (!price.available()) return "";
  char rate[64];
  std::snprintf(rate, sizeof rate, "%s $%.2f/h", price.kind.c_str(), price.usd_per_instance_hour);
  return rate;
}

}  // namespace

report::Table compare_table(const app::CompareResult& c) {
  using report::NumberStyle;
  const app::Scenario& first = c.scenarios.front();
  report::Table t;
  t.key = "hardware_compared";
  const bool one_count = c.at == "instances" && c.groups.size() == 1;
  t.title = "Hardware compared at " +
            (one_count ? std::to_string(c.groups.front().instance_counts.front()) + " instances" : "equal " + c.at) +
            ": " + first.model.name + ", seq " + std::to_string(first.workload.seq_len) + ", global batch " +
            std::to_string(first.workload.global_batch_seqs) + ", best by " + c.query.objective + ", " + c.query.price +
            " prices where listed";
  t.columns = {{"hardware", ""}, {"stack, precision", ""}, {"instances", "", NumberStyle::integer}, {"plan", ""},
               {"throughput", "tokens/s", NumberStyle::integer}, {"MFU", "", NumberStyle::percent, 1},
               {"days to train", "", NumberStyle::fixed, 2, report::Align::automatic, "time_to_train_days"},
               {"price", ""},
               {"USD to train", "", NumberStyle::integer, 2, report::Align::automatic, "cost_to_train_usd"}};
  for (const auto& k : c.price_kinds) t.columns.push_back({"tokens per USD " + k, "", NumberStyle::integer});
  // The title names the objective; the key keeps it for programs.
  t.columns.push_back({"vs first", "", NumberStyle::fixed, 3, report::Align::automatic,
                       report::snake_case(search::to_string(app::objective(c.query)) + std::string(" vs first"))});
  for (const app::CompareGroup& group : c.groups)
    for (const app::ComparedPlan& plan : group.plans) {
      const app::Scenario& s = c.scenarios[plan.hardware];
      const spec::PriceChoice& price = c.prices[plan.hardware];
      std::vector<report::Cell> row{s.hardware.name, s.stack.name + ", " + spec::to_string(s.workload.precision)};
      if (!plan.best) {
        row.push_back(group.instance_counts.size() == 1 ? report::Cell{double(group.instance_counts.front())}
                                                        : report::Cell{});
        row.push_back(std::string("no feasible plan"));
        while (row.size() < t.columns.size()) row.push_back(report::Cell{});
        t.add_row(row);
        continue;
      }
      const search::RankedPlan& b = *plan.best;
      const cost::Estimate& e = b.dag_estimate;
      row.insert(row.end(), {double(b.evaluation.plan.instances), report::describe(b.evaluation.plan), e.tokens_per_s,
                             e.mfu, b.dag_score.time_to_train_s / 86400.0,
                             price.available() ? rate_text(price) : std::string("none"), b.dag_score.cost_to_train_usd});
      for (const auto& tokens : plan.tokens_per_usd) row.push_back(tokens ? report::Cell{*tokens} : report::Cell{});
      row.push_back(plan.versus_first);
      t.add_row(row);
    }
  for (const app::Scenario& s : c.scenarios)
    for (const std::string& note : app::scenario_notes(s)) t.notes.push_back(note);
  std::string rates;
  for (std::size_t h = 0; h < c.scenarios.size(); ++h) {
    const spec::PriceChoice& price = c.prices[h];
    rates += (h ? "; " : "") + c.scenarios[h].hardware.name + " " + (price.available() ? rate_text(price) : "none listed");
  }
  t.notes.push_back("Prices per instance-hour: " + rates + ".");
  for (const spec::PriceChoice& price : c.prices)
    if (!price.note.empty()) t.notes.push_back(price.note);
  t.notes.push_back(std::string("Ratio: this hardware's objective figure over the first hardware's") +
                    (c.groups.size() > 1 ? " at the same instance count" : "") +
                    " (higher is better for throughput and tokens per dollar, lower for time and cost).");
  // A person's view fits 120 columns: the count is in the title when there is
  // one, each rate in a note, and a long plan wraps after its slashes.
  t.reading_view = {"hardware", "stack_precision", "plan", "throughput_tokens_per_s", "mfu", "time_to_train_days",
                    "cost_to_train_usd", t.columns.back().machine_key()};
  if (!one_count) t.reading_view.insert(t.reading_view.begin() + 2, "instances");
  return t;
}

}  // namespace trainplan::cli
