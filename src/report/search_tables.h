// The tables `search` prints: its best plans ranked (with the memory fit and
// ties inside the held-out ranking band where bands are known), a reference
// plan's rank, and where the leader's step time goes against the reference's.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "cost/estimate.h"
#include "report/table.h"
#include "search/objective.h"
#include "search/ranker.h"
#include "spec/error_bands.h"

namespace trainplan::report {

// Per listed plan, as app judges them against the held-out bands (empty without bands).
struct PlanVerdicts {
  std::vector<std::string> memory_fit;  // fits / marginal / does not fit
  std::vector<bool> tied_with_leader;
};
Table top_table(const search::SearchResult& result, const std::string& title, search::Objective objective,
                const std::string& price_kind, const std::optional<spec::ErrorBands>& bands,
                const PlanVerdicts& verdicts);
// The reference plan's rank among the feasible plans on `hardware`, or why it is
// not feasible (`refusal`, used when it has no score or the search no leader).
Table reference_table(const search::SearchResult& result, search::Objective objective, const std::string& hardware,
                      const std::string& refusal);
// Where the leader's step time goes against the reference's: why they differ.
Table why_table(const cost::Estimate& leader, const cost::Estimate& reference, const std::string& title);

}  // namespace trainplan::report
