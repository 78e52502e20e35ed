#include "report/plan_text.h"

#include <algorithm>
#include <sstream>

#include "cost/plan_check.h"

namespace trainplan::report {

std::string describe(const spec::Plan& p, PlanText style) {
  if (style == PlanText::spelled_out)
    return "TP " + std::to_string(p.tp) + ", PP " + std::to_string(p.pp) + ", DP " + std::to_string(p.dp) +
           (p.cp > 1 ? ", CP " + std::to_string(p.cp) : "") +
           (p.ep > 1 || p.etp != p.tp ? ", EP " + std::to_string(p.ep) + ", expert TP " + std::to_string(p.etp) : "") +
           ", SP " + (p.sp ? "on" : "off") + ", virtual stages " + std::to_string(p.virtual_stages) +
           (p.uneven_stages ? " (uneven stages)" : "") + (spec::edge_slots_active(p) ? " (edge layer slots)" : "") +
           ", micro-batch " + std::to_string(p.micro_batch) + ", gradient accumulation " + std::to_string(p.grad_accum) +
           ", ZeRO " + std::to_string(p.zero) + ", recompute " + spec::recompute_text(p) + ", DP overlap " +
           (p.overlap_dp_comm ? "on" : "off");
  std::ostringstream s;
  s << "TP " << p.tp << " / PP " << p.pp << (p.sp ? " / SP" : "") << (p.virtual_stages > 1 ? " / v" + std::to_string(p.virtual_stages) : "")
    << (p.cp > 1 ? " / CP " + std::to_string(p.cp) : "") << (p.ep > 1 ? " / EP " + std::to_string(p.ep) : "")
    << (p.etp > 0 && p.etp != p.tp ? " / ETP " + std::to_string(p.etp) : "")
    << " / mb " << p.micro_batch << " / ZeRO " << p.zero << " / " << spec::recompute_text(p, false)
    << (p.overlap_tp_comm ? " / async TP" : "") << (p.overlap_dp_comm ? "" : " / no DP overlap");
  return s.str();
}

Table drop_table(const search::DropStats& d, const std::string& title) {
  Table t;
  t.key = "plan_outcomes";
  t.title = title;
  t.columns = {{"outcome", ""}, {"plans", "", NumberStyle::integer}, {"share", "", NumberStyle::percent, 1}};
  const double n = double(std::max<std::int64_t>(1, d.considered));
  t.add_row({std::string("considered"), double(d.considered), 1.0});
  t.add_row({std::string("kept (fit, within limits)"), double(d.feasible), d.feasible / n});
  for (int i = 1; i < cost::plan_problem_count; ++i)
    if (d.by_problem[std::size_t(i)] > 0)
      t.add_row({std::string("dropped: ") + cost::to_string(cost::PlanProblem(i)), double(d.by_problem[std::size_t(i)]),
                 d.by_problem[std::size_t(i)] / n});
  if (d.over_budget) t.add_row({std::string("dropped: over budget"), double(d.over_budget), d.over_budget / n});
  if (d.past_deadline) t.add_row({std::string("dropped: past deadline"), double(d.past_deadline), d.past_deadline / n});
  if (d.marginal_memory)
    t.add_row({std::string("dropped: fits only as predicted (--strict-memory)"), double(d.marginal_memory),
               d.marginal_memory / n});
  if (d.not_launchable)
    t.add_row({std::string("dropped: the --emit launcher cannot run it"), double(d.not_launchable), d.not_launchable / n});
  return t;
}

}  // namespace trainplan::report
