#include "spec/calibration_origins.h"
#include <nlohmann/json.hpp>

#include "spec/error.h"

namespace trainplan::spec {
namespace {

// The part a fit parameter ("gemm.ceiling", "collective.step_latency_s") moves.
std::string part_of_parameter(const std::string& name) {
  if (name == "gemm.ceiling") return "gemm_ceiling";
  if (name.rfind("gemm.", 0) == 0) return "gemm_shape";
  if (name.rfind("memory", 0) == 0) return "memory";
  if (name.rfind("collective.", 0) == 0) return "collective";
  if (name == "attention_factor" || name == "step_overhead_s" || name == "pipeline_microbatch_overhead_s" ||
      name == "host_trace_s_per_layer")
    return name;
  return "";
}

}  // namespace

const std::vector<std::string>& calibration_parts() {
  static const std::vector<std::string> parts = {"gemm_ceiling", "gemm_shape", "attention_factor",
                                                 "memory",       "collective", "step_overhead_s",
                                                 "pipeline_microbatch_overhead_s", "host_trace_s_per_layer"};
  return parts;
}

bool is_origin(const std::string& word) { return word == "measured" || word == "fitted" || word == "assumed"; }

std::map<std::string, std::string> uniform_origins(const std::string& origin) {
  std::map<std::string, std::string> out;
  for (const std::string& part : calibration_parts()) out[part] = origin;
  return out;
}

std::map<std::string, std::string> inferred_origins(const Calibration& c, const nlohmann::json& extra) {
  if (c.origin == "fitted") {
    const nlohmann::json* parameters = nullptr;
    if (extra.is_object() && extra.contains("fit") && extra["fit"].is_object() && extra["fit"].contains("parameters") &&
        extra["fit"]["parameters"].is_array())
      parameters = &extra["fit"]["parameters"];
    if (!parameters) return uniform_origins("fitted");
    std::map<std::string, std::string> out = uniform_origins("assumed");
    for (const auto& p : *parameters)
      // A parameter the fit left at its assumed value (no run depended on it) says "fitted": false.
      if (p.is_object() && p.contains("name") && p["name"].is_string() &&
          !(p.contains("fitted") && p["fitted"].is_boolean() && !p["fitted"].get<bool>())) {
        const std::string part = part_of_parameter(p["name"].get<std::string>());
        if (!part.empty()) out[part] = "fitted";
      }
    return out;
  }
  if (c.origin == "measured") {
    // `calibrate kernels` was the only writer of measured files before origins were recorded.
    std::map<std::string, std::string> out = uniform_origins("measured");
    out["collective"] = "assumed";
    out["step_overhead_s"] = "assumed";
    out["pipeline_microbatch_overhead_s"] = "assumed";
    out["host_trace_s_per_layer"] = "assumed";
    return out;
  }
  return uniform_origins("assumed");
}

std::map<std::string, std::string> origins_from_json(const nlohmann::json& j, const Calibration& c,
                                                     const nlohmann::json& extra, const std::string& file) {
  if (!j.is_object()) throw SpecError(file, "$.origins", "an object: part -> measured, fitted or assumed");
  std::map<std::string, std::string> out = inferred_origins(c, extra);
  const std::vector<std::string>& parts = calibration_parts();
  for (const auto& [key, value] : j.items()) {
    const std::string where = "$.origins." + key;
    if (!value.is_string() || !is_origin(value.get<std::string>()))
      throw SpecError(file, where, "one of measured, fitted, assumed");
    const std::string origin = value.get<std::string>();
    if (key == "gemm") {  // written before the GEMM ceiling and shape had origins of their own
      if (!j.contains("gemm_ceiling")) out["gemm_ceiling"] = origin;
      if (!j.contains("gemm_shape")) out["gemm_shape"] = origin;
      continue;
    }
    bool known = false;
    for (const std::string& p : parts) known = known || p == key;
    if (!known)
      throw SpecError(file, where,
                      "a part among gemm_ceiling, gemm_shape, attention_factor, memory, collective, step_overhead_s, "
                      "pipeline_microbatch_overhead_s, host_trace_s_per_layer");
    out[key] = origin;
  }
  return out;
}

}  // namespace trainplan::spec
