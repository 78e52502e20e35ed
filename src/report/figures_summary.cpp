#include "report/figures_summary.h"

#include <string>

#include "report/number_format.h"

namespace trainplan::report {
namespace {

// Lines and sections are built by construction, not by assigning string
// literals: GCC 12 warns falsely (-Wrestrict) on the latter.
SummarySection make_section(std::string title, std::string unit, NumberStyle style, bool show_share,
                            std::optional<double> total) {
  SummarySection section;
  section.title = std::move(title);
  section.unit = std::move(unit);
  section.style = style;
  section.show_share = show_share;
  section.total = total;
  return section;
}

void add(SummarySection& section, const char* label, double value) {
  section.lines.push_back(SummaryLine{std::string(label), value});
}

}  // namespace

Summary estimate_summary(const cost::Estimate& e, const std::string& title) {
  SummarySection time = make_section("Where step time goes", "s", NumberStyle::engineering, true, e.time.step_s);
  for (const cost::StepPart& part : cost::kStepParts)
    if (part.listed_when_zero || e.time.*part.seconds > 0) add(time, part.label, e.time.*part.seconds);
  SummarySection memory = make_section("Memory per device (share of capacity)", "B", NumberStyle::engineering, true,
                                       e.memory.capacity_bytes);
  for (const cost::MemoryPart& part : cost::kMemoryParts) add(memory, part.label, e.memory.*part.bytes);
  add(memory, "total", e.memory.total_bytes);
  add(memory, "headroom", e.memory.margin_bytes);
  Summary summary{title, {time, memory}, {}};
  if (e.memory.peak_at_optimizer_step)
    summary.notes.push_back("memory peaks after backward, at the gradient reduction or the optimizer step (the activations are freed by then)");
  const cost::MemoryBreakdown& mem = e.memory;
  const std::string stage = mem.last_stage > 0 ? " on pipeline stage " + std::to_string(mem.stage) : "";
  if (mem.last_stage > 0)
    summary.notes.push_back("pipeline stages: first (0) " + format_human(mem.first_stage_total_bytes, NumberStyle::engineering, 3, "B") +
                            ", last (" + std::to_string(mem.last_stage) + ") " +
                            format_human(mem.last_stage_total_bytes, NumberStyle::engineering, 3, "B") +
                            "; the memory above is stage " + std::to_string(mem.stage) + "'s, the heaviest");
  if (!mem.fits)
    summary.notes.push_back("does not fit: memory exceeds device capacity" + stage + "; largest component: " +
                            mem.largest_component());
  return summary;
}

Summary reliability_summary(const cost::ReliabilityResult& r, const std::string& title) {
  SummarySection share = make_section("Effective utilisation", "", NumberStyle::percent, false, {});
  add(share, "utilisation", r.utilisation);
  add(share, "checkpoint writes (of useful time)", r.checkpoint_overhead);
  add(share, "failures (of wall time)", r.failure_overhead);
  SummarySection times = make_section("Checkpoints and failures", "s", NumberStyle::engineering, false, {});
  add(times, "checkpoint interval", r.interval_s);
  add(times, "checkpoint write", r.checkpoint_write_s);
  add(times, "checkpoint load", r.checkpoint_load_s);
  add(times, "cluster MTBF", r.cluster_mtbf_s);
  add(times, "loss per failure", r.loss_per_failure_s);
  SummarySection daily = make_section("Per day", "", NumberStyle::fixed, false, {});
  add(daily, "failures", r.failures_per_day);
  add(daily, "hours lost", r.lost_hours_per_day);
  Summary summary{title, {share, times, daily}, {}};
  if (!r.can_progress) {
    summary.notes.push_back("the cluster cannot make progress: failures arrive faster than it recovers "
                            "(utilisation clamped to 0)");
  }
  return summary;
}

}  // namespace trainplan::report
