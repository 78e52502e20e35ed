#include "search/ranker.h"

#include <algorithm>
#include <atomic>
#include <system_error>
#include <thread>

namespace trainplan::search {
namespace {

struct Entry {
  double value;
  std::uint64_t index;
};
// Total order: higher score first, then lower index. "better(a, b)": a ranks above b.
inline bool better(double va, std::uint64_t ia, double vb, std::uint64_t ib) {
  return va > vb || (va == vb && ia < ib);
}
// Heap with the worst kept entry on top.
struct WorstOnTop {
  bool operator()(const Entry& a, const Entry& b) const { return better(a.value, a.index, b.value, b.index); }
};

constexpr std::uint64_t chunk_plans = 2048;

bool marginal(const cost::Evaluation& ev, const SearchOptions& options) {
  return options.memory_band && cost::fit_verdict(ev.estimate.memory.total_bytes, ev.estimate.memory.capacity_bytes,
                                                  *options.memory_band) == cost::FitVerdict::marginal;
}

// The index-th plan, evaluated. Under full recompute on a stack with the block
// method, the fewest first layers of each chunk whose recompute lets the plan
// fit (memory falls as layers are added, time rises), found by bisection; the
// plan recomputing every layer where none of 1 .. chunk - 1 fits, or where the
// plan fits without recompute (its own index, faster than any of them).
cost::Evaluation evaluate_at(const cost::Evaluator& evaluator, const PlanSpace& space, std::uint64_t index,
                             const SearchOptions& options, cost::PipelineMethod method = cost::PipelineMethod::closed_form) {
  spec::Plan plan = space.at(index);
  const cost::Evaluation every_layer = evaluator.evaluate(plan, method);
  const auto fits = [&](const cost::Evaluation& ev) { return ev.ok() && !marginal(ev, options); };
  if (!space.tries_block_recompute() || plan.recompute != spec::Recompute::full || !fits(every_layer))
    return every_layer;
  int fit = int(space.chunk_layers(plan)) - 1;  // the most layers short of every one
  if (fit < 1) return every_layer;
  const auto with_layers = [&](int layers) {
    plan.recompute_layers = layers;
    return evaluator.evaluate(plan, method);
  };
  cost::Evaluation best = with_layers(fit);
  if (!fits(best)) return every_layer;
  if (cost::Evaluation one = with_layers(1); fits(one)) {
    spec::Plan bare = plan;
    bare.recompute = spec::Recompute::none;
    bare.recompute_layers = 0;
    return fits(evaluator.evaluate(bare, method)) ? every_layer : one;
  }
  int fail = 1;
  while (fit - fail > 1) {
    const int mid = fail + (fit - fail) / 2;
    cost::Evaluation ev = with_layers(mid);
    if (fits(ev)) fit = mid, best = std::move(ev);
    else fail = mid;
  }
  return best;
}

}  // namespace

SearchResult run_search(const cost::Evaluator& evaluator, const PlanSpace& space, const Scorer& scorer,
                        const SearchOptions& options) {
  SearchResult result;
  double reference_value = 0;
  if (options.reference) {
    const cost::Evaluation ev = evaluator.evaluate(*options.reference);
    result.reference = ev;
    if (ev.ok() && !marginal(ev, options)) {
      const Score s = scorer.score(ev.estimate, ev.plan.instances);
      if (scorer.within_budget(s) && scorer.within_deadline(s)) {
        result.reference_score = s;
        reference_value = s.value;
      }
    }
  }
  const bool count_rank = result.reference_score.has_value();

  const int threads = std::max(1, options.threads > 0 ? options.threads : int(std::thread::hardware_concurrency()));
  const std::size_t top_k = std::size_t(std::max(0, options.top_k));
  const std::size_t k = top_k == 0 ? 0 : std::max(top_k, std::size_t(std::max(0, options.dag_pool)));
  const std::uint64_t total = space.size();
  std::atomic<std::uint64_t> next{0};
  std::vector<std::vector<Entry>> heaps(static_cast<std::size_t>(threads));
  std::vector<DropStats> stats(static_cast<std::size_t>(threads));
  std::vector<std::int64_t> ahead(static_cast<std::size_t>(threads), 0);

  auto work = [&](int t) {
    std::vector<Entry>& heap = heaps[std::size_t(t)];
    heap.reserve(k + 1);
    DropStats& st = stats[std::size_t(t)];
    std::int64_t better_than_reference = 0;
    for (;;) {
      const std::uint64_t begin = next.fetch_add(chunk_plans, std::memory_order_relaxed);
      if (begin >= total) break;
      const std::uint64_t end = std::min(total, begin + chunk_plans);
      for (std::uint64_t i = begin; i < end; ++i) {
        const cost::Evaluation ev = evaluate_at(evaluator, space, i, options);
        const spec::Plan& plan = ev.plan;
        ++st.considered;
        if (!ev.ok()) {
          ++st.by_problem[std::size_t(ev.problem)];
          continue;
        }
        if (marginal(ev, options)) {
          ++st.marginal_memory;
          continue;
        }
        const Score s = scorer.score(ev.estimate, plan.instances);
        if (!scorer.within_budget(s)) {
          ++st.over_budget;
          continue;
        }
        if (!scorer.within_deadline(s)) {
          ++st.past_deadline;
          continue;
        }
        if (options.refusal && !options.refusal(plan).empty()) {
          ++st.not_launchable;
          continue;
        }
        ++st.feasible;
        if (count_rank && s.value > reference_value) ++better_than_reference;
        if (k == 0) continue;
        if (heap.size() < k) {
          heap.push_back({s.value, i});
          std::push_heap(heap.begin(), heap.end(), WorstOnTop{});
        } else if (better(s.value, i, heap.front().value, heap.front().index)) {
          std::pop_heap(heap.begin(), heap.end(), WorstOnTop{});
          heap.back() = {s.value, i};
          std::push_heap(heap.begin(), heap.end(), WorstOnTop{});
        }
      }
      if (options.on_progress) options.on_progress(std::int64_t(end - begin));
    }
    ahead[std::size_t(t)] = better_than_reference;
  };
  if (threads == 1) {
    work(0);
  } else {
    // Work is handed out in chunks from one counter, so a thread the system
    // cannot start (an address-space or process limit) loses nothing: this
    // thread takes its slot and drains what is left.
    std::vector<std::thread> pool;
    int started = 0;
    try {
      for (; started < threads; ++started) pool.emplace_back(work, started);
    } catch (const std::system_error&) {
      work(started);
    }
    for (auto& th : pool) th.join();
  }

  std::vector<Entry> merged;
  for (int t = 0; t < threads; ++t) {
    result.drops += stats[std::size_t(t)];
    result.reference_rank += ahead[std::size_t(t)];
    merged.insert(merged.end(), heaps[std::size_t(t)].begin(), heaps[std::size_t(t)].end());
  }
  if (count_rank) result.reference_rank += 1;
  std::sort(merged.begin(), merged.end(),
            [](const Entry& a, const Entry& b) { return better(a.value, a.index, b.value, b.index); });
  if (merged.size() > k) merged.resize(k);

  for (const Entry& e : merged) {
    RankedPlan r;
    r.index = e.index;
    r.evaluation = evaluate_at(evaluator, space, e.index, options);
    r.score = scorer.score(r.evaluation.estimate, r.evaluation.plan.instances);
    const cost::Evaluation dag = evaluator.evaluate(r.evaluation.plan, cost::PipelineMethod::dag);
    r.dag_estimate = dag.estimate;
    r.dag_score = scorer.score(dag.estimate, dag.plan.instances);
    result.top.push_back(r);
  }
  std::stable_sort(result.top.begin(), result.top.end(), [](const RankedPlan& a, const RankedPlan& b) {
    return better(a.dag_score.value, a.index, b.dag_score.value, b.index);
  });
  if (result.top.size() > top_k) result.top.resize(top_k);
  return result;
}

}  // namespace trainplan::search
