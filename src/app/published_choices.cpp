#include "app/published_choices.h"

#include <optional>

#include "app/search_query.h"
#include "report/plan_text.h"
#include "report/step_difference.h"
#include "spec/error.h"
#include "spec/load.h"

namespace trainplan::app {
namespace {

// The search's own defaults (throughput, on-demand price, async TP off): the
// check asks what a user running `trainplan search` would be told.
search::SearchResult search_at(const cost::Evaluator& evaluator, const validate::PublishedChoice& c,
                               const spec::HardwareSpec& hardware, search::SpaceConstraints constraints) {
  const SearchQuery defaults;
  constraints.instances = {c.plan.instances};
  constraints.overlap_tp = false;
  const search::PlanSpace space(evaluator.model(), hardware, evaluator.stack(), c.workload, constraints);
  const spec::PriceChoice price = price_of(hardware, defaults);
  const search::Scorer scorer(evaluator, space.instance_counts(), price.rate_or_nan(),
                              objective(defaults), failure_settings(defaults));
  search::SearchOptions options;
  options.top_k = 1;
  options.reference = c.plan;
  return search::run_search(evaluator, space, scorer, options);
}

}  // namespace

std::vector<ChoiceCheck> check_published_choices(const std::vector<validate::PublishedChoice>& choices,
                                                 const validate::ValidationResult& v) {
  std::vector<ChoiceCheck> out;
  for (const auto& c : choices) {
    try {
      const spec::HardwareSpec hardware = spec::load_hardware(c.hardware);
      const validate::FamilyFit* fit = nullptr;
      for (const auto& f : v.fits)
        if (f.family == hardware.family) fit = &f;
      if (!fit) continue;
      const spec::ModelSpec model = spec::load_model(c.model);
      const spec::Stack stack = spec::load_stack(c.stack);
      int own_runs = 0;
      const std::optional<spec::Calibration> own = validate::stack_fit(v, *fit, stack.name, validate::kOwnStackFitRuns, own_runs);
      const spec::Calibration& calibration = own ? *own : fit->in_sample.calibration;
      const cost::Evaluator evaluator(model, hardware, stack, calibration, c.workload);
      const search::SearchResult all = search_at(evaluator, c, hardware, {});
      search::SpaceConstraints layout;
      layout.tp = c.plan.tp;
      layout.pp = c.plan.pp;
      layout.sp = c.plan.sp;
      const search::SearchResult same_layout = search_at(evaluator, c, hardware, layout);
      ChoiceCheck check;
      check.choice = c;
      check.fitted_on = own ? std::to_string(own_runs) + " " + stack.name + " runs"
                            : fit->family + " family, " + std::to_string(fit->in_sample.fitted_on.size()) + " runs";
      check.feasible = all.drops.feasible;
      if (all.top.empty()) {
        out.push_back(check);
        continue;
      }
      const double lead = all.top.front().score.objective;
      check.leader = report::describe(all.top.front().evaluation.plan);
      if (all.reference_score) {
        check.published_rank = all.reference_rank;
        check.published_ratio = all.reference_score->objective / lead;
      }
      if (all.reference && check.published_ratio < 0.97) {
        const report::StepDifference d = report::largest_step_difference(all.top.front().evaluation.estimate.time,
                                                                         all.reference->estimate.time);
        check.cause = d.part.empty() ? std::string() : d.part + " (+" + std::to_string(int(d.seconds * 1000 + 0.5)) + " ms per step)";
      }
      if (!same_layout.top.empty()) {
        check.best_with_layout = report::describe(same_layout.top.front().evaluation.plan);
        check.layout_ratio = same_layout.top.front().score.objective / lead;
      }
      if (!c.held_fixed.empty()) {
        search::SpaceConstraints searched;
        for (const validate::HeldField field : c.held_fixed) switch (field) {
            case validate::HeldField::recompute: searched.recompute = c.plan.recompute; break;
            case validate::HeldField::micro_batch: searched.micro_batch = c.plan.micro_batch; break;
            case validate::HeldField::zero: searched.zero = c.plan.zero; break;
            case validate::HeldField::sp: searched.sp = c.plan.sp; break;
          }
        const search::SearchResult where = search_at(evaluator, c, hardware, searched);
        check.feasible_where_searched = where.drops.feasible;
        if (where.reference_score) check.rank_where_searched = where.reference_rank;
      }
      out.push_back(check);
    } catch (const spec::SpecError& e) {
      // Whatever in the choice cannot be loaded or searched is that file's error.
      throw spec::SpecError(c.file, "$ (" + c.name + ")", e.what());
    }
  }
  return out;
}

report::Table choices_table(const std::vector<ChoiceCheck>& checks) {
  report::Table t;
  t.key = "published_layouts";
  t.title = "Published best layouts against the search (in-sample fit of the choice's stack, else its family; "
            "throughput, closed-form pipeline)";
  t.columns = {{"published choice", ""},
               {"published plan", ""},
               {"rank", "", report::NumberStyle::integer},
               {"of feasible", "", report::NumberStyle::integer},
               {"published / leader", "", report::NumberStyle::percent},
               {"best with its TP / PP / SP", ""},
               {"that / leader", "", report::NumberStyle::percent},
               {"search leader", ""},
               {"published trails mainly in", ""},
               {"rank where the source searched", "", report::NumberStyle::integer},
               {"of feasible there", "", report::NumberStyle::integer},
               {"calibration fitted on", ""}};
  for (const auto& c : checks) {
    const bool held = !c.choice.held_fixed.empty();
    t.add_row({c.choice.name, report::describe(c.choice.plan), double(c.published_rank), double(c.feasible),
               c.published_ratio, c.best_with_layout, c.layout_ratio, c.leader, c.cause,
               held ? report::Cell{double(c.rank_where_searched)} : report::Cell{},
               held ? report::Cell{double(c.feasible_where_searched)} : report::Cell{}, c.fitted_on});
    if (held) {
      std::string fields;
      for (const validate::HeldField f : c.choice.held_fixed) fields += (fields.empty() ? "" : ", ") + std::string(validate::to_string(f));
      t.notes.push_back(c.choice.name + ": where the source searched = every plan keeping its " + fields +
                        " as published (" + c.choice.held_fixed_source + ")");
    }
  }
  t.notes.push_back("rank 0 and 0%: the published plan does not fit or is refused under the model; choices and their "
                    "assumptions are in data/published-choices/*.json");
  return t;
}

}  // namespace trainplan::app
