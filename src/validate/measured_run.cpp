#include "validate/measured_run.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "spec/error.h"
#include "spec/json_reader.h"
#include "spec/load.h"

namespace trainplan::validate {
namespace {

using nlohmann::json;

constexpr int kIntMax = std::numeric_limits<int>::max();

std::vector<std::string> json_files_in(const std::string& dir, const char* expected) {
  if (!std::filesystem::is_directory(dir)) throw spec::SpecError(dir, "", expected);
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

// The workload's sequence and precision, and the plan fields every file shares.
// `at` is the JSON path of the object holding them in errors ("$" for the
// file's own, "$.runs[3]" for a row's merged ones).
void read_workload_and_plan(const spec::JsonReader& r, const json& j, spec::Workload& workload, spec::Plan& plan,
                            const std::string& at = "$") {
  const std::string wp = at + ".workload", pp = at + ".plan";
  const json& w = r.object(j, at, "workload");
  r.only_keys(w, wp, {"seq_len", "global_batch", "precision", "document_tokens"});
  workload.seq_len = r.whole(w, wp, "seq_len", 1, kIntMax);
  workload.document_tokens = r.whole_or(w, wp, "document_tokens", 0, 1, workload.seq_len);
  if (!spec::parse_precision(r.string(w, wp, "precision"), workload.precision))
    r.fail(wp + ".precision", "mixed-bf16, bf16-sr, fp32, fp8 or fp32-bf16-matmul");
  const json& p = r.object(j, at, "plan");
  r.only_keys(p, pp, {"tp", "pp", "virtual_stages", "sp", "uneven_stages", "edge_layer_slots", "micro_batch", "grad_accum",
                      "zero", "recompute", "recompute_layers", "overlap_dp_comm", "overlap_tp_comm", "cp", "ep", "etp"});
  plan.tp = r.whole_or(p, pp, "tp", 1, 1, kIntMax);
  plan.pp = r.whole_or(p, pp, "pp", 1, 1, spec::kMaxPipelineStages);
  plan.virtual_stages = r.whole_or(p, pp, "virtual_stages", 1, 1, spec::kMaxVirtualStages);
  plan.sp = r.boolean_or(p, pp, "sp", false);
  plan.cp = r.whole_or(p, pp, "cp", 1, 1, kIntMax);
  plan.ep = r.whole_or(p, pp, "ep", 1, 1, kIntMax);
  plan.etp = r.whole_or(p, pp, "etp", 0, 1, kIntMax);  // absent: TP's degree
  plan.uneven_stages = r.boolean_or(p, pp, "uneven_stages", false);
  plan.edge_layer_slots = r.boolean_or(p, pp, "edge_layer_slots", false);
  plan.micro_batch = r.whole_or(p, pp, "micro_batch", 1, 1, kIntMax);
  plan.zero = r.whole_or(p, pp, "zero", 0, 0, 3);
  plan.overlap_dp_comm = r.boolean_or(p, pp, "overlap_dp_comm", true);
  plan.overlap_tp_comm = r.boolean_or(p, pp, "overlap_tp_comm", false);
  if (r.has(p, "recompute") &&
      (!p.at("recompute").is_string() || !spec::parse_recompute(p.at("recompute").get<std::string>(), plan.recompute)))
    r.fail(pp + ".recompute", "none, selective or full");
  plan.recompute_layers = r.whole_or(p, pp, "recompute_layers", 0, 1, spec::kMaxPipelineStages);
  if (plan.recompute_layers > 0 && plan.recompute != spec::Recompute::full)
    r.fail(pp + ".recompute_layers", "recompute \"full\" beside it (the layers per chunk that full recompute re-runs)");
}

// The one figure a row states, or none for a memory-only or out-of-memory row.
void read_figure(const spec::JsonReader& r, const json& row, const std::string& path, MeasuredRun& run) {
  static const std::pair<const char*, MeasuredKind> keys[] = {
      {"measured_seqs_per_s", MeasuredKind::seqs_per_s},
      {"measured_tokens_per_s_per_device", MeasuredKind::tokens_per_s_per_device},
      {"measured_step_s", MeasuredKind::step_s},
      {"measured_model_tflops_per_device", MeasuredKind::model_tflops_per_device}};
  for (const auto& [key, kind] : keys) {
    if (!r.has(row, key)) continue;
    if (run.kind != MeasuredKind::none) r.fail(path, "exactly one measured_* figure per row; it has more");
    run.kind = kind;
    // Plain: the row's own source is the figure's.
    run.measured_value = r.number(row, path, key, 0);
  }
}

std::optional<MeasuredMemory> read_memory(const spec::JsonReader& r, const json& row, const std::string& path) {
  if (!r.has(row, "memory")) return std::nullopt;
  const json& m = r.object(row, path, "memory");
  const std::string where = path + ".memory";
  r.only_keys(m, where, {"gib", "gb", "what", "source", "stage"});
  MeasuredMemory mem;
  const bool gib = r.has(m, "gib"), gb = r.has(m, "gb");
  if (gib == gb) r.fail(where, "exactly one of gib or gb");
  mem.bytes = gib ? r.number(m, where, "gib", 0) * 1073741824.0 : r.number(m, where, "gb", 0) * 1e9;
  const std::string what = r.choice(m, where, "what", {"peak-allocated", "peak-active", "peak-reserved", "nvidia-smi"});
  if (what == "peak-allocated") mem.counter = MemoryCounter::peak_allocated;
  else if (what == "peak-active") mem.counter = MemoryCounter::peak_active;
  else if (what == "peak-reserved") mem.counter = MemoryCounter::peak_reserved;
  else mem.counter = MemoryCounter::nvidia_smi;
  mem.source = r.string(m, where, "source");
  if (r.has(m, "stage")) {
    const std::string stage = r.choice(m, where, "stage", {"first", "last", "heaviest"});
    if (stage == "first") mem.stage = MemoryStage::first;
    else if (stage == "last") mem.stage = MemoryStage::last;
  }
  return mem;
}

// A copy of the file's object with the row's object of the same key merged over it.
json merged(const spec::JsonReader& r, const json& file_level, const json& row, const char* key,
            const std::string& path) {
  json out = file_level;
  if (r.has(row, key)) {
    if (!row.at(key).is_object()) r.fail(path + "." + key, "an object overriding the file's");
    out.merge_patch(row.at(key));
  }
  return out;
}

}  // namespace

std::vector<MeasuredRun> measured_runs_from_json(const json& j, const std::string& file) {
  const spec::JsonReader r(file);
  MeasuredRun base;
  r.only_keys(j, "$", {"table", "source", "source_id", "stack", "stack_version", "model", "hardware", "flops_formula",
                       "workload", "plan", "assumptions", "runs"});
  base.table = r.string(j, "$", "table");
  base.source_id = r.string(j, "$", "source_id");
  base.stack = r.string(j, "$", "stack");
  base.stack_version = r.string(j, "$", "stack_version");
  base.hardware = r.string(j, "$", "hardware");
  if (r.has(j, "flops_formula")) base.flops_formula = r.string(j, "$", "flops_formula");
  {  // the file's own workload and plan, named as such when they are bad
    spec::Workload w;
    spec::Plan p;
    read_workload_and_plan(r, j, w, p);
  }
  if (!base.flops_formula.empty() && base.flops_formula != "megatron-2021" && base.flops_formula != "megatron-core-2024")
    r.fail("$.flops_formula", "megatron-2021 or megatron-core-2024, got \"" + base.flops_formula + "\"");

  const json& runs = r.field(j, "$", "runs");
  if (!runs.is_array() || runs.empty()) r.fail("$.runs", "a non-empty array");
  const std::string stem = std::filesystem::path(file).stem().string();
  std::vector<MeasuredRun> out;
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string path = "$.runs[" + std::to_string(i) + "]";
    const json& row = runs[i];
    if (!row.is_object()) r.fail(path, "an object");
    // published_step_s_not_used: a published figure kept for the record but left out (the file says why).
    r.only_keys(row, path, {"instances", "id", "source", "model", "plan", "workload", "memory", "outcome",
                            "measured_seqs_per_s", "measured_tokens_per_s_per_device", "measured_step_s",
                            "measured_model_tflops_per_device", "published_step_s_not_used", "left_out"});
    MeasuredRun run = base;
    run.file = file;
    run.model = r.has(row, "model") ? r.string(row, path, "model") : r.string(j, "$", "model");
    const json top = {{"workload", merged(r, j.at("workload"), row, "workload", path)},
                      {"plan", merged(r, j.at("plan"), row, "plan", path)}};
    // A bad value in the row's own override is named under the row.
    const std::string at = r.has(row, "plan") || r.has(row, "workload") ? path : std::string("$");
    read_workload_and_plan(r, top, run.workload, run.plan, at);
    const json& w = top.at("workload");
    const bool fixed_batch = w.contains("global_batch");
    // The global batch is either fixed by the workload or per replica (micro-batch x accumulation).
    const int grad_accum = r.whole_or(top.at("plan"), at + ".plan", "grad_accum", 0, 1, kIntMax);
    if (fixed_batch == (grad_accum > 0))
      r.fail(path + " workload.global_batch / plan.grad_accum",
             "exactly one of a fixed global batch or a per-replica gradient accumulation");
    run.plan.instances = r.whole(row, path, "instances", 1, kIntMax);
    run.source = r.string(row, path, "source");
    if (r.has(row, "left_out")) {
      run.left_out = r.string(row, path, "left_out");
      if (run.left_out.empty()) r.fail(path + ".left_out", "the reason the row is left out");
    }
    read_figure(r, row, path, run);
    run.memory = read_memory(r, row, path);
    const std::string outcome = r.has(row, "outcome") ? r.choice(row, path, "outcome", {"ran", "out-of-memory"}) : "ran";
    run.out_of_memory = outcome == "out-of-memory";
    if (run.out_of_memory && run.kind != MeasuredKind::none) r.fail(path, "no measured figure on an out-of-memory row");
    if (!run.out_of_memory && run.kind == MeasuredKind::none && !run.memory)
      r.fail(path, "a measured_* figure or a memory object (or outcome out-of-memory)");
    if (run.kind == MeasuredKind::model_tflops_per_device && run.flops_formula.empty())
      r.fail("$.flops_formula", "the source's FLOP formula for measured_model_tflops_per_device");
    if (fixed_batch) {
      run.workload.global_batch_seqs = r.whole(w, at + ".workload", "global_batch", 1, kIntMax);
    } else {
      // The global batch needs DP, known once the hardware is loaded (predictor.cpp).
      run.plan.grad_accum = grad_accum;
      run.workload.global_batch_seqs = 0;
    }
    const std::string row_id = r.has(row, "id") ? r.string(row, path, "id") : std::to_string(run.plan.instances);
    run.id = stem + "#" + row_id;
    for (const MeasuredRun& earlier : out)
      if (earlier.id == run.id) r.fail(path + ".id", "a row id unique in the file; \"" + row_id + "\" repeats");
    out.push_back(std::move(run));
  }
  return out;
}

PublishedChoice published_choice_from_json(const json& j, const std::string& file) {
  const spec::JsonReader r(file);
  PublishedChoice c;
  c.file = file;
  c.name = r.string(j, "$", "name");
  c.source = r.string(j, "$", "source");
  c.model = r.string(j, "$", "model");
  c.hardware = r.string(j, "$", "hardware");
  c.stack = r.string(j, "$", "stack");
  read_workload_and_plan(r, j, c.workload, c.plan);
  c.workload.global_batch_seqs = r.whole(j.at("workload"), "$.workload", "global_batch", 1, kIntMax);
  c.plan.instances = r.whole(j, "$", "instances", 1, kIntMax);
  if (r.has(j, "held_fixed")) {
    const json& h = r.object(j, "$", "held_fixed");
    c.held_fixed_source = r.string(h, "$.held_fixed", "source");
    const json& fields = r.field(h, "$.held_fixed", "value");
    std::string names;
    for (const auto& [field, name] : kHeldFields) names += (names.empty() ? "" : ", ") + std::string(name);
    if (!fields.is_array() || fields.empty()) r.fail("$.held_fixed.value", "a list of plan fields: " + names);
    for (const json& f : fields) {
      const auto known = std::find_if(std::begin(kHeldFields), std::end(kHeldFields),
                                      [&](const auto& held) { return f.is_string() && f == held.second; });
      if (known == std::end(kHeldFields)) r.fail("$.held_fixed.value", "one of " + names + ", got " + f.dump());
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

std::string job_key(const MeasuredRun& run) {
  const spec::Plan& p = run.plan;
  const std::size_t hash = run.id.find('#');
  std::string key = run.source_id;
  for (const std::string* part : {&run.model, &run.hardware}) key.append("|").append(*part);
  key.append("|").append(run.id, hash == std::string::npos ? run.id.size() : hash);
  for (const double figure :
       {double(run.workload.seq_len), double(run.workload.global_batch_seqs), double(int(run.workload.precision)),
        double(p.instances), double(p.tp), double(p.pp), double(p.cp), double(p.ep), double(p.virtual_stages),
        double(p.micro_batch), double(p.grad_accum), double(p.zero), double(int(p.recompute))})
    key.append("|").append(std::to_string(figure));
  return key;
}

}  // namespace trainplan::validate
