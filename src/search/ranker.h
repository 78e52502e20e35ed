// The parallel streaming top-K search: threads take ranges of a PlanSpace,
// evaluate each plan (closed-form pipeline), keep a bounded heap of the K best,
// and count what they drop and why; heaps merge under a total order (score,
// then space index), so the result is identical for any thread count. The K
// winners are then re-evaluated with the pipeline DAG and re-ranked.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "cost/evaluate.h"
#include "search/drop_stats.h"
#include "search/objective.h"
#include "search/plan_space.h"

namespace tp::search {

struct RankedPlan {
  std::uint64_t index = 0;  // position in the PlanSpace: the tie-break key
  cost::Evaluation evaluation;
  Score score;               // from the closed-form pipeline, what the ranking used
  Score dag_score;           // after re-evaluation with the pipeline DAG
  cost::Estimate dag_estimate;
};

struct SearchOptions {
  int top_k = 10;
  int threads = 0;  // 0: every hardware thread
  // A plan whose rank to report (e.g. a published layout); counted while streaming.
  std::optional<spec::Plan> reference;
  // Called from worker threads with the number of plans just finished.
  std::function<void(std::int64_t)> on_progress;
};

struct SearchResult {
  std::vector<RankedPlan> top;  // best first, by DAG score then index; at most top_k
  DropStats drops;
  std::optional<cost::Evaluation> reference;   // the reference plan, evaluated
  std::optional<Score> reference_score;        // absent when it is infeasible
  std::int64_t reference_rank = 0;             // 1 + feasible plans scoring strictly better (closed form)
};

SearchResult run_search(const cost::Evaluator& evaluator, const PlanSpace& space, const Scorer& scorer,
                        const SearchOptions& options);

}  // namespace tp::search
