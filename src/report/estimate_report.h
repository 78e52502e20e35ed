// Renders one Estimate as a profiler-style summary: where the step time goes,
// where the memory goes, throughput, and money per price kind. Text for
// people; markdown, csv and json for programs (every json figure has its unit
// in its name). Computes no model figure: it only arranges the Estimate.
#pragma once
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cost/estimate.h"
#include "cost/uncertainty.h"
#include "report/json_document.h"
#include "spec/plan.h"
#include "spec/workload.h"

namespace trainplan::report {

// The held-out error bands applied to this estimate (cost::estimate_ranges)
// and where they came from; absent when no error-bands file was found.
struct EstimateUncertainty : cost::EstimateRanges {
  std::string file;
  double coverage = 0;
  std::string throughput_scope;  // "a100", "every family" or "every family, widened to ...": whose band
  std::string memory_families_note;  // set when the band holds no run of this hardware's family
};

struct EstimateView {
  std::string model, hardware, stack, calibration, calibration_origin;
  // Per part of the calibration (spec/calibration_origins.h): measured, fitted or assumed.
  std::map<std::string, std::string> calibration_origins;
  std::vector<std::string> assumptions;  // the stack and calibration chosen for the user, and why
  spec::Workload workload;
  spec::Plan plan;  // completed
  cost::Estimate estimate;
  std::vector<cost::PriceFigures> prices;
  std::optional<EstimateUncertainty> uncertainty;
  std::string uncertainty_note;  // why there is none, where there is none
};

void render_estimate(std::ostream& out, const std::string& format, const EstimateView& view,
                     const JsonDocument& document);

// The --format json document render_estimate prints: the head, then the view's figures.
nlohmann::ordered_json estimate_document(const EstimateView& view, const JsonDocument& document);

}  // namespace trainplan::report
