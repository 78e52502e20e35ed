#include "validate/validation.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "spec/error.h"
#include "spec/load.h"
#include "validate/predictor.h"

namespace trainplan::validate {
namespace {

// A run's stack and the stacks it extends, nearest first (spec::Stack::bases),
// each stack file read once per validation (`chains` caches them by name).
const std::vector<std::string>& stack_and_bases(const std::string& stack,
                                                std::map<std::string, std::vector<std::string>>& chains) {
  auto it = chains.find(stack);
  if (it != chains.end()) return it->second;
  std::vector<std::string> chain{stack};
  const std::vector<std::string> bases = spec::load_stack(stack).bases;
  chain.insert(chain.end(), bases.begin(), bases.end());
  return chains.emplace(stack, std::move(chain)).first->second;
}

struct Accumulator {
  std::vector<double> in, loo, cross, memory, priced;
  int by_stack_fit = 0;
};

double mean_abs(const std::vector<double>& xs) {
  double s = 0;
  for (double x : xs) s += std::abs(x);
  return xs.empty() ? 0 : s / double(xs.size());
}

GroupError summarise(const Accumulator& a) {
  return {int(a.in.size()), int(a.memory.size()), mean_abs(a.in), mean_abs(a.loo), mean_abs(a.cross),
          mean_abs(a.memory), mean_abs(a.priced), a.by_stack_fit};
}

double memory_as_counted(const cost::MemoryBreakdown& m, MemoryCounter counter) {
  switch (counter) {
    case MemoryCounter::peak_allocated:
    case MemoryCounter::peak_active: return m.tensors_bytes;
    case MemoryCounter::peak_reserved: return m.reserved_bytes;
    case MemoryCounter::nvidia_smi: return m.reserved_bytes + m.runtime_reserve_bytes;
  }
  return m.total_bytes;
}

// A counter of allocated tensors sees neither the allocator's reserve nor the
// runtime's; the caching allocator's reserved counter does not see the runtime's.
std::string largest_counted_component(cost::MemoryBreakdown m, MemoryCounter counter) {
  if (counter != MemoryCounter::nvidia_smi) m.runtime_reserve_bytes = 0;
  if (counter == MemoryCounter::peak_allocated || counter == MemoryCounter::peak_active) m.allocator_bytes = 0;
  return m.largest_component();
}

}  // namespace

std::vector<MeasuredRun> runs_on(const std::vector<MeasuredRun>& runs, const std::string& hardware) {
  std::vector<MeasuredRun> out;
  for (const auto& r : runs)
    if (r.hardware == hardware) out.push_back(r);
  return out;
}

std::vector<spec::HardwareSpec> hardware_of(const std::vector<MeasuredRun>& runs) {
  std::vector<spec::HardwareSpec> out;
  auto known = [&](const std::string& name) {
    return std::any_of(out.begin(), out.end(), [&](const spec::HardwareSpec& h) { return h.name == name; });
  };
  for (const auto& r : runs)
    if (!known(r.hardware)) out.push_back(spec::load_hardware(r.hardware));
  std::set<std::string> families;
  for (const auto& hw : out) families.insert(hw.family);
  for (const std::string& name : spec::list_hardware_names()) {
    if (known(name)) continue;
    spec::HardwareSpec hw = spec::load_hardware(name);
    if (families.count(hw.family)) out.push_back(std::move(hw));
  }
  return out;
}

std::optional<spec::Calibration> stack_fit(const ValidationResult& v, const FamilyFit& family, const std::string& stack,
                                           int min_runs, int& runs) {
  std::vector<MeasuredRun> own;
  for (const auto& r : v.runs)
    if (r.timed && r.family == family.family && r.run.stack == stack) own.push_back(r.run);
  runs = int(own.size());
  if (runs < min_runs) return std::nullopt;
  Predictor predictor(own, spec::Calibration{});
  return fit(predictor, family.parameters).calibration;
}

std::vector<StackFit> own_stack_fits(const ValidationResult& v, int min_runs) {
  std::vector<StackFit> fits;
  for (const FamilyFit& f : v.fits) {
    std::set<std::string> stacks;
    for (const auto& r : v.runs)
      if (r.timed && r.family == f.family) stacks.insert(r.run.stack);
    for (const std::string& stack : stacks) {
      int runs = 0;
      if (const auto own = stack_fit(v, f, stack, min_runs, runs)) fits.push_back({f.family, stack, runs, *own});
    }
  }
  return fits;
}

ValidationResult validate_runs(const std::vector<MeasuredRun>& all_runs, const spec::Calibration& start,
                               const std::vector<FitParameter>& parameters, bool leave_one_run_out,
                               const std::function<void(std::size_t)>& runs_done) {
  ValidationResult result;
  std::vector<MeasuredRun> runs;
  for (const MeasuredRun& r : all_runs) {
    if (r.in_use()) runs.push_back(r);
    else result.left_out.emplace_back(r.id, r.left_out);
  }
  std::size_t done_before_family = 0;
  auto report_done = [&](std::size_t in_family) {
    if (runs_done) runs_done(done_before_family + in_family);
  };
  // Families in first-seen order.
  std::vector<std::string> families;
  std::map<std::string, std::vector<MeasuredRun>> by_family;
  std::map<std::string, std::string> family_of;  // hardware -> family, each descriptor read once
  for (const auto& r : runs) {
    auto [it, fresh] = family_of.try_emplace(r.hardware);
    if (fresh) {
      try {
        spec::HardwareSpec hw = spec::load_hardware(r.hardware);
        it->second = hw.family;
      } catch (const spec::SpecError& e) {  // the run file names a hardware that does not load
        throw spec::SpecError(r.file, "$.hardware (" + r.id + ")", e.what());
      }
    }
    const std::string& family = it->second;
    if (!by_family.count(family)) families.push_back(family);
    by_family[family].push_back(r);
  }

  const std::vector<spec::HardwareSpec> hardware = hardware_of(runs);
  for (const std::string& family : families) {
    const std::vector<MeasuredRun>& group = by_family[family];
    Predictor predictor(group, start);
    FamilyFit ff;
    ff.family = family;
    std::vector<spec::HardwareSpec> family_hardware;
    for (const auto& hw : hardware) if (hw.family == family) family_hardware.push_back(hw);
    ff.parameters = with_measured_bands(parameters, family_hardware);
    const std::vector<FitParameter>& family_parameters = ff.parameters;

    // Leave one source out: fit on the family's other sources, predict this one's runs.
    std::vector<double> cross(group.size(), 0.0);
    std::vector<std::string> sources;
    for (size_t i = 0; i < group.size(); ++i)
      if (std::find(sources.begin(), sources.end(), predictor.run(i).source_id) == sources.end())
        sources.push_back(predictor.run(i).source_id);
    for (const std::string& held : sources) {
      predictor.calibration() = start;
      std::vector<size_t> use;
      for (size_t i = 0; i < group.size(); ++i)
        if (predictor.run(i).source_id != held && predictor.timed(i)) use.push_back(i);
      ff.without_source[held] = fit(predictor, family_parameters, use);
      for (size_t i = 0; i < group.size(); ++i)
        if (predictor.run(i).source_id == held && predictor.timed(i)) cross[i] = predictor.predict_seqs_per_s(i);
    }

    // As estimate prices a source it never saw: the first of its stack and the
    // stacks that one extends (nearest first, as spec::find_calibration looks
    // them up) whose runs on the other sources number kOwnStackFitRuns, fitted
    // on those; else the family's leave-one-source-out figure.
    std::vector<double> priced = cross;
    std::vector<bool> by_stack_fit(group.size(), false);
    // (stack, source held) -> the stack's timed runs on the family's other sources
    std::map<std::pair<std::string, std::string>, std::vector<size_t>> fitted_on;
    std::map<std::pair<std::string, std::string>, std::vector<size_t>> priced_by;  // the same key -> runs it prices
    std::map<std::string, std::vector<std::string>> chains;
    for (size_t i = 0; i < group.size(); ++i) {
      if (!predictor.timed(i)) continue;
      const std::string& held = predictor.run(i).source_id;
      for (const std::string& stack : stack_and_bases(predictor.run(i).stack, chains)) {
        const auto key = std::make_pair(stack, held);
        if (!fitted_on.count(key)) {
          std::vector<size_t>& use = fitted_on[key];
          for (size_t k = 0; k < group.size(); ++k)
            if (predictor.timed(k) && predictor.run(k).stack == stack && predictor.run(k).source_id != held)
              use.push_back(k);
        }
        if (fitted_on[key].size() < size_t(kOwnStackFitRuns)) continue;
        priced_by[key].push_back(i);
        break;
      }
    }
    for (const auto& [key, runs_priced] : priced_by) {
      predictor.calibration() = start;
      fit(predictor, family_parameters, fitted_on.at(key));
      for (const size_t i : runs_priced) {
        priced[i] = predictor.predict_seqs_per_s(i);
        by_stack_fit[i] = true;
      }
    }

    predictor.calibration() = start;
    ff.in_sample = fit(predictor, family_parameters);
    const spec::Calibration fitted = predictor.calibration();
    std::vector<double> loo(group.size(), 0.0);
    if (leave_one_run_out) {
      for (size_t held = 0; held < group.size(); ++held) {
        if (!predictor.timed(held)) continue;
        predictor.calibration() = fitted;  // warm start from the in-sample fit
        std::vector<size_t> use;
        for (size_t i = 0; i < group.size(); ++i)
          if (i != held && predictor.timed(i)) use.push_back(i);
        fit(predictor, family_parameters, use, FitStart::current);
        loo[held] = predictor.predict_seqs_per_s(held);
        report_done(held + 1);
      }
    }
    report_done(group.size());
    done_before_family += group.size();
    predictor.calibration() = fitted;

    for (size_t i = 0; i < group.size(); ++i) {
      RunResult rr;
      rr.run = predictor.run(i);
      rr.family = family;
      rr.devices = predictor.devices(i);
      rr.problem = predictor.problem(i);
      rr.timed = predictor.timed(i);
      if (rr.problem == cost::PlanProblem::none) {
        const cost::Evaluation ev = predictor.evaluate(i);
        rr.estimate = ev.estimate;
        rr.refused_for_memory = ev.problem == cost::PlanProblem::out_of_memory;
        if (rr.run.memory) {
          const cost::MemoryBreakdown measured_stage = predictor.measured_stage_memory(i);
          rr.memory_predicted_bytes = memory_as_counted(measured_stage, rr.run.memory->counter);
          rr.memory_largest_component = largest_counted_component(measured_stage, rr.run.memory->counter);
          rr.memory_error = rr.memory_predicted_bytes / rr.run.memory->bytes - 1;
        }
      }
      if (rr.timed) {
        const double measured = rr.run.measured_seqs_per_s;
        rr.predicted_in_sample = rr.estimate.seqs_per_s;
        rr.predicted_loo = leave_one_run_out ? loo[i] : rr.predicted_in_sample;
        rr.predicted_cross_source = cross[i];
        rr.predicted_as_priced = priced[i];
        rr.priced_by_stack_fit = by_stack_fit[i];
        rr.error_as_priced = rr.predicted_as_priced / measured - 1;
        rr.error_in_sample = rr.predicted_in_sample / measured - 1;
        rr.error_loo = rr.predicted_loo / measured - 1;
        rr.error_cross_source = rr.predicted_cross_source / measured - 1;
      }
      result.runs.push_back(rr);
    }
    result.fits.push_back(std::move(ff));
  }

  // Tables in first-seen order, timed rows by cluster size; efficiency against the smallest cluster.
  std::map<std::string, size_t> table_index;
  for (size_t i = 0; i < result.runs.size(); ++i) {
    const auto& r = result.runs[i];
    if (!r.timed) continue;
    auto [it, fresh] = table_index.emplace(r.run.table, result.tables.size());
    if (fresh) result.tables.push_back({r.run.table, r.run.hardware, {}, 0, 0, 0});
    result.tables[it->second].runs.push_back(i);
  }
  for (TableResult& t : result.tables) {
    std::stable_sort(t.runs.begin(), t.runs.end(),
                     [&](size_t a, size_t b) { return result.runs[a].devices < result.runs[b].devices; });
    const RunResult base = result.runs[t.runs.front()];
    Accumulator a;
    for (size_t i : t.runs) {
      RunResult& r = result.runs[i];
      const double scale = double(base.devices) / r.devices;
      r.efficiency_measured = r.run.measured_seqs_per_s / base.run.measured_seqs_per_s * scale;
      r.efficiency_in_sample = r.predicted_in_sample / base.predicted_in_sample * scale;
      a.in.push_back(r.error_in_sample);
      a.loo.push_back(r.error_loo);
      a.cross.push_back(r.error_cross_source);
      result.max_abs_error_loo = std::max(result.max_abs_error_loo, std::abs(r.error_loo));
    }
    t.mape_in_sample = mean_abs(a.in);
    t.mape_loo = mean_abs(a.loo);
    t.mape_cross_source = mean_abs(a.cross);
  }

  std::map<std::string, Accumulator> source, stack, family, kind;
  Accumulator all;
  for (const RunResult& r : result.runs) {
    std::vector<Accumulator*> groups = {&source[r.run.source_id], &stack[r.run.stack], &family[r.family], &all};
    for (const std::string& k : run_kinds(r)) groups.push_back(&kind[k]);
    for (Accumulator* g : groups) {
      if (r.timed) {
        g->in.push_back(r.error_in_sample);
        g->loo.push_back(r.error_loo);
        g->cross.push_back(r.error_cross_source);
        g->priced.push_back(r.error_as_priced);
        g->by_stack_fit += r.priced_by_stack_fit;
      }
      if (r.run.memory && r.problem == cost::PlanProblem::none) g->memory.push_back(r.memory_error);
    }
    if (r.problem != cost::PlanProblem::none) {
      ++result.not_expressible;
    } else if (r.run.out_of_memory) {
      ++result.published_oom;
      result.oom_refused += r.refused_for_memory;
    } else {
      ++result.ran;
      result.ran_refused += r.refused_for_memory;
    }
  }
  for (const auto& [k, a] : source) {
    result.by_source[k] = summarise(a);
    if (!a.cross.empty()) result.max_source_mape_cross = std::max(result.max_source_mape_cross, mean_abs(a.cross));
  }
  for (const auto& [k, a] : stack) result.by_stack[k] = summarise(a);
  for (const auto& [k, a] : family) result.by_family[k] = summarise(a);
  for (const auto& [k, a] : kind) result.by_kind[k] = summarise(a);
  result.overall = summarise(all);
  return result;
}

std::vector<std::string> run_kinds(const RunResult& r) {
  std::vector<std::string> kinds;
  if (r.estimate.active_parameters < r.estimate.total_parameters) kinds.push_back("mixture of experts");
  if (r.run.plan.cp > 1 || r.run.workload.seq_len >= 32768) kinds.push_back("long context (CP > 1 or 32k+ tokens)");
  if (r.run.workload.precision == spec::Precision::fp8) kinds.push_back("fp8");
  kinds.push_back(kinds.empty() ? "dense 16-bit under 32k tokens" : "moe, long context or fp8");
  return kinds;
}

}  // namespace trainplan::validate
