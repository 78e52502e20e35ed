#include "validate/predictor.h"

#include "spec/precision_support.h"

#include "cost/memory.h"
#include "spec/error.h"
#include "spec/load.h"
#include "validate/measured_figure.h"

namespace trainplan::validate {

struct Predictor::Loaded {
  spec::ModelSpec model;
  spec::HardwareSpec hardware;
  spec::Stack stack;
  spec::Workload workload;
  spec::Plan plan;
  cost::PlanProblem problem = cost::PlanProblem::none;
  bool batch_per_replica = false;  // the global batch grows with DP
  std::unique_ptr<cost::Evaluator> evaluator;
};

MeasuredRun resolved(const MeasuredRun& run, int devices_per_instance) {
  MeasuredRun r = run;
  if (r.workload.global_batch_seqs == 0) {
    const long devices = long(r.plan.instances) * devices_per_instance;
    const long dp = devices / (long(r.plan.tp) * r.plan.pp);
    r.workload.global_batch_seqs = dp * r.plan.micro_batch * r.plan.grad_accum;
  }
  return r;
}

Predictor::Predictor(const std::vector<MeasuredRun>& runs, const spec::Calibration& start)
    : runs_(runs), calibration_(start) {
  for (MeasuredRun& run : runs_) {
    auto l = std::make_unique<Loaded>();
    // A name that resolves to nothing is the run file's error: name that file and field.
    auto named = [&](const char* field, auto load) {
      try {
        return load();
      } catch (const spec::SpecError& e) {
        throw spec::SpecError(run.file, std::string("$.") + field + " (" + run.id + ")", e.what());
      }
    };
    l->model = named("model", [&] { return spec::load_model(run.model); });
    l->hardware = named("hardware", [&] { return spec::load_hardware(run.hardware); });
    l->stack = named("stack", [&] { return spec::load_stack(run.stack); });
    if (const std::string why = spec::runtime_refusal(l->hardware, l->stack); !why.empty())
      throw spec::SpecError(run.file, "$.stack (" + run.id + ")", why);
    const std::string refusal = spec::stack_refusal(l->stack, run.plan);
    if (!refusal.empty()) throw spec::SpecError(run.id, "plan", "a plan its stack runs, not: " + refusal);
    l->batch_per_replica = run.workload.global_batch_seqs == 0;
    run = resolved(run, l->hardware.devices_per_instance());
    l->workload = run.workload;
    l->plan = run.plan;
    if (const std::string why = spec::precision_refusal(l->hardware, l->stack, run.workload.precision); !why.empty())
      throw spec::SpecError(run.file, "$.workload.precision (" + run.id + ")", why);
    run.measured_seqs_per_s =
        measured_seqs_per_s(run, l->model, run.plan.instances * l->hardware.devices_per_instance());
    l->evaluator = std::make_unique<cost::Evaluator>(l->model, l->hardware, l->stack, calibration_, l->workload);
    const cost::Evaluation ev = l->evaluator->evaluate(l->plan);
    l->problem = ev.problem == cost::PlanProblem::out_of_memory ? cost::PlanProblem::none : ev.problem;
    loaded_.push_back(std::move(l));
  }
}

Predictor::~Predictor() = default;

int Predictor::devices(size_t i) const { return runs_[i].plan.instances * loaded_[i]->hardware.devices_per_instance(); }

cost::PlanProblem Predictor::problem(size_t i) const { return loaded_[i]->problem; }

bool Predictor::timed(size_t i) const {
  return runs_[i].measured_seqs_per_s > 0 && loaded_[i]->problem == cost::PlanProblem::none;
}

cost::Evaluation Predictor::evaluate(size_t i) const { return loaded_[i]->evaluator->evaluate(loaded_[i]->plan); }

cost::MemoryBreakdown Predictor::measured_stage_memory(size_t i) const {
  const Loaded& l = *loaded_[i];
  const cost::Evaluation ev = evaluate(i);  // completes the plan
  const auto& memory = runs_[i].memory;
  if (!memory || memory->stage == MemoryStage::heaviest || l.plan.pp == 1) return ev.estimate.memory;
  const int rank = memory->stage == MemoryStage::last ? ev.plan.pp - 1 : 0;
  return cost::stage_memory(l.model, l.hardware, l.evaluator->stack_at(ev.plan.zero), l.workload, ev.plan, rank);
}

double Predictor::predict_seqs_per_s(size_t i) const { return evaluate(i).estimate.seqs_per_s; }

double Predictor::predict_at_instances(size_t i, int instances) const {
  MeasuredRun r = runs_[i];
  r.plan.instances = instances;
  const Loaded& l = *loaded_[i];
  if (l.batch_per_replica) r.workload.global_batch_seqs = 0;
  else r.plan.grad_accum = 1;  // complete_plan derives it from the fixed batch
  const MeasuredRun rr = resolved(r, l.hardware.devices_per_instance());
  const cost::Evaluator evaluator(l.model, l.hardware, l.stack, calibration_, rr.workload);
  const cost::Evaluation ev = evaluator.evaluate(rr.plan);
  return ev.ok() || ev.problem == cost::PlanProblem::out_of_memory ? ev.estimate.seqs_per_s : 0.0;
}

}  // namespace trainplan::validate
