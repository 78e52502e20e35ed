#include "report/estimate_report.h"

#include <cstdio>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

namespace tp::report {
namespace {

std::string fixed(double x, int decimals) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(decimals) << x;
  return s.str();
}
std::string seconds(double s) {
  if (s >= 3600 * 24) return fixed(s / 86400, 1) + " days";
  if (s >= 3600) return fixed(s / 3600, 1) + " h";
  if (s >= 1) return fixed(s, 3) + " s";
  if (s >= 1e-3) return fixed(s * 1e3, 2) + " ms";
  return fixed(s * 1e6, 1) + " us";
}
std::string gib(double bytes) { return fixed(bytes / 1073741824.0, 2) + " GiB"; }
std::string bar(double share) { return std::string(size_t(std::max(0.0, share) * 40 + 0.5), '#'); }

struct Line {
  std::string label, value;
  double share = -1;  // of the section total; < 0: none
};
struct Section {
  std::string title;
  std::vector<Line> lines;
};

std::vector<Section> sections(const EstimateView& v) {
  const auto& e = v.estimate;
  const auto& t = e.time;
  std::vector<Section> out;
  Section time{"step time", {}};
  auto share = [&](double x) { return x / t.step_s; };
  time.lines = {{"step", seconds(t.step_s), 1.0},
                {"forward compute", seconds(t.forward_compute_s), share(t.forward_compute_s)},
                {"backward compute", seconds(t.backward_compute_s - t.recompute_s), share(t.backward_compute_s - t.recompute_s)},
                {"recompute", seconds(t.recompute_s), share(t.recompute_s)},
                {"TP communication (exposed)", seconds(t.tp_comm_exposed_s), share(t.tp_comm_exposed_s)},
                {"pipeline bubble", seconds(t.pipeline_bubble_s), share(t.pipeline_bubble_s)},
                {"PP communication (exposed)", seconds(t.pp_comm_exposed_s), share(t.pp_comm_exposed_s)},
                {"DP communication (exposed)", seconds(t.dp_comm_exposed_s), share(t.dp_comm_exposed_s)},
                {"optimizer", seconds(t.optimizer_s), share(t.optimizer_s)},
                {"fixed overhead", seconds(t.overhead_s), share(t.overhead_s)},
                {"memory-bound ops (inside compute)", seconds(t.memory_bound_s), -1},
                {"DP communication before overlap", seconds(t.dp_comm_total_s), -1}};
  out.push_back(time);
  const auto& m = e.memory;
  auto mshare = [&](double x) { return x / m.capacity_bytes; };
  out.push_back({"memory per device",
                 {{"weights", gib(m.weights_bytes), mshare(m.weights_bytes)},
                  {"gradients", gib(m.gradients_bytes), mshare(m.gradients_bytes)},
                  {"optimizer state", gib(m.optimizer_bytes), mshare(m.optimizer_bytes)},
                  {"activations", gib(m.activations_bytes), mshare(m.activations_bytes)},
                  {"workspace (logits)", gib(m.workspace_bytes), mshare(m.workspace_bytes)},
                  {"total", gib(m.total_bytes), mshare(m.total_bytes)},
                  {"capacity", gib(m.capacity_bytes), -1},
                  {m.fits ? "fits, margin" : "DOES NOT FIT, short by", gib(std::abs(m.margin_bytes)), -1}}});
  out.push_back({"throughput",
                 {{"sequences/s", fixed(e.seqs_per_s, 2), -1},
                  {"tokens/s", fixed(e.tokens_per_s, 0), -1},
                  {"tokens/s per device", fixed(e.tokens_per_s_per_device, 1), -1},
                  {"MFU", fixed(e.mfu * 100, 1) + "%", -1},
                  {"HFU", fixed(e.hfu * 100, 1) + "%", -1},
                  {"time to train " + fixed(v.workload.tokens_to_train / 1e9, 1) + "B tokens", seconds(e.time_to_train_s), -1}}});
  Section money{"cost", {}};
  for (const auto& p : v.prices) {
    money.lines.push_back({p.kind + " ($" + fixed(p.usd_per_instance_hour, 2) + "/instance-h)",
                           fixed(p.tokens_per_usd, 0) + " tokens/$, $" + fixed(p.usd_per_million_tokens, 3) +
                               "/M tokens, $" + fixed(p.cost_to_train_usd, 0) + " to train",
                           -1});
  }
  if (!money.lines.empty()) out.push_back(money);
  return out;
}

std::string plan_line(const spec::Plan& p) {
  return "TP " + std::to_string(p.tp) + ", PP " + std::to_string(p.pp) + ", DP " + std::to_string(p.dp) +
         ", SP " + (p.sp ? "on" : "off") + ", virtual stages " + std::to_string(p.virtual_stages) + ", micro-batch " +
         std::to_string(p.micro_batch) + ", gradient accumulation " + std::to_string(p.grad_accum) + ", ZeRO " +
         std::to_string(p.zero) + ", recompute " + spec::to_string(p.recompute) + ", DP overlap " +
         (p.overlap_dp_comm ? "on" : "off");
}

nlohmann::json to_json(const EstimateView& v) {
  const auto& e = v.estimate;
  const auto& t = e.time;
  const auto& m = e.memory;
  const auto& p = v.plan;
  nlohmann::json j;
  j["model"] = v.model;
  j["hardware"] = v.hardware;
  j["calibration"] = {{"name", v.calibration}, {"origin", v.calibration_origin}};
  j["workload"] = {{"seq_len_tokens", v.workload.seq_len},
                   {"global_batch_seqs", v.workload.global_batch_seqs},
                   {"tokens_to_train", v.workload.tokens_to_train},
                   {"precision", spec::to_string(v.workload.precision)}};
  j["plan"] = {{"instances", p.instances}, {"devices", e.devices}, {"tp", p.tp}, {"pp", p.pp}, {"dp", p.dp},
               {"sp", p.sp}, {"virtual_stages", p.virtual_stages}, {"micro_batch_seqs", p.micro_batch},
               {"grad_accum", p.grad_accum}, {"zero", p.zero}, {"recompute", spec::to_string(p.recompute)},
               {"overlap_dp_comm", p.overlap_dp_comm}, {"overlap_tp_comm", p.overlap_tp_comm}};
  j["time"] = {{"step_s", t.step_s}, {"forward_compute_s", t.forward_compute_s},
               {"backward_compute_s", t.backward_compute_s}, {"recompute_s", t.recompute_s},
               {"memory_bound_s", t.memory_bound_s}, {"tp_comm_exposed_s", t.tp_comm_exposed_s},
               {"pipeline_bubble_s", t.pipeline_bubble_s}, {"pp_comm_exposed_s", t.pp_comm_exposed_s},
               {"dp_comm_exposed_s", t.dp_comm_exposed_s}, {"dp_comm_total_s", t.dp_comm_total_s},
               {"optimizer_s", t.optimizer_s}, {"overhead_s", t.overhead_s}};
  j["memory"] = {{"weights_bytes", m.weights_bytes}, {"gradients_bytes", m.gradients_bytes},
                 {"optimizer_bytes", m.optimizer_bytes}, {"activations_bytes", m.activations_bytes},
                 {"workspace_bytes", m.workspace_bytes}, {"total_bytes", m.total_bytes},
                 {"capacity_bytes", m.capacity_bytes}, {"margin_bytes", m.margin_bytes}, {"fits", m.fits}};
  j["throughput"] = {{"seqs_per_s", e.seqs_per_s}, {"tokens_per_s", e.tokens_per_s},
                     {"tokens_per_s_per_device", e.tokens_per_s_per_device}, {"mfu_fraction", e.mfu},
                     {"hfu_fraction", e.hfu}, {"model_flops_per_step", e.model_flops_per_step},
                     {"hardware_flops_per_step", e.hardware_flops_per_step}, {"time_to_train_s", e.time_to_train_s}};
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

}  // namespace

void render_estimate(std::ostream& out, const std::string& format, const EstimateView& v) {
  if (format == "json") {
    out << to_json(v).dump(2) << "\n";
    return;
  }
  if (format == "csv") {
    std::vector<std::pair<std::string, std::string>> rows;
    flatten(to_json(v), "", rows);
    out << "field,value\n";
    for (const auto& [k, val] : rows) out << k << "," << (val.find(',') != std::string::npos ? "\"" + val + "\"" : val) << "\n";
    return;
  }
  const bool md = format == "markdown";
  const std::string title = v.model + " on " + std::to_string(v.plan.instances) + " x " + v.hardware + " (" +
                            std::to_string(v.estimate.devices) + " devices), seq " + std::to_string(v.workload.seq_len) +
                            ", global batch " + std::to_string(v.workload.global_batch_seqs) + ", " +
                            spec::to_string(v.workload.precision);
  out << (md ? "## " : "") << title << "\n";
  out << (md ? "\n" : "") << "plan: " << plan_line(v.plan) << "\n";
  out << "calibration: " << v.calibration << " (" << v.calibration_origin << ")\n";
  for (const auto& s : sections(v)) {
    if (md) {
      out << "\n### " << s.title << "\n\n| | value | share |\n|---|---:|---:|\n";
      for (const auto& l : s.lines)
        out << "| " << l.label << " | " << l.value << " | " << (l.share >= 0 ? fixed(l.share * 100, 1) + "%" : "") << " |\n";
    } else {
      out << "\n" << s.title << "\n";
      for (const auto& l : s.lines) {
        out << "  " << std::left << std::setw(36) << l.label << std::right << std::setw(12) << l.value;
        if (l.share >= 0) out << "  " << std::setw(6) << fixed(l.share * 100, 1) << "%  " << bar(l.share);
        out << "\n";
      }
    }
  }
}

}  // namespace tp::report
