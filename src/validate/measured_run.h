// MeasuredRun: one published training run as data (data/measured/*.json):
// model, hardware, workload and plan as published or assumed, and the measured
// seq/s with its source. A file holds one table (shared model, workload and
// plan) and its rows; load_measured_dir reads every *.json of a folder in name
// order. Also the published-choice files. Bad files throw spec::SpecError
// naming the file and the JSON path.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "spec/plan.h"
#include "spec/workload.h"

namespace tp::validate {

struct MeasuredRun {
  std::string id;        // "<file stem>#<instances>", unique in a folder
  std::string table;     // rows of one table share model, workload and plan
  std::string model;     // a models/ name or path, as spec::load_model takes
  std::string hardware;  // a hardware/ name or path
  spec::Workload workload;  // global_batch_seqs 0: micro_batch x grad_accum per DP replica (see predictor.h)
  spec::Plan plan;          // instances set; grad_accum > 0 only when the batch is per replica
  double measured_seqs_per_s = 0;
  std::string source;    // where the figure was published
};

// A layout the authors of a published run chose as their best after trying
// others (data/published-choices/*.json): no throughput, only the choice, which
// the search should rank at or near the top under the fitted calibration.
struct PublishedChoice {
  std::string name, source, model, hardware;
  spec::Workload workload;  // global batch fixed
  spec::Plan plan;          // instances set
};

// `file` names the origin in errors and in ids.
std::vector<MeasuredRun> measured_runs_from_json(const nlohmann::json& j, const std::string& file);
std::vector<MeasuredRun> load_measured_dir(const std::string& dir);
PublishedChoice published_choice_from_json(const nlohmann::json& j, const std::string& file);
std::vector<PublishedChoice> load_published_choices(const std::string& dir);

}  // namespace tp::validate
