// Where each part of a Calibration came from: measured (on the user's own
// hardware: this host's kernels, GEMM timings or collectives from their
// cluster), fitted (on published end-to-end runs) or assumed (defaults).
// The parts are fixed; a file without "origins" has them inferred from its
// "origin" and its fit section, and a legacy "gemm" key covers both GEMM parts.
#pragma once
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "spec/calibration.h"

namespace trainplan::spec {

// gemm_ceiling, gemm_shape (the m/n/k halves), attention_factor, memory, collective, step_overhead_s,
// pipeline_microbatch_overhead_s.
const std::vector<std::string>& calibration_parts();
bool is_origin(const std::string& word);  // measured, fitted, assumed

// Every part set to `origin`.
std::map<std::string, std::string> uniform_origins(const std::string& origin);

// What a file without "origins" says about itself: "assumed" files assume everything; "fitted" files
// fitted the parts their fit.parameters name (gemm.ceiling, memory.ceiling, collective.*, ...) and
// assumed the rest (all fitted when they name none); "measured" files are `calibrate kernels` output
// (GEMM, attention and memory measured on this host, collectives and step overhead assumed).
std::map<std::string, std::string> inferred_origins(const Calibration& c, const nlohmann::json& extra);

// The "origins" object of a file, checked: parts and words as above; parts it omits are inferred.
// Throws SpecError naming `file` and the JSON path.
std::map<std::string, std::string> origins_from_json(const nlohmann::json& j, const Calibration& c,
                                                     const nlohmann::json& extra, const std::string& file);

}  // namespace trainplan::spec
