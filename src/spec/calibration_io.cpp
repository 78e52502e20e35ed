#include "spec/calibration_io.h"

#include <filesystem>
#include <fstream>
#include <set>

#include "spec/calibration_origins.h"
#include "spec/error.h"
#include "spec/text_file.h"
#include "spec/json_reader.h"
#include "spec/load.h"

namespace trainplan::spec {
namespace {

using nlohmann::json;

const json& field(const json& j, const char* key, const std::string& path, const std::string& file) {
  if (!j.is_object()) throw SpecError(file, path, "an object");
  auto it = j.find(key);
  if (it == j.end()) throw SpecError(file, path + "." + key, "a required field, missing");
  return *it;
}

std::string text(const json& j, const char* key, const std::string& path, const std::string& file) {
  const json& v = field(j, key, path, file);
  if (!v.is_string()) throw SpecError(file, path + "." + key, "a string");
  return v.get<std::string>();
}

// lo < value <= hi (or lo <= value when lo_inclusive).
double number(const json& j, const char* key, const std::string& path, const std::string& file, double lo,
              double hi, bool lo_inclusive) {
  const json& v = field(j, key, path, file);
  const std::string where = path + "." + key;
  if (!v.is_number()) throw SpecError(file, where, "a number");
  const double x = v.get<double>();
  if (!(lo_inclusive ? x >= lo : x > lo) || !(x <= hi))
    throw SpecError(file, where, "a number in " + std::string(lo_inclusive ? "[" : "(") +
                                           std::to_string(lo) + ", " + std::to_string(hi) + "], got " + v.dump());
  return x;
}

MemoryEfficiency memory_from(const json& j, const std::string& path, const std::string& file) {
  return {number(j, "ceiling", path, file, 0, 4, false), number(j, "bytes_half", path, file, 0, 1e15, true)};
}

json memory_to(const MemoryEfficiency& m) { return {{"ceiling", m.ceiling}, {"bytes_half", m.bytes_half}}; }

const std::set<std::string> kKnownKeys = {"name",   "accelerator", "origin",        "description", "gemm",
                                          "attention_factor", "attention_backward_factor", "memory", "memory_by_op", "collective",
                                          "step_overhead_s", "pipeline_microbatch_overhead_s", "host_trace_s_per_layer", "origins"};
const std::set<std::string> kMemoryOps = {"softmax", "attention_softmax", "layernorm", "rmsnorm",
                                          "gelu",    "swiglu",            "optimizer", "residual"};

}  // namespace

CalibrationFile calibration_from_json(const json& j, const std::string& file) {
  if (!j.is_object()) throw SpecError(file, "$", "a JSON object holding one calibration");
  CalibrationFile out;
  Calibration& c = out.calibration;
  c.name = text(j, "name", "$", file);
  c.accelerator = text(j, "accelerator", "$", file);
  c.origin = text(j, "origin", "$", file);
  if (c.origin != "measured" && c.origin != "fitted" && c.origin != "assumed")
    throw SpecError(file, "$.origin", "one of measured, fitted, assumed; got \"" + c.origin + "\"");
  c.description = text(j, "description", "$", file);
  const json& g = field(j, "gemm", "$", file);
  check_known_keys(g, file, "$.gemm", {"ceiling", "m_half", "n_half", "k_half"});
  // Ceilings above 1 are allowed up to 4: a peak can be quoted for a narrower unit than the one measured.
  c.gemm.ceiling = number(g, "ceiling", "$.gemm", file, 0, 4, false);
  c.gemm.m_half = number(g, "m_half", "$.gemm", file, 0, 1e9, true);
  c.gemm.n_half = number(g, "n_half", "$.gemm", file, 0, 1e9, true);
  c.gemm.k_half = number(g, "k_half", "$.gemm", file, 0, 1e9, true);
  c.attention_factor = number(j, "attention_factor", "$", file, 0, 4, false);
  if (j.contains("attention_backward_factor"))  // optional: files before it priced backward at the forward's
    c.attention_backward_factor = number(j, "attention_backward_factor", "$", file, 0, 4, false);
  c.memory = memory_from(field(j, "memory", "$", file), "$.memory", file);
  if (j.contains("memory_by_op")) {
    const json& ops = j["memory_by_op"];
    if (!ops.is_object()) throw SpecError(file, "$.memory_by_op", "an object keyed by op name");
    for (const auto& [op, v] : ops.items()) {
      if (!kMemoryOps.count(op))
        throw SpecError(file, "$.memory_by_op." + op,
                              "an op among softmax, attention_softmax, layernorm, rmsnorm, gelu, swiglu, optimizer, "
                              "residual");
      c.memory_by_op[op] = memory_from(v, "$.memory_by_op." + op, file);
    }
  }
  const json& col = field(j, "collective", "$", file);
  check_known_keys(col, file, "$.collective", {"intra_node", "inter_node", "step_latency_s"});
  c.collective.intra_node = number(col, "intra_node", "$.collective", file, 0, 1, false);
  c.collective.inter_node = number(col, "inter_node", "$.collective", file, 0, 1, false);
  c.collective.step_latency_s = number(col, "step_latency_s", "$.collective", file, 0, 1, true);
  c.step_overhead_s = number(j, "step_overhead_s", "$", file, 0, 3600, true);
  if (j.contains("pipeline_microbatch_overhead_s"))  // optional: files before it had none
    c.pipeline_microbatch_overhead_s = number(j, "pipeline_microbatch_overhead_s", "$", file, 0, 60, true);
  if (j.contains("host_trace_s_per_layer"))  // optional: files before it had none
    c.host_trace_s_per_layer = number(j, "host_trace_s_per_layer", "$", file, 0, 10, true);
  for (const auto& [key, v] : j.items())
    if (!kKnownKeys.count(key)) out.extra[key] = v;
  c.origins = j.contains("origins") ? origins_from_json(j["origins"], c, out.extra, file)
                                    : inferred_origins(c, out.extra);
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
  j["origins"] = c.origins.empty() ? inferred_origins(c, file.extra) : c.origins;
  for (const auto& [key, v] : file.extra.items())
    if (key != "origins") j[key] = v;
  return j;
}

CalibrationFile load_calibration(const std::string& path) { return calibration_from_json(read_json_file(path), path); }

void save_calibration(const CalibrationFile& file, const std::string& path) {
  write_text_file(path, calibration_to_json(file).dump(2) + "\n", "calibration file");
}

}  // namespace trainplan::spec
