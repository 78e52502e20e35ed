#include "search/objective.h"

#include <algorithm>
#include <limits>

namespace trainplan::search {

const char* to_string(Objective o) {
  switch (o) {
    case Objective::throughput: return "throughput";
    case Objective::tokens_per_dollar: return "tokens-per-dollar";
    case Objective::time_to_train: return "time-to-train";
    case Objective::cost_to_train: return "cost-to-train";
  }
  return "?";
}

bool parse_objective(std::string_view text, Objective& out) {
  for (auto o : {Objective::throughput, Objective::tokens_per_dollar, Objective::time_to_train, Objective::cost_to_train})
    if (text == to_string(o)) {
      out = o;
      return true;
    }
  return false;
}

Scorer::Scorer(const cost::Evaluator& evaluator, const std::vector<int>& instance_counts, double usd_per_instance_hour,
               Objective objective, const cost::FailureSettings& failures, double budget_usd, double deadline_s)
    : tokens_to_train_(evaluator.workload().tokens_to_train),
      usd_per_instance_hour_(usd_per_instance_hour),
      objective_(objective),
      budget_usd_(budget_usd),
      deadline_s_(deadline_s) {
  // One entry per count, not per integer up to the largest: a range such as
  // 1..100000000 holds 28 counts.
  counts_ = instance_counts;
  std::sort(counts_.begin(), counts_.end());
  counts_.erase(std::unique(counts_.begin(), counts_.end()), counts_.end());
  for (int n : counts_)
    reliability_.push_back(cost::reliability(
        cost::reliability_input(evaluator.model(), evaluator.hardware(), evaluator.stack(), evaluator.workload(), n, failures)));
}

const cost::ReliabilityResult& Scorer::reliability(int instances) const {
  const auto it = std::lower_bound(counts_.begin(), counts_.end(), instances);
  return reliability_[std::size_t(it - counts_.begin())];
}

Score Scorer::score(const cost::Estimate& e, int instances) const {
  Score s;
  s.utilisation = reliability(instances).utilisation;
  const cost::TrainingTime t =
      cost::training_time(tokens_to_train_, e.tokens_per_s, instances, usd_per_instance_hour_, s.utilisation);
  s.time_to_train_s = t.wall_s;
  s.cost_to_train_usd = t.cost_usd;
  s.tokens_per_usd = cost::tokens_per_usd(e.tokens_per_s, instances, usd_per_instance_hour_);
  switch (objective_) {
    case Objective::throughput: s.objective = e.tokens_per_s; s.value = s.objective; break;
    case Objective::tokens_per_dollar: s.objective = s.tokens_per_usd; s.value = s.objective; break;
    case Objective::time_to_train: s.objective = s.time_to_train_s; s.value = -s.objective; break;
    case Objective::cost_to_train: s.objective = s.cost_to_train_usd; s.value = -s.objective; break;
  }
  if (!(s.value == s.value)) s.value = -std::numeric_limits<double>::infinity();  // NaN must not break the order
  return s;
}

}  // namespace trainplan::search
