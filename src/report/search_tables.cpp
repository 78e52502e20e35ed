#include "report/search_tables.h"

#include <cstdio>

#include "report/number_format.h"
#include "report/plan_text.h"
#include "report/step_difference.h"

namespace trainplan::report {

Table top_table(const search::SearchResult& r, const std::string& title, search::Objective objective,
                const std::string& price_kind, const std::optional<spec::ErrorBands>& bands,
                const PlanVerdicts& verdicts) {
  Table t;
  t.key = "best_plans";
  t.title = title;
  t.columns = {{"rank", "", NumberStyle::integer}, {"instances", "", NumberStyle::integer},
               {"TP", "", NumberStyle::integer}, {"PP", "", NumberStyle::integer}, {"DP", "", NumberStyle::integer},
               {"CP", "", NumberStyle::integer}, {"EP", "", NumberStyle::integer}, {"SP", ""}, {"virtual stages", "", NumberStyle::integer}, {"micro-batch", "", NumberStyle::integer},
               {"grad accum", "", NumberStyle::integer}, {"ZeRO", "", NumberStyle::integer}, {"recompute", ""},
               {"overlap", ""}, {"step time", "s", NumberStyle::engineering}, {"throughput", "tokens/s", NumberStyle::integer},
               {"MFU", "", NumberStyle::percent, 1}, {"memory", "B", NumberStyle::engineering},
               {"memory fit", ""}, {"tokens per USD, " + price_kind, "", NumberStyle::integer},
               {"utilisation", "", NumberStyle::percent, 2}, {"days to train", "", NumberStyle::fixed, 2},
               {"USD to train, " + price_kind, "", NumberStyle::integer}, {"vs #1", "", NumberStyle::fixed, 3},
               {"tied", ""}};
  // Machine keys that stay put whatever the price kind the headers name.
  const char* keys[] = {"step_time_s", "tokens_per_s", "mfu", "memory_bytes", "memory_fit", "tokens_per_usd",
                        "utilisation", "time_to_train_days", "cost_to_train_usd", "vs_leader", "tied_with_leader"};
  for (std::size_t i = 0; i < std::size(keys); ++i) t.columns[14 + i].key = keys[i];
  // A person's view: the plan's degrees (CP, EP and virtual stages where a
  // listed plan uses them), throughput, MFU, memory and its fit, days and cost.
  bool cp = false, ep = false, virtual_stages = false, one_count = true;
  for (const auto& p : r.top) {
    one_count = one_count && p.evaluation.plan.instances == r.top.front().evaluation.plan.instances;
    cp = cp || p.evaluation.plan.cp > 1;
    ep = ep || p.evaluation.plan.ep > 1;
    virtual_stages = virtual_stages || p.evaluation.plan.virtual_stages > 1;
  }
  // One instance count for every plan listed: the title says it, the view drops the column.
  t.reading_view = {"rank"};
  if (!one_count) t.reading_view.push_back("instances");
  else if (!r.top.empty()) t.title += ", " + std::to_string(r.top.front().evaluation.plan.instances) + " instances";
  t.reading_view.insert(t.reading_view.end(), {"tp", "pp"});
  if (cp) t.reading_view.push_back("cp");
  if (ep) t.reading_view.push_back("ep");
  t.reading_view.insert(t.reading_view.end(), {"sp"});
  if (virtual_stages) t.reading_view.push_back("virtual_stages");
  t.reading_view.insert(t.reading_view.end(), {"micro_batch", "zero", "recompute", "tokens_per_s", "mfu", "memory_bytes",
                                               "memory_fit", "time_to_train_days", "cost_to_train_usd", "tied_with_leader"});
  const double lead = r.top.empty() ? 0 : r.top.front().dag_score.objective;
  int rank = 1;
  for (std::size_t i = 0; i < r.top.size(); ++i) {
    const search::RankedPlan& p = r.top[i];
    const spec::Plan& pl = p.evaluation.plan;
    const cost::Estimate& e = p.dag_estimate;
    std::string overlap = std::string(pl.overlap_dp_comm ? "DP" : "") + (pl.overlap_tp_comm ? (pl.overlap_dp_comm ? "+TP" : "TP") : "");
    const Cell fit = i < verdicts.memory_fit.size() ? Cell{verdicts.memory_fit[i]} : Cell{};
    const bool tie = i < verdicts.tied_with_leader.size() && verdicts.tied_with_leader[i];
    t.add_row({double(rank++), double(pl.instances), double(pl.tp), double(pl.pp), double(pl.dp), double(pl.cp),
               double(pl.ep), pl.sp, double(pl.virtual_stages), double(pl.micro_batch),
               double(pl.grad_accum), double(pl.zero), spec::recompute_text(pl, false),
               overlap.empty() ? std::string("none") : overlap, e.time.step_s, e.tokens_per_s, e.mfu,
               e.memory.total_bytes, fit, p.dag_score.tokens_per_usd, p.dag_score.utilisation,
               p.dag_score.time_to_train_s / 86400.0, p.dag_score.cost_to_train_usd, p.dag_score.objective / lead,
               std::string(tie ? "tied" : "")});
  }
  t.notes.push_back(std::string("Ranked by ") + search::to_string(objective) +
                    " (closed-form pipeline), then re-timed and re-ranked with the pipeline DAG; figures shown are the DAG's.");
  t.notes.push_back("Time and cost to train include failures and checkpoints at the utilisation shown.");
  if (bands && bands->ranking.runs > 0) {
    char width[16];
    std::snprintf(width, sizeof width, "%.0f%%", 100 * (bands->ranking.high - bands->ranking.low) / 2);
    t.notes.push_back(std::string("tied with #1: predicted within ") + width +
                      " of the leader, inside the spread of the held-out errors between runs of one published source "
                      "(data/error-bands.json, ranking); their order is not a measured difference.");
  }
  if (bands)
    t.notes.push_back("memory fit: marginal when the predicted peak fits but not at the held-out memory band's upper "
                      "end; --strict-memory drops such plans.");
  return t;
}

Table reference_table(const search::SearchResult& r, search::Objective objective, const std::string& hardware,
                      const std::string& refusal) {
  Table ref;
  ref.key = "reference_plan";
  ref.title = "Reference plan on " + hardware;
  ref.columns = {{"plan", ""}, {"rank", "", NumberStyle::integer}, {"of feasible", "", NumberStyle::integer},
                 {"objective", ""}, {"relative to leader", "", NumberStyle::percent, 1}};
  const std::string plan_text = describe(r.reference->plan) + ", " + std::to_string(r.reference->plan.instances) + " instances";
  if (r.reference_score && !r.top.empty()) {
    const double lead = r.top.front().score.objective;
    ref.add_row({plan_text, double(r.reference_rank), double(r.drops.feasible), search::to_string(objective),
                 r.reference_score->objective / lead});
    ref.notes.push_back("Rank by the closed-form pipeline among all feasible plans (1 = best); the ratio is the "
                        "reference's objective over the leader's.");
  } else {
    ref.add_row({plan_text, Cell{}, double(r.drops.feasible), search::to_string(objective), Cell{}});
    ref.notes.push_back("The reference is not feasible: " + refusal);
  }
  return ref;
}

Table why_table(const cost::Estimate& leader, const cost::Estimate& ref, const std::string& title) {
  Table t;
  t.key = "leader_against_reference";
  t.title = title;
  t.columns = {{"part", ""}, {"leader", "s", NumberStyle::engineering},
               {"reference", "s", NumberStyle::engineering}, {"difference", "s", NumberStyle::engineering}};
  auto row = [&](const char* name, double a, double b) { t.add_row({std::string(name), a, b, b - a}); };
  const auto &a = leader.time, &b = ref.time;
  for (const cost::StepPart& part : cost::kStepParts) {
    row(part.label, a.*part.seconds, b.*part.seconds);
    if (part.seconds == &cost::StepBreakdown::backward_compute_s) row("  of which recompute", a.recompute_s, b.recompute_s);
  }
  row("step", a.step_s, b.step_s);
  t.notes.push_back("Step time per optimizer step (DAG pipeline). Positive difference: the reference spends more there.");
  if (const StepDifference d = largest_step_difference(a, b); !d.part.empty())
    t.notes.push_back("The reference trails mainly in " + d.part + " (" +
                      format_human(d.seconds, NumberStyle::engineering, 3, "s") + " more per step).");
  return t;
}

}  // namespace trainplan::report
