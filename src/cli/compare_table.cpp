#include "cli/compare_table.h"

#include <cstdio>

#include "report/plan_text.h"

namespace tp::cli {

report::Table compare_table(const app::CompareResult& c) {
  using report::NumberStyle;
  const app::Scenario& first = c.scenarios.front();
  report::Table t;
  t.key = "hardware_compared";
  t.title = "Hardware compared at equal " + c.at + ": " + first.model.name + ", seq " +
            std::to_string(first.workload.seq_len) + ", global batch " + std::to_string(first.workload.global_batch_seqs) +
            " (best by " + c.query.objective + ", " + c.query.price + " prices where listed)";
  t.columns = {{"hardware", ""}, {"stack, precision", ""}, {"instances", "", NumberStyle::integer}, {"plan", ""},
               {"throughput", "tokens/s", NumberStyle::integer}, {"MFU", "", NumberStyle::percent, 1},
               {"time to train", "days", NumberStyle::fixed, 2}, {"price", ""},
               {"cost to train, at that price", "USD", NumberStyle::integer}};
  t.columns.back().key = "cost_to_train_usd";
  for (const auto& k : c.price_kinds) t.columns.push_back({"tokens per USD " + k, "", NumberStyle::integer});
  t.columns.push_back({search::to_string(app::objective(c.query)) + std::string(" vs first"), "", NumberStyle::fixed, 3});
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
      char rate[64];
      std::snprintf(rate, sizeof rate, "%s $%.2f/h", price.kind.c_str(), price.usd_per_instance_hour);
      row.insert(row.end(), {double(b.evaluation.plan.instances), report::describe(b.evaluation.plan), e.tokens_per_s,
                             e.mfu, b.dag_score.time_to_train_s / 86400.0,
                             price.available() ? report::Cell{std::string(rate)} : report::Cell{std::string("none")},
                             b.dag_score.cost_to_train_usd});
      for (const auto& tokens : plan.tokens_per_usd) row.push_back(tokens ? report::Cell{*tokens} : report::Cell{});
      row.push_back(plan.versus_first);
      t.add_row(row);
    }
  for (const app::Scenario& s : c.scenarios)
    for (const std::string& note : app::scenario_notes(s)) t.notes.push_back(note);
  for (const spec::PriceChoice& price : c.prices)
    if (!price.note.empty()) t.notes.push_back(price.note);
  t.notes.push_back(std::string("Ratio: this hardware's objective figure over the first hardware's") +
                    (c.groups.size() > 1 ? " at the same instance count" : "") +
                    " (higher is better for throughput and tokens per dollar, lower for time and cost).");
  t.reading_view = {"hardware", "stack_precision", "instances", "plan", "throughput_tokens_per_s", "mfu",
                    "time_to_train_days", "price", "cost_to_train_usd", t.columns.back().machine_key()};
  return t;
}

}  // namespace tp::cli
