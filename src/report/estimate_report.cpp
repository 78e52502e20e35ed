#include "report/estimate_report.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include "report/figures_summary.h"
#include "report/plan_text.h"
#include "spec/calibration_origins.h"
#include "report/summary.h"

namespace trainplan::report {
namespace {

// "measured on your hardware: GEMM ceiling, GEMM shape; fitted on published runs: ...; assumed: ..."
std::string origins_line(const std::map<std::string, std::string>& origins) {
  static const std::map<std::string, std::string> names = {
      {"gemm_ceiling", "GEMM ceiling"}, {"gemm_shape", "GEMM shape"},          {"attention_factor", "attention"},
      {"memory", "memory-bound ops"},   {"collective", "collectives"},          {"step_overhead_s", "step overhead"},
      {"pipeline_microbatch_overhead_s", "pipeline hand-off"}, {"host_trace_s_per_layer", "host tracing"}};
  const std::pair<const char*, const char*> groups[] = {{"measured", "measured on your hardware"},
                                                        {"fitted", "fitted on published runs"},
                                                        {"assumed", "assumed"}};
  std::string line;
  for (const auto& [origin, words] : groups) {
    std::string parts;
    for (const std::string& part : spec::calibration_parts()) {
      const auto it = origins.find(part);
      if (it != origins.end() && it->second == origin) parts += (parts.empty() ? "" : ", ") + names.at(part);
    }
    if (!parts.empty()) line += (line.empty() ? "" : "; ") + std::string(words) + ": " + parts;
  }
  return line;
}


nlohmann::json to_json(const EstimateView& v) {
  const auto& e = v.estimate;
  const auto& t = e.time;
  const auto& m = e.memory;
  const auto& p = v.plan;
  nlohmann::json j;
  j["model"] = v.model;
  j["hardware"] = v.hardware;
  j["stack"] = v.stack;
  nlohmann::json origins = nlohmann::json::object();
  for (const std::string& part : spec::calibration_parts()) {
    const auto it = v.calibration_origins.find(part);
    origins[part] = it == v.calibration_origins.end() ? nlohmann::json(nullptr) : nlohmann::json(it->second);
  }
  j["calibration"] = {{"name", v.calibration}, {"origin", v.calibration_origin}, {"origins", origins}};
  j["assumptions"] = v.assumptions;
  j["workload"] = {{"seq_len_tokens", v.workload.seq_len},
                   {"global_batch_seqs", v.workload.global_batch_seqs},
                   {"tokens_to_train", v.workload.tokens_to_train},
                   {"precision", spec::to_string(v.workload.precision)},
                   {"expert_imbalance", v.workload.expert_imbalance},
                   {"document_tokens", v.workload.document_tokens}};
  j["plan"] = {{"instances", p.instances}, {"devices", e.devices}, {"tp", p.tp}, {"pp", p.pp}, {"dp", p.dp},
               {"cp", p.cp}, {"ep", p.ep}, {"etp", p.etp}, {"sp", p.sp}, {"virtual_stages", p.virtual_stages}, {"micro_batch_seqs", p.micro_batch},
               {"grad_accum", p.grad_accum}, {"zero", p.zero}, {"recompute", spec::to_string(p.recompute)},
               {"recompute_layers", p.recompute_layers},
               {"overlap_dp_comm", p.overlap_dp_comm}, {"overlap_tp_comm", p.overlap_tp_comm},
               {"uneven_stages", p.uneven_stages}, {"edge_layer_slots", p.edge_layer_slots}};
  j["time"] = {{"step_s", t.step_s}, {"recompute_s", t.recompute_s}, {"memory_bound_s", t.memory_bound_s},
               {"dp_comm_total_s", t.dp_comm_total_s}};
  for (const cost::StepPart& part : cost::kStepParts) j["time"][part.key] = t.*part.seconds;
  // Bytes are whole: a modelled figure's fraction of a byte says nothing.
  const auto whole = [](double bytes) { return std::llround(bytes); };
  j["memory"] = {{"peak_at_optimizer_step", m.peak_at_optimizer_step}, {"tensors_bytes", whole(m.tensors_bytes)},
                 {"reserved_bytes", whole(m.reserved_bytes)}, {"total_bytes", whole(m.total_bytes)},
                 {"capacity_bytes", whole(m.capacity_bytes)}, {"margin_bytes", whole(m.margin_bytes)},
                 {"fits", m.fits}, {"largest_component", m.largest_component()}, {"stage", m.stage},
                 {"first_stage_total_bytes", whole(m.first_stage_total_bytes)}, {"last_stage", m.last_stage},
                 {"last_stage_total_bytes", whole(m.last_stage_total_bytes)}};
  for (const cost::MemoryPart& part : cost::kMemoryParts) j["memory"][part.key] = whole(m.*part.bytes);
  j["throughput"] = {{"seqs_per_s", e.seqs_per_s}, {"tokens_per_s", e.tokens_per_s},
                     {"tokens_per_s_per_device", e.tokens_per_s_per_device}, {"mfu_fraction", e.mfu},
                     {"hfu_fraction", e.hfu}, {"model_flops_per_step", e.model_flops_per_step},
                     {"hardware_flops_per_step", e.hardware_flops_per_step}, {"time_to_train_s", e.time_to_train_s},
                     {"total_parameters", e.total_parameters}, {"active_parameters", e.active_parameters}};
  if (v.uncertainty) {
    const EstimateUncertainty& u = *v.uncertainty;
    const auto band = [](const spec::ErrorBand& b) {
      return nlohmann::json{{"runs", b.runs}, {"low", b.low}, {"median", b.median}, {"high", b.high}};
    };
    j["uncertainty"] = {{"error_bands_file", u.file},
                        {"coverage_fraction", u.coverage},
                        {"throughput_band_scope", u.throughput_scope},
                        {"throughput_band", band(u.throughput)},
                        {"memory_band", band(u.memory)},
                        {"tokens_per_s_low", u.tokens_per_s.low},
                        {"tokens_per_s_high", u.tokens_per_s.high},
                        {"step_s_low", u.step_s.low},
                        {"step_s_high", u.step_s.high},
                        {"memory_peak_low_bytes", u.memory_peak_bytes.low},
                        {"memory_peak_high_bytes", u.memory_peak_bytes.high},
                        {"memory_band_families_note", u.memory_families_note},
                        {"fit_verdict", cost::to_string(u.verdict)}};
  } else {
    j["uncertainty"] = nullptr;
  }
  j["prices"] = nlohmann::json::array();
  for (const auto& pr : v.prices)
    j["prices"].push_back({{"kind", pr.kind}, {"usd_per_instance_hour", pr.usd_per_instance_hour},
                           {"usd_per_hour", pr.usd_per_hour}, {"tokens_per_usd", pr.tokens_per_usd},
                           {"usd_per_million_tokens", pr.usd_per_million_tokens},
                           {"cost_to_train_usd", pr.cost_to_train_usd}});
  return j;
}

// Flattens nested JSON into dotted keys, for CSV.
void flatten(const nlohmann::json& j, const std::string& prefix, std::vector<std::pair<std::string, std::string>>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) flatten(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) {
      const auto& item = j[i];
      const std::string key = item.contains("kind") ? item["kind"].get<std::string>() : std::to_string(i);
      flatten(item, prefix + "." + key, out);
    }
  } else {
    out.emplace_back(prefix, j.is_string() ? j.get<std::string>() : j.dump());
  }
}

SummarySection section(const std::string& title, const std::string& unit, NumberStyle style, int decimals = 2) {
  SummarySection out;
  out.title = title;
  out.unit = unit;
  out.style = style;
  out.decimals = decimals;
  out.show_share = false;
  return out;
}

// Text and markdown: throughput first, then estimate_summary's step-time and
// memory breakdown, then money per price kind.
Summary human_summary(const EstimateView& v, const std::string& title) {
  const auto& e = v.estimate;
  Summary summary = estimate_summary(e, title);
  SummarySection rates = section("Throughput", "", NumberStyle::fixed, 1);
  rates.lines = {{"sequences/s", e.seqs_per_s}, {"tokens/s", e.tokens_per_s},
                 {"tokens/s per device", e.tokens_per_s_per_device}};
  SummarySection use = section("Share of peak FLOP/s", "", NumberStyle::percent, 1);
  use.lines = {{"MFU (model FLOPs)", e.mfu}, {"HFU (with recompute)", e.hfu}};
  if (e.active_parameters < e.total_parameters) {
    // MoE: MFU counts the FLOPs of the parameters a token runs, not all of them.
    SummarySection params = section("Parameters (MFU on active)", "", NumberStyle::engineering, 3);
    params.lines = {{"total", e.total_parameters}, {"active per token", e.active_parameters}};
    summary.sections.insert(summary.sections.begin(), params);
  }
  SummarySection train = section("Time to train " + format_human(v.workload.tokens_to_train, NumberStyle::engineering, 3, "") +
                                     " tokens (full utilisation)", "s", NumberStyle::engineering);
  train.lines = {{"time to train", e.time_to_train_s}};
  summary.sections.insert(summary.sections.begin(), {rates, use, train});
  if (!v.prices.empty()) {
    SummarySection per_usd = section("Tokens per USD", "", NumberStyle::integer);
    SummarySection per_million = section("USD per million tokens", "", NumberStyle::fixed, 3);
    SummarySection to_train = section("USD to train", "", NumberStyle::integer);
    for (const auto& p : v.prices) {
      const std::string label = p.kind + " at " + format_human(p.usd_per_instance_hour, NumberStyle::fixed, 2, "") + " USD/instance-h";
      per_usd.lines.push_back({label, p.tokens_per_usd});
      per_million.lines.push_back({label, p.usd_per_million_tokens});
      to_train.lines.push_back({label, p.cost_to_train_usd});
    }
    summary.sections.insert(summary.sections.end(), {per_usd, per_million, to_train});
  }
  summary.title += "\nplan: " + describe(v.plan, PlanText::spelled_out) + "\nstack: " + v.stack + "\ncalibration: " + v.calibration + " (" +
                   v.calibration_origin + ")";
  if (const std::string origins = origins_line(v.calibration_origins); !origins.empty())
    summary.title += "\nefficiencies " + origins;
  for (const std::string& a : v.assumptions) summary.notes.push_back("assumption: " + a);
  summary.notes.push_back(std::string(e.memory.fits ? "fits in HBM with " : "short of HBM by ") +
                          format_human(std::abs(e.memory.margin_bytes), NumberStyle::engineering, 2, "B") +
                          (e.memory.fits ? " per device to spare" : " per device"));
  if (v.uncertainty) {
    const EstimateUncertainty& u = *v.uncertainty;
    const std::string share = std::to_string(int(u.coverage * 100 + 0.5)) + "%";
    const auto bytes = [](double b) { return format_human(b, NumberStyle::engineering, 3, "B"); };
    if (e.tokens_per_s > 0 && u.throughput.runs > 0)
      summary.notes.push_back(
        "held out: for " + share + " of " + std::to_string(u.throughput.runs) + " published runs (" +
        u.throughput_scope + ") the measured throughput was within " +
        format_human(u.throughput_factor.low, NumberStyle::fixed, 2, "") + "x-" +
        format_human(u.throughput_factor.high, NumberStyle::fixed, 2, "") + "x of the prediction: " +
        format_human(u.tokens_per_s.low, NumberStyle::engineering, 3, "") + "-" +
        format_human(u.tokens_per_s.high, NumberStyle::engineering, 3, "") + " tokens/s, a step of " +
        format_human(u.step_s.low, NumberStyle::engineering, 3, "s") + "-" +
        format_human(u.step_s.high, NumberStyle::engineering, 3, "s"));
    if (u.memory.runs > 0)
      summary.notes.push_back("held out: for " + share + " of " + std::to_string(u.memory.runs) + " published runs" +
                            (u.memory_families_note.empty() ? "" : " (" + u.memory_families_note + ")") +
                            " the measured memory was within " +
                            format_human(u.memory_factor.low, NumberStyle::fixed, 2, "") +
                            "x-" +
                            format_human(u.memory_factor.high, NumberStyle::fixed, 2, "") +
                            "x of the prediction: a peak of " + bytes(u.memory_peak_bytes.low) + "-" +
                            bytes(u.memory_peak_bytes.high) + " per device");
    if (u.verdict == cost::FitVerdict::marginal)
      summary.notes.push_back("marginal fit: the prediction fits, but a peak at the band's upper end (" +
                              bytes(u.memory_peak_bytes.high) + ") would exceed the " + bytes(e.memory.capacity_bytes) +
                              " per device; leave more headroom (a smaller micro-batch, more recompute or sharding)");
  } else if (!v.uncertainty_note.empty()) {
    summary.notes.push_back(v.uncertainty_note);
  }
  if (const double cached = e.memory.cached_free_bytes(); cached > 0)
    summary.notes.push_back("the caching allocator also keeps " +
                            format_human(cached, NumberStyle::engineering, 2, "B") +
                            " of free blocks cached (its releasable reserve, and blocks freed in backward kept through "
                            "the optimizer step): nvidia-smi and a reserved counter read them; they are freed before "
                            "an allocation fails, so they do not decide the fit");
  return summary;
}

}  // namespace

nlohmann::ordered_json estimate_document(const EstimateView& v, const JsonDocument& document) {
  nlohmann::ordered_json doc = document_head(document);
  const nlohmann::json body = to_json(v);  // kept alive: items() only refers to it
  for (const auto& [key, value] : body.items()) doc[key] = value;
  return doc;
}

void render_estimate(std::ostream& out, const std::string& format, const EstimateView& v,
                     const JsonDocument& document) {
  if (format == "json") {
    out << estimate_document(v, document).dump(2) << "\n";
    return;
  }
  if (format == "csv") {
    std::vector<std::pair<std::string, std::string>> rows;
    flatten(to_json(v), "", rows);
    out << "field,value\n";
    for (const auto& [k, val] : rows) out << k << "," << (val.find(',') != std::string::npos ? "\"" + val + "\"" : val) << "\n";
    return;
  }
  const std::string title = v.model + " on " + std::to_string(v.plan.instances) + " x " + v.hardware + " (" +
                            std::to_string(v.estimate.devices) + " devices), seq " + std::to_string(v.workload.seq_len) +
                            ", global batch " + std::to_string(v.workload.global_batch_seqs) + ", " +
                            spec::to_string(v.workload.precision);
  render_summary(out, human_summary(v, title), format == "markdown" ? Format::markdown : Format::text);
}

}  // namespace trainplan::report
