#include "validate/measured_run.h"

#include <algorithm>
#include <filesystem>

#include "spec/error.h"
#include "spec/json_reader.h"
#include "spec/load.h"

namespace trainplan::validate {
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

// A whole number from lo to hi: never cast from a double or wrapped into an int.
int whole(const json& v, long long lo, long long hi, const std::string& file, const std::string& where) {
  const bool fits = v.is_number_unsigned() ? v.get<unsigned long long>() <= static_cast<unsigned long long>(hi)
                                           : v.is_number_integer() && v.get<long long>() <= hi;
  if (!fits || v.get<long long>() < lo)
    throw spec::SpecError(file, where, "an integer from " + std::to_string(lo) + " to " + std::to_string(hi) +
                                           ", got " + v.dump());
  return int(v.get<long long>());
}

constexpr long long kIntMax = 2147483647;

int need_whole(const json& j, const char* key, long long lo, long long hi, const std::string& file,
               const std::string& path) {
  return whole(need(j, key, file, path), lo, hi, file, path + "." + key);
}

int optional_int(const json& j, const char* key, int fallback, long long lo, long long hi, const std::string& file,
                 const std::string& path) {
  if (!j.contains(key)) return fallback;
  return whole(j.at(key), lo, hi, file, path + "." + key);
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
// `where` prefixes the JSON paths in errors ("" for the file's own objects,
// "runs[3]." for a row's merged ones).
void read_workload_and_plan(const json& j, const std::string& file, spec::Workload& workload, spec::Plan& plan,
                            const std::string& where = "") {
  const std::string wp = where + "workload", pp = where + "plan";
  const json& w = need(j, "workload", file, "");
  if (!w.is_object()) throw spec::SpecError(file, wp, "an object");
  spec::check_known_keys(w, file, wp, {"seq_len", "global_batch", "precision", "document_tokens"});
  workload.seq_len = need_whole(w, "seq_len", 1, kIntMax, file, wp);
  workload.document_tokens = optional_int(w, "document_tokens", 0, 1, workload.seq_len, file, wp);
  const std::string precision = need_string(w, "precision", file, wp);
  if (!spec::parse_precision(precision, workload.precision))
    throw spec::SpecError(file, wp + ".precision", "mixed-bf16, bf16-sr, fp32, fp8 or fp32-bf16-matmul");
  const json& p = need(j, "plan", file, "");
  if (!p.is_object()) throw spec::SpecError(file, pp, "an object");
  spec::check_known_keys(p, file, pp, {"tp", "pp", "virtual_stages", "sp", "uneven_stages", "edge_layer_slots", "micro_batch", "grad_accum",
                                       "zero", "recompute", "overlap_dp_comm", "overlap_tp_comm", "cp", "ep", "etp"});
  plan.tp = optional_int(p, "tp", 1, 1, kIntMax, file, pp);
  plan.pp = optional_int(p, "pp", 1, 1, spec::kMaxPipelineStages, file, pp);
  plan.virtual_stages = optional_int(p, "virtual_stages", 1, 1, spec::kMaxVirtualStages, file, pp);
  plan.sp = optional_bool(p, "sp", false, file, pp);
  plan.cp = optional_int(p, "cp", 1, 1, kIntMax, file, pp);
  plan.ep = optional_int(p, "ep", 1, 1, kIntMax, file, pp);
  plan.etp = optional_int(p, "etp", 0, 1, kIntMax, file, pp);  // absent: TP's degree
  plan.uneven_stages = optional_bool(p, "uneven_stages", false, file, pp);
  plan.edge_layer_slots = optional_bool(p, "edge_layer_slots", false, file, pp);
  plan.micro_batch = optional_int(p, "micro_batch", 1, 1, kIntMax, file, pp);
  plan.zero = optional_int(p, "zero", 0, 0, 3, file, pp);
  plan.overlap_dp_comm = optional_bool(p, "overlap_dp_comm", true, file, pp);
  plan.overlap_tp_comm = optional_bool(p, "overlap_tp_comm", false, file, pp);
  if (p.contains("recompute") &&
      (!p.at("recompute").is_string() || !spec::parse_recompute(p.at("recompute").get<std::string>(), plan.recompute)))
    throw spec::SpecError(file, pp + ".recompute", "none, selective or full");
}

// The one figure a row states, or none for a memory-only or out-of-memory row.
void read_figure(const json& row, const std::string& file, const std::string& path, MeasuredRun& run) {
  static const std::pair<const char*, MeasuredKind> keys[] = {
      {"measured_seqs_per_s", MeasuredKind::seqs_per_s},
      {"measured_tokens_per_s_per_device", MeasuredKind::tokens_per_s_per_device},
      {"measured_step_s", MeasuredKind::step_s},
      {"measured_model_tflops_per_device", MeasuredKind::model_tflops_per_device}};
  for (const auto& [key, kind] : keys) {
    if (!row.contains(key)) continue;
    if (run.kind != MeasuredKind::none)
      throw spec::SpecError(file, path, "exactly one measured_* figure per row; it has more");
    run.kind = kind;
    run.measured_value = need_positive(row, key, file, path);
  }
}

std::optional<MeasuredMemory> read_memory(const json& row, const std::string& file, const std::string& path) {
  if (!row.contains("memory")) return std::nullopt;
  const json& m = row.at("memory");
  const std::string where = path + ".memory";
  spec::check_known_keys(m, file, where, {"gib", "gb", "what", "source", "stage"});
  MeasuredMemory mem;
  const bool gib = m.is_object() && m.contains("gib"), gb = m.is_object() && m.contains("gb");
  if (gib == gb) throw spec::SpecError(file, where, "exactly one of gib or gb");
  mem.bytes = gib ? need_positive(m, "gib", file, where) * 1073741824.0 : need_positive(m, "gb", file, where) * 1e9;
  const std::string what = need_string(m, "what", file, where);
  if (what == "peak-allocated") mem.counter = MemoryCounter::peak_allocated;
  else if (what == "peak-active") mem.counter = MemoryCounter::peak_active;
  else if (what == "peak-reserved") mem.counter = MemoryCounter::peak_reserved;
  else if (what == "nvidia-smi") mem.counter = MemoryCounter::nvidia_smi;
  else throw spec::SpecError(file, where + ".what", "peak-allocated, peak-active, peak-reserved or nvidia-smi");
  mem.source = need_string(m, "source", file, where);
  if (m.contains("stage")) {
    const std::string stage = need_string(m, "stage", file, where);
    if (stage == "first") mem.stage = MemoryStage::first;
    else if (stage == "last") mem.stage = MemoryStage::last;
    else if (stage != "heaviest") throw spec::SpecError(file, where + ".stage", "first, last or heaviest");
  }
  return mem;
}

// A copy of the file's object with the row's object of the same key merged over it.
json merged(const json& file_level, const json& row, const char* key, const std::string& file,
            const std::string& path) {
  json out = file_level;
  if (row.contains(key)) {
    if (!row.at(key).is_object()) throw spec::SpecError(file, path + "." + key, "an object overriding the file's");
    out.merge_patch(row.at(key));
  }
  return out;
}

}  // namespace

std::vector<MeasuredRun> measured_runs_from_json(const json& j, const std::string& file) {
  MeasuredRun base;
  spec::check_known_keys(j, file, "", {"table", "source", "source_id", "stack", "stack_version", "model", "hardware",
                                       "flops_formula", "workload", "plan", "assumptions", "runs"});
  base.table = need_string(j, "table", file, "");
  base.source_id = need_string(j, "source_id", file, "");
  base.stack = need_string(j, "stack", file, "");
  base.stack_version = need_string(j, "stack_version", file, "");
  base.hardware = need_string(j, "hardware", file, "");
  if (j.contains("flops_formula")) base.flops_formula = need_string(j, "flops_formula", file, "");
  {  // the file's own workload and plan, named as such when they are bad
    spec::Workload w;
    spec::Plan p;
    read_workload_and_plan(j, file, w, p);
  }
  if (!base.flops_formula.empty() && base.flops_formula != "megatron-2021" && base.flops_formula != "megatron-core-2024")
    throw spec::SpecError(file, "flops_formula", "megatron-2021 or megatron-core-2024, got \"" + base.flops_formula + "\"");

  const json& runs = need(j, "runs", file, "");
  if (!runs.is_array() || runs.empty()) throw spec::SpecError(file, "runs", "a non-empty array");
  const std::string stem = std::filesystem::path(file).stem().string();
  std::vector<MeasuredRun> out;
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string path = "runs[" + std::to_string(i) + "]";
    const json& row = runs[i];
    if (!row.is_object()) throw spec::SpecError(file, path, "an object");
    // published_step_s_not_used: a published figure kept for the record but left out (the file says why).
    spec::check_known_keys(row, file, path, {"instances", "id", "source", "model", "plan", "workload", "memory",
                                             "outcome", "measured_seqs_per_s", "measured_tokens_per_s_per_device",
                                             "measured_step_s", "measured_model_tflops_per_device",
                                             "published_step_s_not_used", "left_out"});
    MeasuredRun run = base;
    run.file = file;
    run.model = row.contains("model") ? need_string(row, "model", file, path) : need_string(j, "model", file, "");
    const json top = {{"workload", merged(j.at("workload"), row, "workload", file, path)},
                      {"plan", merged(j.at("plan"), row, "plan", file, path)}};
    // A bad value in the row's own override is named under the row.
    read_workload_and_plan(top, file, run.workload, run.plan,
                           row.contains("plan") || row.contains("workload") ? path + "." : std::string());
    const json& w = top.at("workload");
    const bool fixed_batch = w.contains("global_batch");
    // The global batch is either fixed by the workload or per replica (micro-batch x accumulation).
    const int grad_accum = optional_int(top.at("plan"), "grad_accum", 0, 1, kIntMax, file, "plan");
    if (fixed_batch == (grad_accum > 0))
      throw spec::SpecError(file, path + " workload.global_batch / plan.grad_accum",
                            "exactly one of a fixed global batch or a per-replica gradient accumulation");
    run.plan.instances = need_whole(row, "instances", 1, kIntMax, file, path);
    run.source = need_string(row, "source", file, path);
    if (row.contains("left_out")) {
      run.left_out = need_string(row, "left_out", file, path);
      if (run.left_out.empty()) throw spec::SpecError(file, path + ".left_out", "the reason the row is left out");
    }
    read_figure(row, file, path, run);
    run.memory = read_memory(row, file, path);
    const std::string outcome = row.contains("outcome") ? need_string(row, "outcome", file, path) : "ran";
    if (outcome != "ran" && outcome != "out-of-memory")
      throw spec::SpecError(file, path + ".outcome", "ran or out-of-memory");
    run.out_of_memory = outcome == "out-of-memory";
    if (run.out_of_memory && run.kind != MeasuredKind::none)
      throw spec::SpecError(file, path, "no measured figure on an out-of-memory row");
    if (!run.out_of_memory && run.kind == MeasuredKind::none && !run.memory)
      throw spec::SpecError(file, path, "a measured_* figure or a memory object (or outcome out-of-memory)");
    if (run.kind == MeasuredKind::model_tflops_per_device && run.flops_formula.empty())
      throw spec::SpecError(file, "flops_formula", "the source's FLOP formula for measured_model_tflops_per_device");
    if (fixed_batch) {
      run.workload.global_batch_seqs = need_whole(w, "global_batch", 1, kIntMax, file, "workload");
    } else {
      // The global batch needs DP, known once the hardware is loaded (predictor.cpp).
      run.plan.grad_accum = grad_accum;
      run.workload.global_batch_seqs = 0;
    }
    const std::string row_id = row.contains("id") ? need_string(row, "id", file, path) : std::to_string(run.plan.instances);
    run.id = stem + "#" + row_id;
    for (const MeasuredRun& earlier : out)
      if (earlier.id == run.id)
        throw spec::SpecError(file, path + ".id", "a row id unique in the file; \"" + row_id + "\" repeats");
    out.push_back(std::move(run));
  }
  return out;
}

PublishedChoice published_choice_from_json(const json& j, const std::string& file) {
  PublishedChoice c;
  c.file = file;
  c.name = need_string(j, "name", file, "");
  c.source = need_string(j, "source", file, "");
  c.model = need_string(j, "model", file, "");
  c.hardware = need_string(j, "hardware", file, "");
  c.stack = need_string(j, "stack", file, "");
  read_workload_and_plan(j, file, c.workload, c.plan);
  c.workload.global_batch_seqs = need_whole(j.at("workload"), "global_batch", 1, kIntMax, file, "workload");
  c.plan.instances = need_whole(j, "instances", 1, kIntMax, file, "");
  if (j.contains("held_fixed")) {
    const json& h = j.at("held_fixed");
    c.held_fixed_source = need_string(h, "source", file, "$.held_fixed");
    const json& fields = need(h, "value", file, "$.held_fixed");
    std::string names;
    for (const auto& [field, name] : kHeldFields) names += (names.empty() ? "" : ", ") + std::string(name);
    if (!fields.is_array() || fields.empty())
      throw spec::SpecError(file, "$.held_fixed.value", "a list of plan fields: " + names);
    for (const json& f : fields) {
      const auto known = std::find_if(std::begin(kHeldFields), std::end(kHeldFields),
                                      [&](const auto& held) { return f.is_string() && f == held.second; });
      if (known == std::end(kHeldFields))
        throw spec::SpecError(file, "$.held_fixed.value", "one of " + names + ", got " + f.dump());
      c.held_fixed.push_back(known->first);
    }
  }
  return c;
}

std::vector<PublishedChoice> load_published_choices(const std::string& dir) {
  std::vector<PublishedChoice> out;
  for (const auto& f : json_files_in(dir, "a folder of published-choice *.json files"))
    out.push_back(published_choice_from_json(spec::read_json_file(f), f));
  return out;
}

const char* to_string(HeldField field) {
  for (const auto& [held, name] : kHeldFields)
    if (held == field) return name;
  return "?";
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

}  // namespace trainplan::validate
