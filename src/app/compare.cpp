#include "app/compare.h"

#include <set>

#include "cost/train_time.h"

namespace trainplan::app {

CompareResult run_compare(const SearchQuery& query, const std::string& at, const std::vector<int>& counts,
                          const SearchRunner& run) {
  CompareResult c;
  c.at = at;
  c.query = query;
  if (at == "budget") c.query.objective = "time-to-train";
  if (at == "deadline") c.query.objective = "cost-to-train";
  const SearchQuery& q = c.query;
  if (at == "instances")
    for (int n : counts) c.groups.push_back({{n}, {}});
  else
    c.groups.push_back({counts, {}});
  std::set<std::string> kinds_seen;
  for (const auto& hw : split_hardware(q.scenario.hardware)) {
    c.scenarios.push_back(load_scenario(q.scenario, hw));
    c.prices.push_back(price_of(c.scenarios.back().hardware, q));
    for (const auto& quote : c.scenarios.back().hardware.prices)
      if (kinds_seen.insert(quote.kind).second) c.price_kinds.push_back(quote.kind);
  }
  for (CompareGroup& group : c.groups) {
    double first = 0;
    for (std::size_t h = 0; h < c.scenarios.size(); ++h) {
      const Scenario& s = c.scenarios[h];
      const search::SearchResult r =
          search_best(q, s, group.instance_counts, c.prices[h], run, "compare " + s.hardware.name);
      ComparedPlan& plan = group.plans.emplace_back();
      plan.hardware = h;
      plan.drops = r.drops;
      if (r.top.empty()) continue;
      const search::RankedPlan& b = plan.best.emplace(r.top.front());
      for (const auto& kind : c.price_kinds) {
        const spec::PriceQuote* quote = s.hardware.price(kind);
        plan.tokens_per_usd.push_back(
            quote ? std::optional<double>(cost::tokens_per_usd(b.dag_estimate.tokens_per_s, b.evaluation.plan.instances,
                                                               quote->usd_per_instance_hour))
                  : std::nullopt);
      }
      if (first == 0) first = b.dag_score.objective;
      plan.versus_first = b.dag_score.objective / first;
    }
  }
  return c;
}

}  // namespace trainplan::app
