// MeasuredRun: one published training run as data (data/measured/*.json):
// source, stack, model, hardware, workload and plan as published or assumed,
// the measured figure as the source states it, measured memory, or a published
// out-of-memory. A file holds one table; each row may override the file's plan,
// workload and model (data/measured/README.md). load_measured_dir reads every
// *.json of a folder in name order. Also the published-choice files. Bad files throw spec::SpecError
// naming the file and the JSON path.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "spec/plan.h"
#include "spec/workload.h"

namespace trainplan::validate {

// What a source published for a run's speed, transcribed as stated;
// validate/measured_figure.h turns each into seq/s for the run's cluster.
enum class MeasuredKind { none, seqs_per_s, tokens_per_s_per_device, step_s, model_tflops_per_device };

// Measured per-device memory and which counter it was.
enum class MemoryCounter { peak_allocated, peak_active, peak_reserved, nvidia_smi };
// Which pipeline stage's device was measured (a stack may log only one rank).
enum class MemoryStage { heaviest, first, last };
struct MeasuredMemory {
  double bytes = 0;
  MemoryCounter counter = MemoryCounter::peak_reserved;
  MemoryStage stage = MemoryStage::heaviest;
  std::string source;
};

struct MeasuredRun {
  std::string file;       // the measured-run file it came from
  std::string id;         // "<file stem>#<run id>", unique in a folder
  std::string table;      // the published table (rows of one file)
  std::string source_id;  // the independent source: the unit of leave-one-source-out
  std::string stack;      // a stacks/ name or path
  std::string stack_version;
  std::string model;      // a models/ name or path, as spec::load_model takes
  std::string hardware;   // a hardware/ name or path
  spec::Workload workload;  // global_batch_seqs 0: micro_batch x grad_accum per DP replica (see predictor.h)
  spec::Plan plan;          // instances set; grad_accum > 0 only when the batch is per replica
  MeasuredKind kind = MeasuredKind::none;  // none: a memory-only run or a published out-of-memory run
  double measured_value = 0;               // in the unit of `kind`
  std::string flops_formula;               // for model_tflops_per_device: the source's FLOP count
  double measured_seqs_per_s = 0;          // resolved by the Predictor (0 until then, or without a figure)
  std::optional<MeasuredMemory> memory;
  bool out_of_memory = false;  // published as failing with out-of-memory: the model must refuse it
  std::string source;     // where the row was published
  // Why a row kept for the record is in no fit and no figure (its source
  // contradicts itself); empty for a row in use.
  std::string left_out;
  bool in_use() const { return left_out.empty(); }
};

// Plan fields a published choice may say its source kept as published while it
// compared layouts: the one list the reader accepts and the search holds.
enum class HeldField { recompute, micro_batch, zero, sp };
inline constexpr std::pair<HeldField, const char*> kHeldFields[] = {
    {HeldField::recompute, "recompute"}, {HeldField::micro_batch, "micro_batch"}, {HeldField::zero, "zero"},
    {HeldField::sp, "sp"}};
const char* to_string(HeldField field);

// A layout the authors of a published run chose as their best after trying
// others (data/published-choices/*.json): no throughput, only the choice, which
// the search should rank at or near the top under the fitted calibration.
struct PublishedChoice {
  std::string file;  // the published-choice file it came from
  std::string name, source, model, hardware, stack;
  spec::Workload workload;  // global batch fixed
  spec::Plan plan;          // instances set
  // Plan fields the source kept as published while it compared layouts, with
  // where it says so; empty: it searched every field.
  std::vector<HeldField> held_fixed;
  std::string held_fixed_source;
};

// The job a run measures, whichever release ran it: source, model, hardware,
// workload, plan, instances and the row's id within its table. A table
// republished per software release (the Neuron SDK's, SDK 2.5 to 2.28) repeats
// one job many times; the fit counts such a job once (validate/fit.h).
std::string job_key(const MeasuredRun& run);

// `file` names the origin in errors and in ids.
std::vector<MeasuredRun> measured_runs_from_json(const nlohmann::json& j, const std::string& file);
std::vector<MeasuredRun> load_measured_dir(const std::string& dir);
PublishedChoice published_choice_from_json(const nlohmann::json& j, const std::string& file);
std::vector<PublishedChoice> load_published_choices(const std::string& dir);

}  // namespace trainplan::validate
