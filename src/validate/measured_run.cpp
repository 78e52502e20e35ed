#include "validate/measured_run.h"

#include <algorithm>
#include <filesystem>

#include "spec/error.h"
#include "spec/load.h"

namespace tp::validate {
namespace {

using nlohmann::json;

const json& need(const json& j, const char* key, const std::string& file, const std::string& path) {
  if (!j.is_object() || !j.contains(key)) throw spec::SpecError(file, path, std::string("a field '") + key + "'");
  return j.at(key);
}

std::string need_string(const json& j, const char* key, const std::string& file, const std::string& path) {
  const json& v = need(j, key, file, path);
  if (!v.is_string()) throw spec::SpecError(file, path + "." + key, "a string");
  return v.get<std::string>();
}

double need_positive(const json& j, const char* key, const std::string& file, const std::string& path) {
  const json& v = need(j, key, file, path);
  if (!v.is_number() || !(v.get<double>() > 0)) throw spec::SpecError(file, path + "." + key, "a positive number");
  return v.get<double>();
}

int optional_int(const json& j, const char* key, int fallback, const std::string& file, const std::string& path) {
  if (!j.contains(key)) return fallback;
  const json& v = j.at(key);
  if (!v.is_number_integer()) throw spec::SpecError(file, path + "." + key, "an integer");
  return v.get<int>();
}

bool optional_bool(const json& j, const char* key, bool fallback, const std::string& file, const std::string& path) {
  if (!j.contains(key)) return fallback;
  if (!j.at(key).is_boolean()) throw spec::SpecError(file, path + "." + key, "true or false");
  return j.at(key).get<bool>();
}

std::vector<std::string> json_files_in(const std::string& dir, const char* expected) {
  if (!std::filesystem::is_directory(dir)) throw spec::SpecError(dir, "", expected);
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

// The workload's sequence and precision, and the plan fields every file shares.
void read_workload_and_plan(const json& j, const std::string& file, spec::Workload& workload, spec::Plan& plan) {
  const json& w = need(j, "workload", file, "");
  workload.seq_len = int(need_positive(w, "seq_len", file, "workload"));
  const std::string precision = need_string(w, "precision", file, "workload");
  if (!spec::parse_precision(precision, workload.precision))
    throw spec::SpecError(file, "workload.precision", "mixed-bf16, bf16-sr or fp32");
  const json& p = need(j, "plan", file, "");
  plan.tp = optional_int(p, "tp", 1, file, "plan");
  plan.pp = optional_int(p, "pp", 1, file, "plan");
  plan.virtual_stages = optional_int(p, "virtual_stages", 1, file, "plan");
  plan.sp = optional_bool(p, "sp", false, file, "plan");
  plan.micro_batch = optional_int(p, "micro_batch", 1, file, "plan");
  plan.zero = optional_int(p, "zero", 0, file, "plan");
  plan.overlap_dp_comm = optional_bool(p, "overlap_dp_comm", true, file, "plan");
  plan.overlap_tp_comm = optional_bool(p, "overlap_tp_comm", false, file, "plan");
  if (p.contains("recompute") &&
      (!p.at("recompute").is_string() || !spec::parse_recompute(p.at("recompute").get<std::string>(), plan.recompute)))
    throw spec::SpecError(file, "plan.recompute", "none, selective or full");
}

}  // namespace

std::vector<MeasuredRun> measured_runs_from_json(const json& j, const std::string& file) {
  MeasuredRun base;
  base.table = need_string(j, "table", file, "");
  base.model = need_string(j, "model", file, "");
  base.hardware = need_string(j, "hardware", file, "");
  read_workload_and_plan(j, file, base.workload, base.plan);
  const json& w = j.at("workload");
  const json& p = j.at("plan");
  const bool fixed_batch = w.contains("global_batch");
  // The global batch is either fixed by the workload or per replica (micro-batch x accumulation).
  const int grad_accum = optional_int(p, "grad_accum", 0, file, "plan");
  if (fixed_batch == (grad_accum > 0))
    throw spec::SpecError(file, "workload.global_batch / plan.grad_accum",
                          "exactly one of a fixed global batch or a per-replica gradient accumulation");

  const json& runs = need(j, "runs", file, "");
  if (!runs.is_array() || runs.empty()) throw spec::SpecError(file, "runs", "a non-empty array");
  const std::string stem = std::filesystem::path(file).stem().string();
  std::vector<MeasuredRun> out;
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string path = "runs[" + std::to_string(i) + "]";
    MeasuredRun run = base;
    run.plan.instances = int(need_positive(runs[i], "instances", file, path));
    run.measured_seqs_per_s = need_positive(runs[i], "measured_seqs_per_s", file, path);
    run.source = need_string(runs[i], "source", file, path);
    if (fixed_batch) {
      run.workload.global_batch_seqs = int64_t(need_positive(w, "global_batch", file, "workload"));
    } else {
      // The global batch needs DP, known once the hardware is loaded (predictor.cpp).
      run.plan.grad_accum = grad_accum;
      run.workload.global_batch_seqs = 0;
    }
    run.id = stem + "#" + std::to_string(run.plan.instances);
    out.push_back(std::move(run));
  }
  return out;
}

PublishedChoice published_choice_from_json(const json& j, const std::string& file) {
  PublishedChoice c;
  c.name = need_string(j, "name", file, "");
  c.source = need_string(j, "source", file, "");
  c.model = need_string(j, "model", file, "");
  c.hardware = need_string(j, "hardware", file, "");
  read_workload_and_plan(j, file, c.workload, c.plan);
  c.workload.global_batch_seqs = int64_t(need_positive(j.at("workload"), "global_batch", file, "workload"));
  c.plan.instances = int(need_positive(j, "instances", file, ""));
  return c;
}

std::vector<PublishedChoice> load_published_choices(const std::string& dir) {
  std::vector<PublishedChoice> out;
  for (const auto& f : json_files_in(dir, "a folder of published-choice *.json files"))
    out.push_back(published_choice_from_json(spec::read_json_file(f), f));
  return out;
}

std::vector<MeasuredRun> load_measured_dir(const std::string& dir) {
  std::vector<MeasuredRun> all;
  for (const auto& f : json_files_in(dir, "a folder of measured-run *.json files")) {
    auto runs = measured_runs_from_json(spec::read_json_file(f), f);
    all.insert(all.end(), runs.begin(), runs.end());
  }
  if (all.empty()) throw spec::SpecError(dir, "", "at least one measured-run *.json file");
  return all;
}

}  // namespace tp::validate
