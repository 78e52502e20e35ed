#include "validate/predictor.h"

#include "spec/error.h"
#include "spec/load.h"

namespace tp::validate {

struct Predictor::Loaded {
  spec::ModelSpec model;
  spec::HardwareSpec hardware;
  spec::Workload workload;
  spec::Plan plan;
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
  for (const MeasuredRun& run : runs_) {
    if (run.hardware != runs_.front().hardware)
      throw spec::SpecError(run.id, "hardware", "the same hardware as " + runs_.front().id);
    auto l = std::make_unique<Loaded>();
    l->model = spec::load_model(run.model);
    l->hardware = spec::load_hardware(run.hardware);
    const MeasuredRun r = resolved(run, l->hardware.devices_per_instance());
    l->workload = r.workload;
    l->plan = r.plan;
    l->evaluator = std::make_unique<cost::Evaluator>(l->model, l->hardware, calibration_, l->workload);
    const cost::Evaluation ev = l->evaluator->evaluate(l->plan);
    if (!ev.ok() && ev.problem != cost::PlanProblem::out_of_memory)
      throw spec::SpecError(run.id, "plan", std::string("a plan that can run, not: ") + cost::to_string(ev.problem));
    loaded_.push_back(std::move(l));
  }
}

Predictor::~Predictor() = default;

int Predictor::devices(size_t i) const { return runs_[i].plan.instances * loaded_[i]->hardware.devices_per_instance(); }

cost::Evaluation Predictor::evaluate(size_t i) const { return loaded_[i]->evaluator->evaluate(loaded_[i]->plan); }

double Predictor::predict_seqs_per_s(size_t i) const { return evaluate(i).estimate.seqs_per_s; }

double Predictor::predict_at_instances(size_t i, int instances) const {
  MeasuredRun r = runs_[i];
  r.plan.instances = instances;
  if (r.plan.grad_accum == 0) r.plan.grad_accum = 1;  // complete_plan derives it from the fixed batch
  const Loaded& l = *loaded_[i];
  const MeasuredRun rr = resolved(r, l.hardware.devices_per_instance());
  const cost::Evaluator evaluator(l.model, l.hardware, calibration_, rr.workload);
  const cost::Evaluation ev = evaluator.evaluate(rr.plan);
  return ev.ok() || ev.problem == cost::PlanProblem::out_of_memory ? ev.estimate.seqs_per_s : 0.0;
}

}  // namespace tp::validate
