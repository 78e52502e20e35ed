// The parallel streaming top-K search: threads take ranges of a PlanSpace,
// evaluate each plan (closed-form pipeline), keep a bounded heap of the K best,
// and count what they drop and why; heaps merge under a total order (score,
// then space index), so the result is identical for any thread count. The
// dag_pool best are then re-evaluated with the pipeline DAG, re-ranked, and the
// top K kept.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "cost/evaluate.h"
#include "cost/uncertainty.h"
#include "search/drop_stats.h"
#include "search/objective.h"
#include "search/plan_space.h"

namespace trainplan::search {

struct RankedPlan {
  std::uint64_t index = 0;  // position in the PlanSpace: the tie-break key
  cost::Evaluation evaluation;
  Score score;               // from the closed-form pipeline, what the ranking used
  Score dag_score;           // after re-evaluation with the pipeline DAG
  cost::Estimate dag_estimate;
};

struct SearchOptions {
  int top_k = 10;
  // How many closed-form leaders are re-timed with the pipeline DAG before the
  // top_k are chosen: the closed form can sit ~11% below the DAG on interleaved
  // schedules (pipeline_closed_form.cpp), so a short list could miss the true best.
  int dag_pool = 256;
  int threads = 0;  // 0: every hardware thread
  // A plan whose rank to report (e.g. a published layout); counted while streaming.
  std::optional<spec::Plan> reference;
  // When set, a plan must fit at this held-out memory band's upper end as
  // well (cost::fit_verdict): marginal plans are dropped and counted.
  std::optional<spec::ErrorBand> memory_band;
  // When set, a feasible plan for which it returns a reason (a launcher that
  // cannot run it, for --emit) is dropped and counted. Called from worker threads.
  std::function<std::string(const spec::Plan&)> refusal;
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

}  // namespace trainplan::search
