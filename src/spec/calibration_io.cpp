#include "spec/calibration_io.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "spec/calibration_origins.h"
#include "spec/text_file.h"
#include "spec/json_reader.h"
#include "spec/load.h"

namespace trainplan::spec {
namespace {

using nlohmann::json;

MemoryEfficiency memory_from(const JsonReader& r, const json& j, const std::string& path) {
  return {r.number(j, path, "ceiling", 0, 4), r.number(j, path, "bytes_half", 0, 1e15, true)};
}

json memory_to(const MemoryEfficiency& m) { return {{"ceiling", m.ceiling}, {"bytes_half", m.bytes_half}}; }

const std::set<std::string> kKnownKeys = {"name",   "accelerator", "origin",        "description", "gemm",
                                          "attention_factor", "attention_backward_factor", "memory", "memory_by_op", "collective",
                                          "step_overhead_s", "pipeline_microbatch_overhead_s", "host_trace_s_per_layer", "origins"};
// What `calibrate` and `validate` write beside the fields, kept as they are (CalibrationFile::extra).
const std::set<std::string> kRecordKeys = {"model",        "host",         "date",       "fitted_on",
                                           "fit",          "measurements", "gemm_timings", "collectives"};
const std::set<std::string> kMemoryOps = {"softmax", "attention_softmax", "layernorm", "rmsnorm",
                                          "gelu",    "swiglu",            "optimizer", "residual"};

}  // namespace

CalibrationFile calibration_from_json(const json& j, const std::string& file) {
  const JsonReader r(file);
  if (!j.is_object()) r.fail("$", "a JSON object holding one calibration");
  // Any key neither a field nor a record is a misspelling: an optional field
  // misspelt would otherwise leave its default in silence.
  static const std::vector<std::string> allowed = [] {
    std::vector<std::string> keys(kKnownKeys.begin(), kKnownKeys.end());
    keys.insert(keys.end(), kRecordKeys.begin(), kRecordKeys.end());
    return keys;
  }();
  check_known_keys(j, file, "$", allowed);
  CalibrationFile out;
  Calibration& c = out.calibration;
  c.name = r.string(j, "$", "name");
  c.accelerator = r.string(j, "$", "accelerator");
  c.origin = r.choice(j, "$", "origin", {"measured", "fitted", "assumed"});
  c.description = r.string(j, "$", "description");
  const json& g = r.object(j, "$", "gemm");
  r.only_keys(g, "$.gemm", {"ceiling", "m_half", "n_half", "k_half"});
  // Ceilings above 1 are allowed up to 4: a peak can be quoted for a narrower unit than the one measured.
  c.gemm.ceiling = r.number(g, "$.gemm", "ceiling", 0, 4);
  c.gemm.m_half = r.number(g, "$.gemm", "m_half", 0, 1e9, true);
  c.gemm.n_half = r.number(g, "$.gemm", "n_half", 0, 1e9, true);
  c.gemm.k_half = r.number(g, "$.gemm", "k_half", 0, 1e9, true);
  c.attention_factor = r.number(j, "$", "attention_factor", 0, 4);
  if (r.has(j, "attention_backward_factor"))  // optional: files before it priced backward at the forward's
    c.attention_backward_factor = r.number(j, "$", "attention_backward_factor", 0, 4);
  c.memory = memory_from(r, r.object(j, "$", "memory"), "$.memory");
  if (r.has(j, "memory_by_op")) {
    const json& ops = j["memory_by_op"];
    if (!ops.is_object()) r.fail("$.memory_by_op", "an object keyed by op name");
    for (const auto& [op, v] : ops.items()) {
      if (!kMemoryOps.count(op))
        r.fail("$.memory_by_op." + op,
               "an op among softmax, attention_softmax, layernorm, rmsnorm, gelu, swiglu, optimizer, residual");
      c.memory_by_op[op] = memory_from(r, v, "$.memory_by_op." + op);
    }
  }
  const json& col = r.object(j, "$", "collective");
  r.only_keys(col, "$.collective", {"intra_node", "inter_node", "step_latency_s"});
  c.collective.intra_node = r.number(col, "$.collective", "intra_node", 0, 1);
  c.collective.inter_node = r.number(col, "$.collective", "inter_node", 0, 1);
  c.collective.step_latency_s = r.number(col, "$.collective", "step_latency_s", 0, 1, true);
  c.step_overhead_s = r.number(j, "$", "step_overhead_s", 0, 3600, true);
  if (r.has(j, "pipeline_microbatch_overhead_s"))  // optional: files before it had none
    c.pipeline_microbatch_overhead_s = r.number(j, "$", "pipeline_microbatch_overhead_s", 0, 60, true);
  if (r.has(j, "host_trace_s_per_layer"))  // optional: files before it had none
    c.host_trace_s_per_layer = r.number(j, "$", "host_trace_s_per_layer", 0, 10, true);
  for (const auto& [key, v] : j.items())
    if (!kKnownKeys.count(key)) (*out.extra)[key] = v;
  c.origins = j.contains("origins") ? origins_from_json(j["origins"], c, *out.extra, file)
                                    : inferred_origins(c, *out.extra);
  return out;
}

json calibration_to_json(const CalibrationFile& file) {
  const Calibration& c = file.calibration;
  json j = {{"name", c.name},
            {"accelerator", c.accelerator},
            {"origin", c.origin},
            {"description", c.description},
            {"gemm", {{"ceiling", c.gemm.ceiling}, {"m_half", c.gemm.m_half}, {"n_half", c.gemm.n_half},
                      {"k_half", c.gemm.k_half}}},
            {"attention_factor", c.attention_factor},
            {"attention_backward_factor", c.attention_backward_factor},
            {"memory", memory_to(c.memory)},
            {"memory_by_op", json::object()},
            {"collective", {{"intra_node", c.collective.intra_node}, {"inter_node", c.collective.inter_node},
                            {"step_latency_s", c.collective.step_latency_s}}},
            {"step_overhead_s", c.step_overhead_s},
            {"pipeline_microbatch_overhead_s", c.pipeline_microbatch_overhead_s},
            {"host_trace_s_per_layer", c.host_trace_s_per_layer}};
  for (const auto& [op, m] : c.memory_by_op) j["memory_by_op"][op] = memory_to(m);
  // Origins left empty by a writer are what the file's origin and fit section say.
  j["origins"] = c.origins.empty() ? inferred_origins(c, *file.extra) : c.origins;
  for (const auto& [key, v] : file.extra->items())
    if (key != "origins") j[key] = v;
  return j;
}

CalibrationFile load_calibration(const std::string& path) { return calibration_from_json(read_json_file(path), path); }

void save_calibration(const CalibrationFile& file, const std::string& path) {
  write_text_file(path, calibration_to_json(file).dump(2) + "\n", "calibration file");
}

}  // namespace trainplan::spec
