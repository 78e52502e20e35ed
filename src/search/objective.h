// Objective: what "best" means for a search, and the per-plan score that ranks
// it (larger is better). Figures come from the Estimate, cost/train_time.h and
// one price; the utilisation with failures is set up once per instance count,
// so scoring a plan allocates nothing. Budget and deadline are hard limits.
#pragma once
#include <string_view>
#include <vector>

#include "cost/evaluate.h"
#include "cost/train_time.h"

namespace trainplan::search {

enum class Objective { throughput, tokens_per_dollar, time_to_train, cost_to_train };

const char* to_string(Objective objective);
bool parse_objective(std::string_view text, Objective& out);

struct Score {
  double value = 0;           // larger is better
  double objective = 0;       // the figure in its own unit (tokens/s, tokens/USD, s, USD)
  double time_to_train_s = 0; // wall time with failures
  double cost_to_train_usd = 0;
  double tokens_per_usd = 0;
  double utilisation = 1;
};

class Scorer {
 public:
  // Computes the reliability of every instance count the space holds (throws
  // spec::SpecError for a bad failure setting, as cost::reliability does).
  Scorer(const cost::Evaluator& evaluator, const std::vector<int>& instance_counts, double usd_per_instance_hour,
         Objective objective, const cost::FailureSettings& failures, double budget_usd = 0, double deadline_s = 0);

  Score score(const cost::Estimate& estimate, int instances) const;
  // True when the plan meets the budget and deadline (0 means no limit).
  bool within_budget(const Score& s) const { return budget_usd_ <= 0 || s.cost_to_train_usd <= budget_usd_; }
  bool within_deadline(const Score& s) const { return deadline_s_ <= 0 || s.time_to_train_s <= deadline_s_; }
  // For a count of the space (instance_counts given to the constructor).
  const cost::ReliabilityResult& reliability(int instances) const;
  Objective objective() const { return objective_; }
  double usd_per_instance_hour() const { return usd_per_instance_hour_; }

 private:
  double tokens_to_train_;
  double usd_per_instance_hour_;
  Objective objective_;
  double budget_usd_, deadline_s_;
  std::vector<int> counts_;                           // ascending
  std::vector<cost::ReliabilityResult> reliability_;  // one per count
};

}  // namespace trainplan::search
