// The committed measured runs (data/measured/) against the step model: the
// leave-one-out error must not rise above the target of the validation issue
// (MAPE at most 5% over the seed tables, every run within 10%), so no change can
// quietly make the model worse.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

#include "spec/calibration.h"
#include "spec/error.h"
#include "spec/load.h"
#include "validate/fit.h"
#include "validate/measured_run.h"
#include "validate/predictor.h"
#include "validate/validation.h"

namespace trainplan::validate {
namespace {

std::string measured_dir() { return (std::filesystem::path(spec::data_root()) / "data" / "measured").string(); }

std::vector<MeasuredRun> seed_runs() {
  auto runs = load_measured_dir(measured_dir());
  std::erase_if(runs, [](const MeasuredRun& r) { return r.source_id.rfind("seed-", 0) != 0; });
  return runs;
}

TEST(MeasuredRuns, SeedTablesLoadWithEveryPublishedRow) {
  const auto runs = seed_runs();
  // seed-measurements.md: 4 + 3 rows on dl1, 2 + 5 rows on trn1.
  EXPECT_EQ(runs_on(runs, "dl1.24xlarge").size(), 7u);
  EXPECT_EQ(runs_on(runs, "trn1.32xlarge").size(), 7u);
}

// A figure a later table repeats for the same job (the Neuron SDK's 2.6.0
// table carries 2.5.0's BERT rows to the last digit) is one measurement: a
// second in-use copy would weigh it twice in every fit and error figure, and
// across sources would let a held-out source be predicted from itself.
TEST(MeasuredRuns, NoMeasurementIsCountedTwice) {
  std::map<std::string, std::string> first_of;
  for (const MeasuredRun& r : load_measured_dir(measured_dir())) {
    if (!r.in_use() || r.kind == MeasuredKind::none) continue;
    const spec::Plan& p = r.plan;
    const spec::Workload& w = r.workload;
    const std::string key = r.model + "|" + r.hardware + "|" + r.stack + "|" + std::to_string(w.seq_len) + "|" +
                            std::to_string(w.global_batch_seqs) + "|" + std::to_string(int(w.precision)) + "|" +
                            std::to_string(p.instances) + "|" + std::to_string(p.tp) + "|" + std::to_string(p.pp) + "|" +
                            std::to_string(p.cp) + "|" + std::to_string(p.ep) + "|" + std::to_string(p.virtual_stages) +
                            "|" + std::to_string(p.micro_batch) + "|" + std::to_string(p.zero) + "|" +
                            std::to_string(int(p.recompute)) + "|" + std::to_string(p.sp) + "|" +
                            std::to_string(int(r.kind)) + "|" + std::to_string(r.measured_value);
    const auto [it, fresh] = first_of.emplace(key, r.id);
    EXPECT_TRUE(fresh) << r.id << " repeats " << it->second << " in every field and figure; leave one out";
  }
  EXPECT_GT(first_of.size(), 500u);
}

// A run is priced under a stack whose releases hold the software version it
// states ("Neuron SDK 2.17.0, ..." under a file covering 2.15-2.19), so that
// `--stack LINE@VERSION` picks, for a user, the file the corpus fits that
// release with.
TEST(MeasuredRuns, EachRunsReleaseIsOneItsStackCovers) {
  int checked = 0;
  for (const MeasuredRun& r : load_measured_dir(measured_dir())) {
    if (!r.in_use()) continue;
    const spec::Stack stack = spec::load_stack(r.stack);
    if (stack.releases.line.empty()) continue;
    const size_t at = r.stack_version.find(stack.releases.software + " ");
    if (at == std::string::npos) continue;  // the source names no release (seed 001's post)
    const size_t from = at + stack.releases.software.size() + 1;
    const std::string version = r.stack_version.substr(from, r.stack_version.find_first_not_of("0123456789.", from) - from);
    EXPECT_TRUE(spec::release_holds(stack.releases, version))
        << r.id << ": release " << version << " outside " << stack.name << "'s " << stack.releases.from << "-" << stack.releases.to;
    ++checked;
  }
  EXPECT_GE(checked, 46);  // the Neuron table's NxD and Neuron NeMo rows, Intel's Gaudi 2 rows
}

TEST(MeasuredRuns, PerReplicaBatchResolvesToGlobalBatch) {
  const nlohmann::json j = nlohmann::json::parse(R"({
    "table": "t", "source_id": "test", "stack": "deepspeed-habana", "stack_version": "test", "model": "bert-1.5b", "hardware": "dl1.24xlarge",
    "workload": {"seq_len": 128, "precision": "mixed-bf16"},
    "plan": {"micro_batch": 16, "grad_accum": 24, "zero": 1},
    "runs": [{"instances": 8, "measured_seqs_per_s": 1883.63, "source": "seed 000"}]})");
  const auto runs = measured_runs_from_json(j, "t.json");
  ASSERT_EQ(runs.size(), 1u);
  // Seed 000: 384 sequences per accelerator per step on 64 accelerators.
  EXPECT_EQ(resolved(runs[0], 8).workload.global_batch_seqs, 384 * 64);
}

TEST(MeasuredRuns, RefusesBothOrNeitherBatchForm) {
  const nlohmann::json j = nlohmann::json::parse(R"({
    "table": "t", "source_id": "test", "stack": "deepspeed-habana", "stack_version": "test", "model": "bert-1.5b", "hardware": "dl1.24xlarge",
    "workload": {"seq_len": 128, "precision": "mixed-bf16"},
    "plan": {"micro_batch": 16},
    "runs": [{"instances": 8, "measured_seqs_per_s": 1.0, "source": "x"}]})");
  EXPECT_THROW(measured_runs_from_json(j, "t.json"), spec::SpecError);
}

TEST(Fit, StaysInsideBoundsAndRecordsRuns) {
  const auto runs = runs_on(seed_runs(), "trn1.32xlarge");
  Predictor predictor(runs, spec::Calibration{});
  const auto parameters = default_fit_parameters();
  const FitResult f = fit(predictor, parameters);
  ASSERT_EQ(f.values.size(), parameters.size());
  for (size_t k = 0; k < parameters.size(); ++k) {
    EXPECT_GE(f.values[k], parameters[k].lower) << parameters[k].name;
    EXPECT_LE(f.values[k], parameters[k].upper) << parameters[k].name;
  }
  EXPECT_EQ(f.fitted_on.size(), runs.size());
  // attention_factor prices flash kernels; seed 001's stack runs unfused attention;
  // its micro-batches run for seconds, so the host's recording hides behind them.
  EXPECT_EQ(f.residual_dof, int(runs.size()) - int(parameters.size() - 2));
}

// One job republished by later releases (the Neuron SDK's tables repeat their
// rows per SDK version): the same key whatever file and release; another
// instance count or micro-batch is another job.
TEST(MeasuredRuns, JobKeyIgnoresTheReleaseOnly) {
  const auto runs = runs_on(seed_runs(), "trn1.32xlarge");
  ASSERT_GE(runs.size(), 2u);
  MeasuredRun again = runs[0];
  again.file = "elsewhere/next-release.json";
  again.id = "next-release#" + runs[0].id.substr(runs[0].id.find('#') + 1);
  again.stack_version = "a later release";
  again.measured_value *= 1.1;
  EXPECT_EQ(job_key(again), job_key(runs[0]));
  MeasuredRun wider = runs[0];
  wider.plan.instances *= 2;
  EXPECT_NE(job_key(wider), job_key(runs[0]));
  MeasuredRun larger = runs[0];
  larger.plan.micro_batch += 1;
  EXPECT_NE(job_key(larger), job_key(runs[0]));
  EXPECT_NE(job_key(runs[1]), job_key(runs[0]));
}

// Three republications of one seed run: the four runs of that job share one
// job's weight; the squared weights still sum to the number of runs.
TEST(Fit, ARepublishedJobWeighsAsOne) {
  auto runs = runs_on(seed_runs(), "trn1.32xlarge");
  const size_t jobs = runs.size();
  for (int k = 1; k <= 3; ++k) {
    MeasuredRun again = runs[0];
    again.id = "release-" + std::to_string(k) + runs[0].id.substr(runs[0].id.find('#'));
    runs.push_back(again);
  }
  Predictor predictor(runs, spec::Calibration{});
  std::vector<size_t> use(runs.size());
  for (size_t i = 0; i < use.size(); ++i) use[i] = i;
  const std::vector<double> w = run_weights(predictor, use);
  ASSERT_EQ(w.size(), runs.size());
  const double per_job = double(runs.size()) / double(jobs);
  EXPECT_NEAR(w[1] * w[1], per_job, 1e-12);
  for (size_t i : {size_t(0), jobs, jobs + 1, jobs + 2}) EXPECT_NEAR(w[i] * w[i], per_job / 4, 1e-12);
  double sum = 0;
  for (double x : w) sum += x * x;
  EXPECT_NEAR(sum, double(runs.size()), 1e-9);
}

size_t index_of(const std::vector<FitParameter>& parameters, const std::string& name) {
  size_t k = 0;
  while (k < parameters.size() && parameters[k].name != name) ++k;
  return k;
}

// A factor no run depends on is not fitted: its prior alone would hold it.
// Seed 001 runs unfused attention: its softmax over the scores gets a ceiling
// of its own, the flash attention factor stays assumed. Megatron-LM's H100 runs
// are all flash: no ceiling of its own, the shared memory ceiling serves.
TEST(Fit, FactorsNoRunDependsOnAreLeftUnfitted) {
  const auto parameters = default_fit_parameters();
  const size_t softmax = index_of(parameters, "memory.attention_softmax.ceiling");
  const size_t flash = index_of(parameters, "attention_factor");
  const size_t memory = index_of(parameters, "memory.ceiling");
  ASSERT_LT(softmax, parameters.size());

  Predictor unfused(runs_on(seed_runs(), "trn1.32xlarge"), spec::Calibration{});
  const FitResult u = fit(unfused, parameters);
  EXPECT_EQ(u.values[flash], parameters[flash].prior_centre);
  EXPECT_EQ(u.unfitted, (std::vector<std::string>{"attention_factor", "host_trace_s_per_layer"}));
  ASSERT_TRUE(u.calibration.memory_by_op.count("attention_softmax"));
  EXPECT_EQ(u.calibration.memory_by_op.at("attention_softmax").ceiling, u.values[softmax]);

  auto runs = load_measured_dir(measured_dir());
  std::erase_if(runs, [](const MeasuredRun& r) { return r.source_id != "megatron-lm-h100"; });
  ASSERT_GE(runs.size(), 9u);
  Predictor all_flash(runs, spec::Calibration{});
  const FitResult a = fit(all_flash, parameters);
  EXPECT_FALSE(a.calibration.memory_by_op.count("attention_softmax"));
  // Megatron-LM sends pipeline activations asynchronously: no graph cut, no hand-off
  // to fit; CUDA replays no recorded graph per micro-batch: no host tracing.
  EXPECT_EQ(a.unfitted, (std::vector<std::string>{"memory.attention_softmax.ceiling", "pipeline_microbatch_overhead_s",
                                                  "host_trace_s_per_layer"}));
  EXPECT_EQ(a.values[softmax], a.values[memory]);
  EXPECT_EQ(a.residual_dof, int(runs.size()) - int(parameters.size() - 3));
}

// Whether the runs depend on a factor is asked where it would sit unfitted,
// its prior: seed 000's Gaudi runs hide a host recording of 0 behind the
// device, but not one at dl1's prior (5.9 ms per layer), so the fit takes it.
TEST(Fit, ResponseIsTestedAtThePriorWhereAnUnfittedFactorSits) {
  const auto runs = runs_on(seed_runs(), "dl1.24xlarge");
  ASSERT_FALSE(runs.empty());
  Predictor predictor(runs, spec::Calibration{});
  const auto parameters = with_measured_bands(default_fit_parameters(), hardware_of(runs));
  const size_t trace = index_of(parameters, "host_trace_s_per_layer");
  ASSERT_GT(parameters[trace].prior_centre, 0);
  const FitResult f = fit(predictor, parameters);
  EXPECT_EQ(std::count(f.unfitted.begin(), f.unfitted.end(), "host_trace_s_per_layer"), 0);
  auto from_zero = parameters;
  from_zero[trace].prior_centre = 0;  // a recording of 0 is hidden: nothing to fit
  Predictor again(runs, spec::Calibration{});
  const FitResult z = fit(again, from_zero);
  EXPECT_EQ(std::count(z.unfitted.begin(), z.unfitted.end(), "host_trace_s_per_layer"), 1);
}

// A factor the runs cannot see keeps its prior: Pythia x1 runs inside one
// instance, so the inter-instance efficiency has nothing to fit against.
TEST(Fit, UnidentifiedFactorStaysAtItsPrior) {
  auto runs = runs_on(seed_runs(), "trn1.32xlarge");
  std::erase_if(runs, [](const MeasuredRun& r) { return r.plan.instances != 1; });
  ASSERT_EQ(runs.size(), 1u);
  Predictor predictor(runs, spec::Calibration{});
  const auto parameters = default_fit_parameters();
  const FitResult f = fit(predictor, parameters);
  size_t k = 0;
  while (k < parameters.size() && parameters[k].name != "collective.inter_node") ++k;
  ASSERT_LT(k, parameters.size());
  EXPECT_NEAR(f.values[k], parameters[k].prior_centre, 1e-3);
  EXPECT_LT(f.rms_log_error, 0.01);  // the one run is still met, by the factors it does see
}

// Measured bands become the collective shares' bounds and priors (their
// intersection across a family's descriptors); a family where one descriptor
// states none keeps the default range.
TEST(Fit, MeasuredBandsBoundTheCollectiveShares) {
  spec::HardwareSpec a = spec::load_hardware("trn1.32xlarge"), b = spec::load_hardware("trn1n.32xlarge");
  a.efa_share = {0.75, 0.6, 0.9, "a"};
  b.efa_share = {0.8, 0.7, 0.95, "b"};
  const auto banded = with_measured_bands(default_fit_parameters(), {a, b});
  const size_t inter = index_of(banded, "collective.inter_node");
  ASSERT_LT(inter, banded.size());
  EXPECT_DOUBLE_EQ(banded[inter].lower, 0.7);
  EXPECT_DOUBLE_EQ(banded[inter].upper, 0.9);
  EXPECT_DOUBLE_EQ(banded[inter].prior_centre, 0.75);
  EXPECT_NE(banded[inter].band_source.find("a"), std::string::npos);
  b.efa_share = {};
  const auto unbanded = with_measured_bands(default_fit_parameters(), {a, b});
  EXPECT_TRUE(unbanded[inter].band_source.empty());
  EXPECT_DOUBLE_EQ(unbanded[inter].lower, default_fit_parameters()[inter].lower);
  b.efa_share = {0.95, 0.92, 0.99, "b"};
  EXPECT_THROW(with_measured_bands(default_fit_parameters(), {a, b}), spec::SpecError);
}

// A measured best-shape matmul bounds the GEMM ceiling the same way: Gaudi 3's
// 1243 TFLOP/s of 1835 (stas00/ml-engineering@744d01e1 compute/accelerator/README.md,
// MAMF table) is the high end, 0.40 and 0.75 of it the low end and centre.
TEST(Fit, MeasuredMatmulBandBoundsTheGemmCeiling) {
  const auto banded = with_measured_bands(default_fit_parameters(), {spec::load_hardware("hls-gaudi3")});
  const size_t gemm = index_of(banded, "gemm.ceiling");
  ASSERT_LT(gemm, banded.size());
  EXPECT_NEAR(banded[gemm].upper, 1243.0 / 1835, 1e-3);
  EXPECT_NEAR(banded[gemm].lower, 0.40 * 1243.0 / 1835, 1e-3);
  EXPECT_NEAR(banded[gemm].prior_centre, 0.75 * 1243.0 / 1835, 1e-3);
  EXPECT_NE(banded[gemm].band_source.find("MAMF"), std::string::npos);
  // Trainium states no such measurement: the default range stays.
  const auto trn1 = with_measured_bands(default_fit_parameters(), {spec::load_hardware("trn1.32xlarge")});
  EXPECT_TRUE(trn1[gemm].band_source.empty());
  EXPECT_DOUBLE_EQ(trn1[gemm].upper, default_fit_parameters()[gemm].upper);
}

// The step latency's ceiling comes from the collective library's own model
// where every descriptor of the family states one (the lowest of them), and
// the fit's default range where one does not: dgx-h100 and dgx-a100-80gb state
// NCCL's 14 us (NVIDIA/nccl@b6475625 src/graph/tuning.cc hwLat, network
// Ring/Simple), Jean Zay's Omni-Path none.
TEST(Fit, CollectiveLibraryBoundsTheStepLatency) {
  const size_t latency = index_of(default_fit_parameters(), "collective.step_latency_s");
  ASSERT_LT(latency, default_fit_parameters().size());
  spec::HardwareSpec a = spec::load_hardware("dgx-a100-80gb"), b = spec::load_hardware("dgx-h100");
  const auto banded = with_measured_bands(default_fit_parameters(), {a, b});
  EXPECT_DOUBLE_EQ(banded[latency].lower, 0.0);
  EXPECT_DOUBLE_EQ(banded[latency].upper, 14e-6);
  EXPECT_DOUBLE_EQ(banded[latency].prior_centre, default_fit_parameters()[latency].prior_centre);  // 10 us, inside
  EXPECT_NE(banded[latency].band_source.find("nccl"), std::string::npos);
  // Only the ceiling is measured: a fit resting at 0 presses on no measurement.
  EXPECT_FALSE(banded[latency].band_bounds_low);
  EXPECT_TRUE(with_measured_bands(default_fit_parameters(), {spec::load_hardware("trn1.32xlarge")})
                  [index_of(default_fit_parameters(), "collective.inter_node")].band_bounds_low);
  b.step_latency_band = {9.6e-6, 0, "older"};
  const auto lowest = with_measured_bands(default_fit_parameters(), {a, b});
  EXPECT_DOUBLE_EQ(lowest[latency].upper, 9.6e-6);
  EXPECT_DOUBLE_EQ(lowest[latency].prior_centre, 9.6e-6);  // the prior moves inside the ceiling
  EXPECT_EQ(lowest[latency].band_source, "older");
  const auto unbanded =
      with_measured_bands(default_fit_parameters(), {a, spec::load_hardware("jean-zay-a100-80gb")});
  EXPECT_TRUE(unbanded[latency].band_source.empty());
  EXPECT_DOUBLE_EQ(unbanded[latency].upper, default_fit_parameters()[latency].upper);
}

// The host's recording takes its prior from the descriptors where the whole
// family states one (trn1 and trn1n: the Gaudi lazy-mode fits), else the
// assumed 0; its bounds stay the fit's range, not a band.
TEST(Fit, HostTracePriorComesFromTheFamilysDescriptors) {
  spec::HardwareSpec a = spec::load_hardware("trn1.32xlarge"), b = spec::load_hardware("trn1n.32xlarge");
  const size_t trace = index_of(default_fit_parameters(), "host_trace_s_per_layer");
  ASSERT_LT(trace, default_fit_parameters().size());
  const auto with_prior = with_measured_bands(default_fit_parameters(), {a, b});
  EXPECT_DOUBLE_EQ(with_prior[trace].prior_centre, a.host_trace_prior.centre_s);
  EXPECT_DOUBLE_EQ(with_prior[trace].prior_sigma, a.host_trace_prior.sigma_s);
  EXPECT_FALSE(with_prior[trace].prior_source.empty());
  EXPECT_TRUE(with_prior[trace].band_source.empty());
  EXPECT_DOUBLE_EQ(with_prior[trace].upper, default_fit_parameters()[trace].upper);
  b.host_trace_prior = {};
  const auto without = with_measured_bands(default_fit_parameters(), {a, b});
  EXPECT_DOUBLE_EQ(without[trace].prior_centre, default_fit_parameters()[trace].prior_centre);
  EXPECT_TRUE(without[trace].prior_source.empty());
}

// A fit that would leave a measured band is held at its edge and names the
// runs pulling it out. The Neuron SDK table's NxD rows (TP 8-32 inside an
// instance) would take NeuronLink's share above the 0.7 that trn1's measurements
// allow; an unreachable band names no run.
TEST(Fit, AFitPressedAgainstItsBandNamesThePullingRuns) {
  auto runs = load_measured_dir(measured_dir());
  std::erase_if(runs, [](const MeasuredRun& r) { return r.source_id != "neuron-sdk-nxd-llama"; });
  ASSERT_GE(runs.size(), 20u);
  Predictor predictor(runs, spec::Calibration{});
  const spec::HardwareSpec hw = spec::load_hardware("trn1.32xlarge");
  ASSERT_TRUE(hw.fabric_share.known());
  const FitResult f = fit(predictor, with_measured_bands(default_fit_parameters(), {hw}));
  const auto pin = std::find_if(f.pinned.begin(), f.pinned.end(),
                                [](const PinnedParameter& p) { return p.name == "collective.intra_node"; });
  ASSERT_NE(pin, f.pinned.end());
  EXPECT_NEAR(pin->value, hw.fabric_share.high, 0.02 * (hw.fabric_share.high - hw.fabric_share.low));
  EXPECT_EQ(pin->band_source, hw.fabric_share.source);
  ASSERT_FALSE(pin->pulling_runs.empty());
  EXPECT_LE(pin->pulling_runs.size(), 5u);
  for (const auto& id : pin->pulling_runs) EXPECT_EQ(id.rfind("neuron-sdk-nxd-", 0), 0u) << id;
}

// The seed runs still validate under their own stacks. Issues 5 and 11 set
// leave-one-run-out MAPE at most 5% and every run within 10%; that held while
// dl1's collective shares could fall to 5-9% of line rate. Held to the bands
// that collective measurements give (issue 37: EFA at least 30%, RoCE 70%),
// seed 000's BERT-1.5B runs lose more from 1 to 8 and 16 dl1 than any
// plausible fabric explains: at this commit 5.3% over the 14 runs, the worst
// run (BERT-1.5B x1, predicted from its scaling neighbours) 16.4% out; seed
// 001 stays within 3% (2.6%). The guard holds those figures.
TEST(Validation, SeedLeaveOneOutMapeWithinTarget) {
  const auto v = validate_runs(seed_runs(), spec::Calibration{});
  ASSERT_EQ(v.runs.size(), 14u);
  EXPECT_LE(v.overall.mape_loo, 0.055) << "leave-one-out MAPE over the seed tables rose above 5.5%";
  EXPECT_LE(v.max_abs_error_loo, 0.17) << "a seed run's leave-one-out error rose above 17%";
  EXPECT_LE(v.overall.mape_in_sample, v.overall.mape_loo + 1e-9);
  EXPECT_LE(v.by_source.at("seed-001").mape_loo, 0.03);
}

// The whole corpus, each source predicted by factors fitted on the others.
// Issue 11's target is 8% overall and no source above 15%; these guards hold
// the figures reached at this commit (7.62% over 414 runs, worst source SC21 at
// 13.5%) so no change can quietly make them worse. Megatron-Bridge's DeepSeek-V3
// and Qwen3 30B-A3B 25.09 rows joined from data/measured-pending at 22.6% and
// 14.5% slow (7.62% over 412 before them; 7.58% over 413 between). From 8.07%: SC21's and
// BLOOM's runs trained with Megatron's default dropout of 0.1, and unfused
// attention's dropout kernel streams the score matrix again (SC21 14.9% ->
// 13.5%, its 1.7B row +24% -> +14%; BLOOM 8.8% -> 8.4%; llm-foundry, through the
// A100 fit, 7.4% -> 6.9%). NeMo 24.07's DGX-H100 FP8
// summary joined with 7 of its 8 rows (6.6% held out; its GPT-3 20B row, then
// refused on memory, joined once it fit: h100 8.04% held out before and after): with more H100 stacks
// in the fit, llm-foundry 7.9% -> 7.5%. From 8.35% over 405 runs: unfused attention's softmax
// got a fitted ceiling of its own (memory.attention_softmax.ceiling): BLOOM's
// score-matrix bytes had set the A100's one memory ceiling, and without BLOOM
// llm-foundry's norms ran too fast; torchtune's packed row runs FlexAttention
// within its documents (workload document_tokens). From 8.9% (torchtune 13.5%,
// SC21 12.2%): llm-foundry 9.1% -> 7.9%, torchtune 13.5% -> 1.5%, SC21 12.2% ->
// 14.9% (held out, the softmax ceiling comes from BLOOM alone). BLOOM's runs with --pp-partition-method 'type:transformer|embedding'
// now give the embedding and the head a layer's slot (plan edge_layer_slots):
// BLOOM 9.9% -> 8.8%, in-sample 5.5% -> 5.0%; the A100 fit without llm-foundry
// then leans on BLOOM, and llm-foundry went from 8.5% to 9.1%. Before GEMMs whose operand
// rows miss the tensor cores' 16-byte alignment ran at the FP32 peak (BLOOM's
// head dimensions 150 and 108): 10.8%, BLOOM 15.9%, SC21 18.0%. The way
// there, each step held out: 15.8% (before the FP8 Llama 3.1 405B runs joined),
// 14.3%, 13.4% (SC21 charged an FP32 accumulation pass its --fp16 scripts do
// not run), 11.8% (torchtitan's eager element-wise kernels priced as fused).
// 7.6% over 414 runs before torchtitan's Dec 2024 Float8 tables joined (13
// runs: 8B FSDP and CP to 262k tokens, 70B 2D, 405B 3D and 4D; 7.5% after),
// and Trainy's two H200 runs (10.7% held out, as the h100 family: 42% from the
// priors when H200 was a family of its own).
// Since issue 37 the corpus also holds 172 Neuron SDK and optimum-habana runs,
// guarded apart below; these guards now cover the GPU families (a100 7.32% over
// 288 runs, h100 7.90% over 127 at this commit, as before them) and the worst
// GPU source.
TEST(Validation, CrossSourceErrorDoesNotRegress) {
  const auto v = validate_runs(load_measured_dir(measured_dir()), spec::Calibration{}, default_fit_parameters(), false);
  EXPECT_GE(v.overall.timed_runs, 429 + 172);
  EXPECT_GE(v.by_source.size(), 13u);
  EXPECT_EQ(v.not_expressible, 0);
  EXPECT_GE(v.by_family.at("a100").timed_runs, 288);
  EXPECT_LE(v.by_family.at("a100").mape_cross_source, 0.0735);
  EXPECT_GE(v.by_family.at("h100").timed_runs, 127);
  // 7.87% -> 7.46% once Transformer Engine's FP8 sequence-parallel gathers
  // moved one byte, then 8.33% over 135 when NeMo's long-sequence table (8 runs,
  // 8K-1M tokens, CP up to 32) joined: held out 13.4%, all too slow; fitted on
  // the nemo-24.07 stack alone it is 1.4%, so the gap is the family fit's
  // compromise between stacks, not the CP or attention terms.
  // Then 8.2% with Megatron-Bridge's 405B rows priced at VP 8 as published, and
  // 8.5% once QK-norm was priced (Qwen3's Megatron-Bridge rows move the fit, whose
  // held-out optimum is shallow: llm-foundry 5.9% -> 6.1%, Megatron-Bridge 10.3% -> 10.1%).
  EXPECT_LE(v.by_family.at("h100").mape_cross_source, 0.086);
  std::set<std::string> gpu_sources;
  for (const auto& r : v.runs)
    if (r.timed && (r.family == "a100" || r.family == "h100")) gpu_sources.insert(r.run.source_id);
  // 0.140 until Megatron-Bridge's Llama 3.1 405B rows were priced as published
  // (VP 8 with edge slots, not 1F1B): they run 11-22% too fast, and the h100 fit
  // without megatron-lm-h100 then puts 100 us on every collective step, which
  // slows that source's TP 8 runs (32B 39% too slow held out): 14.1%.
  for (const std::string& source : gpu_sources)
    EXPECT_LE(v.by_source.at(source).mape_cross_source, 0.145) << source;
  EXPECT_LE(v.overall.mape_in_sample, v.overall.mape_cross_source);
}

// Issue 37's corpus: every revision of the Neuron SDK's training-performance
// tables (149 runs: NxD Llama, Neuron NeMo GPT and Llama, HF BERT; SDK 2.5-2.28)
// and the optimum-habana CI baselines (23 runs on Gaudi 1, 2 and 3), with each
// family's collective shares held to measured bands. Issue 37 asks 8% held out
// per family; at this commit trainium1 is 18.1% held out (HF BERT 19%, NxD 22%,
// Neuron NeMo 14%; 11.3% in sample; 24.9% and 15.6% before the tables' FP32
// rows were priced as the auto-cast FP32 models they are) and gaudi1 13.5%. Gaudi 2 and 3 have one
// source each, so held out they are predicted from the priors alone (37%,
// 204%); their in-sample error is guarded instead (24.6%, 48.0%: the CI
// baselines put several Gaudi3 runs below Gaudi2's). The guards hold these
// figures so no change makes them worse; they are not the target.
// Moved once, for a model that prices what runs: NxD's 2.20-2.24 rows (the
// tp_zero1 scripts and the Llama 3 70B one) run the NKI flash-attention kernel
// (stacks/neuronx-distributed-2.20.json). Priced so, NxD's own fit takes values
// inside every band (GEMM 0.62, attention 0.75, memory 0.67, NeuronLink 0.48,
// EFA 0.42) and the family is 9.4% in sample, but a family fit shared with HF
// BERT and Neuron NeMo, which pin the GEMM ceiling at its 1.0 bound, no longer
// leans on NxD's unfused softmax: held out trainium1 goes 17.8% -> 23.7%
// (HF BERT 17.7% -> 26.7%, NxD 23.5% -> 26.5%, Neuron NeMo 17.2% -> 14.5%).
// Held out as estimate prices a new source: a run whose stack has runs of
// other sources (5 or more) is predicted by that stack's fit on them; any other
// run keeps the family fit's figure. NeMo 24.07's two sources (its performance
// summary and the long-sequence table) predict each other within 2.9% where the
// family fit, pulled by the other H100 stacks, misses them by 9.9%.
// Moved once (3.5% -> 4.5%), for a model that prices what runs: Megatron-Core's
// column-parallel backward runs its TP collectives beside its own GEMMs
// (stacks/nemo.json tp_backward_overlap). NeMo 24.07's in-sample fit gets
// better (1.9% -> 1.7%; the summary's 7 runs alone: rms log error 0.030 ->
// 0.027, NVLink share 1.0, at its bound, -> 0.98) and the summary held out
// too (4.6% -> 4.0%), but the summary's 7 runs, GPT-3 175B now cheaper in TP,
// trade GEMM ceiling (0.51 -> 0.50) for attention (0.45 -> 0.48), and the
// long-sequence table, attention-bound, held out on them goes 1.4% -> 4.4%
// too fast: 2.9% -> 4.2% over the two. The family fit's figures improve
// (this stack held out 7.7% -> 6.8%, h100 7.7% -> 7.5%).
// As estimate looks a calibration up: the run's stack's own fit, else the fit of
// the nearest stack it extends, each fitted only on other sources' runs; a run
// whose chain has no such stack takes the family's held-out figure.
TEST(Validation, HeldOutAsPricedUsesTheStacksOwnFit) {
  const auto v = validate_runs(load_measured_dir(measured_dir()), spec::Calibration{}, default_fit_parameters(), false);
  int by_stack = 0;
  for (const auto& r : v.runs) {
    if (!r.timed) continue;
    std::vector<std::string> chain{r.run.stack};
    for (const std::string& base : spec::load_stack(r.run.stack).bases) chain.push_back(base);
    int most_elsewhere = 0;  // the most timed runs from other sources on the family of one stack in the chain
    for (const std::string& stack : chain) {
      int others = 0;
      for (const auto& o : v.runs)
        others += o.timed && o.family == r.family && o.run.stack == stack && o.run.source_id != r.run.source_id;
      most_elsewhere = std::max(most_elsewhere, others);
    }
    if (!r.priced_by_stack_fit) {
      EXPECT_LT(most_elsewhere, kOwnStackFitRuns) << r.run.id;
      EXPECT_DOUBLE_EQ(r.error_as_priced, r.error_cross_source) << r.run.id;
      continue;
    }
    ++by_stack;
    EXPECT_GE(most_elsewhere, kOwnStackFitRuns) << r.run.id;
  }
  EXPECT_EQ(by_stack, v.overall.priced_by_stack_fit);
  // SynapseAI 0.13's PyTorch BERT (stacks/pytorch-habana-0.13.json extends
  // deepspeed-habana): priced by seed 000's deepspeed-habana runs, never by its own.
  const GroupError& pytorch_habana = v.by_stack.at("pytorch-habana-0.13");
  EXPECT_EQ(pytorch_habana.priced_by_stack_fit, pytorch_habana.timed_runs);
  EXPECT_LE(pytorch_habana.mape_as_priced, 0.06);
  const GroupError& nemo = v.by_stack.at("nemo-24.07");
  EXPECT_EQ(nemo.priced_by_stack_fit, nemo.timed_runs);
  // 4.3% -> 4.9% once Transformer Engine's backward sequence-parallel gathers
  // move FP8 (cost/tensor_parallel.cpp): each source's rows, held out, are
  // priced by the other's fit, and the long-sequence rows' own error fell
  // (8.3% -> 7.0% held out by source) as the pair's fits moved apart.
  // 4.9% over 15 runs -> 5.9% over 16 when NeMo 24.07's GPT-3 20B row joined
  // from data/measured-pending (it fits since the allocator's share falls on
  // transients): held out, it is priced by the long-sequence table's fit alone.
  EXPECT_LE(nemo.mape_as_priced, 0.06);
  EXPECT_LT(nemo.mape_as_priced, nemo.mape_cross_source);
}

// Moved once more, by the corpus: the Neuron NeMo Llama 2 13B rows of SDK 2.16
// and 2.17 contradict their own table (16 nodes stated, the figure of 32;
// data/measured `left_out`) and are used nowhere. Without them Neuron NeMo's own
// fit goes 8.7% -> 3.3% in sample and 11.0% -> 8.6% held out, but held-out
// trainium1 goes 23.3% -> 44.8%: the LLM sources alone now fit memory-bound ops
// at up to 0.65 of HBM where HF BERT's runs need 0.26-0.32, so BERT held out is
// predicted 58% too fast (27% before; the two rows had pulled the LLM fits
// toward BERT's). BERT's rows run at one pace per micro-batch whatever its
// work: the host's recording of each micro-batch's graph, which the LLM runs
// hide and so cannot fit. With the prior trn1 and trn1n now state for it (the
// Gaudi lazy-mode fits, 4.82 +/- 2 ms per layer) held-out trainium1 is 20.4%
// (HF BERT 21.2%, NxD 29.9%, Neuron NeMo 12.0%), 8.1% in sample.
TEST(Validation, LeftOutRowsAreInNoFigure) {
  const auto runs = load_measured_dir(measured_dir());
  const auto v = validate_runs(runs, spec::Calibration{}, default_fit_parameters(), false);
  const auto is_left_out = [](const MeasuredRun& r) { return !r.left_out.empty(); };
  ASSERT_EQ(v.left_out.size(), size_t(std::count_if(runs.begin(), runs.end(), is_left_out)));
  ASSERT_GE(v.left_out.size(), 2u);
  for (const auto& [id, why] : v.left_out) {
    EXPECT_FALSE(why.empty()) << id;
    for (const auto& r : v.runs) EXPECT_NE(r.run.id, id);
    for (const auto& f : v.fits)
      for (const std::string& used : f.in_sample.fitted_on) EXPECT_NE(used, id);
  }
}

TEST(MeasuredRuns, EmptyLeftOutReasonIsRefused) {
  const nlohmann::json j = nlohmann::json::parse(R"({
    "table": "t", "source_id": "test", "stack": "deepspeed-habana", "stack_version": "test", "model": "bert-1.5b", "hardware": "dl1.24xlarge",
    "workload": {"seq_len": 128, "precision": "mixed-bf16", "global_batch": 64},
    "plan": {"micro_batch": 8},
    "runs": [{"instances": 1, "measured_seqs_per_s": 1.0, "source": "x", "left_out": ""}]})");
  try {
    measured_runs_from_json(j, "t.json");
    FAIL() << "an empty left_out was accepted";
  } catch (const spec::SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("runs[0].left_out"), std::string::npos) << e.what();
  }
}

TEST(Validation, TrainiumAndGaudiDoNotRegress) {
  const auto v = validate_runs(load_measured_dir(measured_dir()), spec::Calibration{}, default_fit_parameters(), false);
  // 154 runs less the six HF BERT rows the 2.6.0 table repeats from 2.5.0
  // (MeasuredRuns.NoMeasurementIsCountedTwice): one measurement, counted once.
  EXPECT_GE(v.by_family.at("trainium1").timed_runs, 148);
  // NxD's selective recompute priced as its code runs it (the NKI flash kernel
  // bypasses the CoreAttention module it wraps, so only the SwiGLU activation
  // re-runs; at 8,192 tokens the TP/PP example wraps the whole MLP too: stacks
  // neuronx-distributed*.json): NxD Llama 29.9% -> 27.8% held out (Llama 3.1
  // 70B +42-50% -> +28-36%), but trainium1 20.4% -> 22.5% as HF BERT, held out,
  // takes a fit on LLM runs that now carry less recompute (21.2% -> 24.5%).
  // Neuron NeMo's separate gate and up layers (stacks/neuronx-nemo-megatron.json
  // gate_up_projection): Neuron NeMo 13.3% -> 11.6% held out, and the fit on the
  // LLM sources lands at another optimum (memory-bound ops 0.32 of HBM, GEMM
  // ceiling 1.0, against 1.0 and 0.81), so HF BERT held out 24.5% -> 13.9% and
  // trainium1 22.5% -> 15.2%; without the repeated rows 14.4%. A job that
  // later releases republished weighing as one run (validate::run_weights):
  // 13.6% held out, 8.7% in sample (7.4% before: the 21 BERT revisions no longer
  // pull the family's factors to themselves). The HF BERT scripts leave the
  // Neuron runtime's launch synchronous (stacks/torch-neuronx-hf.json
  // sync_launch_share 0.12, the runtime guide's figure for what asynchronous
  // execution saves in training; the other trn1 stacks turn it on): held out
  // trainium1 13.6% -> 10.1% (HF BERT 14.2% -> 9.7%, NxD 19.1% -> 13.4%, seed
  // 001 4.6% -> 3.1%, Neuron NeMo 7.9% -> 10.7%), in sample 8.7% -> 9.0%.
  // Neuron NeMo's Llama 2 7B rows of 2.15-2.17 read with the layout of the
  // tutorial they link (TP 8 / PP 1 / batch 256; the rows print the 13B job's
  // TP 8 / PP 4 / 1024): Neuron NeMo 10.7% -> 6.7% held out, NxD 13.4% ->
  // 12.5%, but the fit on the LLM sources alone moves to GEMM 0.64 and
  // memory-bound ops 0.87 of HBM, so HF BERT held out 9.7% -> 12.9% and
  // trainium1 10.1% -> 11.6% (in sample 9.0% -> 8.9%).
  EXPECT_LE(v.by_family.at("trainium1").mape_cross_source, 0.12);
  EXPECT_LE(v.by_family.at("trainium1").mape_in_sample, 0.115);
  EXPECT_GE(v.by_family.at("gaudi1").timed_runs, 18);
  // Habana's PyTorch BERT-Large pre-training on SynapseAI 0.13 (two BF16 rows,
  // data/measured/habana-model-references-pt-bert-large-pretraining-hls1.json)
  // waits for the device every micro-step (stacks/pytorch-habana-0.13.json):
  // priced as estimate prices them, by the deepspeed-habana fit on seed 000, they
  // are -4% and -2% held out; the family fit without their source puts the host's
  // recording at 5 ms per layer where they take about 8, so +13% and +22%, and
  // gaudi1 held out goes 12.1% -> 14.7% (in sample 7.2% -> 8.4%).
  EXPECT_LE(v.by_family.at("gaudi1").mape_cross_source, 0.15);
  EXPECT_GE(v.by_family.at("gaudi2").timed_runs + v.by_family.at("gaudi3").timed_runs, 31);
  // Lazy mode's host recording per micro-batch (stacks lazy_tracing, fitted
  // 4.5-5.1 ms per layer on each Gaudi family): gaudi2 15.6% -> 10.1% in sample
  // over 22 runs and 36.9% -> 34.0% held out, gaudi3 48.0% -> 26.3% in sample.
  // The GEMM ceiling held inside the band a measured best-shape matmul gives
  // (hardware/*.json matmul_share; Gaudi 3: 0.27-0.68 of its 1835 TFLOP/s peak,
  // where its CI fine-tunes alone had fitted 0.17): gaudi3 26.9% -> 32.9% in
  // sample, 99.4% -> 80.0% held out; the CI runs held out 57.1% -> 49.6%.
  EXPECT_LE(v.by_family.at("gaudi2").mape_in_sample, 0.11);
  EXPECT_LE(v.by_family.at("gaudi3").mape_in_sample, 0.34);
  // The Gaudi descriptors' host-recording prior (HF BERT's plateau on trn1,
  // 5.9 ms per layer): held out gaudi2 34.0% -> 29.2%, gaudi3 204.5% -> 100.7%
  // (one source: priors only), optimum-habana's CI 104.2% -> 58.9%.
  // Then, with responsiveness asked at the prior (a fit now takes the recording
  // where the runs see it at 5.9 ms, not only at 0): gaudi2 29.6%, the CI runs
  // 61.3%, gaudi1 9.4% -> 12.4% (its CI runs held out, seed 000 and the TF BERT
  // runs fit the recording at 10.2 ms per layer).
  EXPECT_LE(v.by_family.at("gaudi2").mape_cross_source, 0.30);
  EXPECT_LE(v.by_family.at("gaudi3").mape_cross_source, 0.81);
  // 51.0% -> 51.2% when the FP8 backward gathers (cost/tensor_parallel.cpp)
  // moved the gaudi2 fit that prices these runs held out toward Intel's
  // Megatron-DeepSpeed rows (16.2% -> 13.6% held out; gaudi2 23.6% -> 22.3%).
  EXPECT_LE(v.by_source.at("optimum-habana-ci").mape_cross_source, 0.52);
}

// A run counts in every kind it is; the three new kinds also gather together.
TEST(Validation, RunKindsNameMoeLongContextAndFp8) {
  RunResult r;
  r.estimate.total_parameters = r.estimate.active_parameters = 7e9;
  r.run.workload.seq_len = 4096;
  EXPECT_EQ(run_kinds(r), std::vector<std::string>{"dense 16-bit under 32k tokens"});
  r.estimate.active_parameters = 3e9;
  r.run.plan.cp = 2;
  r.run.workload.precision = spec::Precision::fp8;
  EXPECT_EQ(run_kinds(r), (std::vector<std::string>{"mixture of experts", "long context (CP > 1 or 32k+ tokens)", "fp8",
                                                    "moe, long context or fp8"}));
  r.run.plan.cp = 1;
  r.run.workload.seq_len = 32768;
  EXPECT_EQ(run_kinds(r)[1], "long context (CP > 1 or 32k+ tokens)");
}

// Issue 15's target: the published MoE, long-context and FP8 runs within 12%
// held out. Guard at this commit: 5.3% over 50 runs, long context 4.0%, FP8 6.5%
// over 24, MoE 7.9% over 6 (DeepSeek-V3 and a Qwen3 30B-A3B row joined at 22.6%
// and 14.5% slow; before them 5.4%, 5.0%, 5.3% and 2.0%; 6.8% and
// 7.1% before BLOOM's and SC21's dropout moved the A100 fit; 6.7% over
// 41 runs before NeMo 24.07's seven FP8 rows, two with CP 2, joined at 6.6%; 7.8% and
// 8.6% before unfused attention's softmax got its own ceiling; 6.9% and
// 7.3% before BLOOM's edge layer slots moved the A100 fit, llm-foundry's 32k-64k
// rows now predicted too fast where they were too slow; 6.6% and 7.0% before the
// alignment rule; 17.0% while
// torchtitan's and torchtune's eager RMSNorm, SwiGLU and rotary kernels were priced
// as fused: the A100 fit without llm-foundry then put their cost on the attention
// factor, 0.29, and llm-foundry's 32k and 64k A100 rows ran 25-37% slow held out);
// FP8 5.4% over 22 runs (4.8% over 15 before NeMo 24.07), MoE 2.0%. torchtitan's
// Dec 2024 Float8 tables (13 runs) and Trainy's H200 pair then took the gathered
// kinds from 5.3% to 5.8% over 65 runs and FP8 from 6.5% to 7.3% over 39: its 70B 2D row runs 26% faster
// than predicted without async TP, 4% with it, and its 405B 1F1B row 21% slower.
// Held-out MAPE of the timed runs of `kind` on `families` (every family when empty).
static double kind_mape(const ValidationResult& v, const std::string& kind, const std::set<std::string>& families = {}) {
  double sum = 0;
  int n = 0;
  for (const RunResult& r : v.runs) {
    if (!r.timed || (!families.empty() && !families.count(r.family))) continue;
    const std::vector<std::string> kinds = run_kinds(r);
    if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) continue;
    sum += std::abs(r.error_cross_source);
    ++n;
  }
  return n ? sum / n : 0;
}

TEST(Validation, NewKindsOfRunDoNotRegress) {
  const auto v = validate_runs(load_measured_dir(measured_dir()), spec::Calibration{}, default_fit_parameters(), false);
  const GroupError& g = v.by_kind.at("moe, long context or fp8");
  EXPECT_GE(g.timed_runs, 86);
  // The GPU runs of the new kinds, where these limits were set. NeMo's
  // long-sequence table (8 FP8 runs, 8K-1M tokens) took the gathered kinds from
  // 5.8% to 7.6% over 73 runs, long context from 4.2% over 41 to 7.2% over 47
  // and FP8 from 7.3% to 8.9% over 47: it runs 13.4% too slow held out.
  const std::set<std::string> gpus{"a100", "h100"};
  // NCCL's NVLink step (3.4 us) capping the fitted per-step latency inside
  // DGX and AWS GPU instances (hardware collective_step_latency_us.fabric_high):
  // SC21 held out 13.8% -> 7.3%, h100 8.1% -> 7.7%, but the A100 fit without
  // llm-foundry now rests its attention factor on torchtitan's eight A100 runs
  // alone (0.42, was 0.49), so llm-foundry's 32k-64k rows run 8-14% slow held
  // out: the gathered kinds 7.6% -> 8.5%, long context 7.4% -> 9.2%.
  // Megatron-Bridge's four GPT-OSS 120B rows (the corpus's first BF16 NeMo runs;
  // MoE, 128-token windows, head_dim 64) run 19-23% too fast in sample and held out,
  // unexplained (reports/validation.md): the gathered GPU kinds 8.5% -> 9.2%.
  EXPECT_LE(kind_mape(v, "moe, long context or fp8", gpus), 0.093);
  EXPECT_LE(kind_mape(v, "long context (CP > 1 or 32k+ tokens)", gpus), 0.093);
  // 9.0% until the 405B VP 8 rows were priced as published (9.01%); 9.24% with
  // torchtitan's 405B Interleaved 1F1B row (+26% in sample, as its 1F1B twin's +20%).
  EXPECT_LE(kind_mape(v, "fp8", gpus), 0.093);
  // Every family: Intel's Gaudi 2 page adds 13 FP8 runs, 16-37% too slow held out
  // (the gaudi2 fit without them is the optimum-habana CI's short fine-tuning
  // runs): FP8 8.9% -> 12.4% over 60 runs, the gathered kinds 7.6% -> 10.2% over 86.
  // Pricing cuDNN's attention at its measured 1.6x FlashAttention-2 (was an
  // assumed 1.5x; stacks/nemo.json) took the gathered kinds from 9.5% to 8.8%,
  // long context from 7.2% to 6.1%, FP8 from 11.3% to 10.6%, and the 6 MoE runs
  // from 8.3% to 8.6% (Megatron-Bridge's Qwen3 MoE rows, whose attention is a
  // small share, move with the H100 GEMM fit).
  // Megatron-Bridge's Llama 3.1 405B rows (FP8, CP 2) priced as published, VP 8
  // with edge slots instead of 1F1B with uneven stages, run 12-23% too fast held
  // out: the gathered kinds 8.9% -> 8.91%, long context 6.0% -> 7.2%, FP8 10.8% -> 10.80%.
  // NCCL's NVLink step cap (above): the gathered kinds 8.9% -> 9.6%, long context 7.4% -> 9.2%.
  // GPT-OSS 120B's four rows (above): the gathered kinds 9.6% -> 10.2%.
  EXPECT_LE(g.mape_cross_source, 0.102);
  EXPECT_LE(v.by_kind.at("long context (CP > 1 or 32k+ tokens)").mape_cross_source, 0.093);
  EXPECT_GE(v.by_kind.at("mixture of experts").timed_runs, 10);
  // 7.9% -> 8.2% as the H100 fit took torchtitan's 2024-25 runs, 8.3% with the long-sequence table,
  // 8.6% with cuDNN at 1.6x, 10.1% over 10 runs with GPT-OSS 120B's four (19-23% too fast).
  EXPECT_LE(v.by_kind.at("mixture of experts").mape_cross_source, 0.102);
  EXPECT_GE(v.by_kind.at("fp8").timed_runs, 60);
  EXPECT_LE(v.by_kind.at("fp8").mape_cross_source, 0.109);
}

// Memory against the corpus's measured memory, and the fit boundary. Issue
// 12's targets: MAPE <= 10% overall and <= 15% per source, no run that ran
// refused, >= 90% of published OOMs refused. At this commit: 6.0% over 247
// runs, 33 of them the Megatron-LM CI's MoE tests, all 1-15% under (5-15%
// before their GeLU experts kept the probability-scaled activation; 5.6% over
// the other 214; 6.2% before a tied output layer on BERT's last pipeline stage kept its
// copy of the word embedding: Megatron-LM CI's BERT PP rows 11-16% -> 1-7% under; torchtitan 4.3% over 19: its H200 pair 1-5% under with the compiled
// loss's 4 bytes per logit, stacks/torchtitan-compile-2025.json; its 70B TP 8
// pair 12-18% under before loss_parallel's 16 bytes, loss_bytes_per_logit_tp; its 405B PP rows were 46-52% under before the
// stage was held gathered, stacks/torchtitan.json fsdp_gathered_under_pipeline),
// every source at most 12.7% (ms-swift, its Qwen3-30B-A3B Megatron run 26%
// under; torchtune's one run 14.9% -> 0.4% under once its eager RMSNorm and
// SwiGLU keep what autograd saves, stacks eager_activations), none of 531
// runs that ran refused, 17 of 24 OOMs refused (bigscience's V100 PP 2 MBS 16
// on 32 GB since DeepSpeed's pipeline loss counts the 16-bit logit gradient;
// the BERT SQuAD baseline's micro-batch 32 on 32 GB since NVIDIA's erf GELU
// keeps three FFN-wide intermediates, 0.71 GiB per sample as measured on an
// H200). The seven accepted have no modelled cause: BLOOM L82 H14336 at 60.2
// GiB (its neighbours ran at 60-67 GB), Qwen-7B on 2 A100s at 2,048 to 8,192
// tokens (70.3-79.4 GiB; the README's rows that ran grow about 11 GB per GPU
// from 256 to 1,024 tokens, more than the 8.4 MB per token its eager layers
// keep even without checkpointing, measured on an H200), and the BERT
// baseline at micro-batch 6 and 8 on V100 16 GB (12.9, 14.5 GiB) and 24 on
// 32 GB (26.9 GiB): its limits need 1.2-1.9 GiB per sample.
TEST(Validation, MemoryErrorAndFitBoundaryDoNotRegress) {
  const auto v = validate_runs(load_measured_dir(measured_dir()), spec::Calibration{}, default_fit_parameters(), false);
  EXPECT_GE(v.overall.memory_runs, 247);
  EXPECT_LE(v.overall.memory_mape, 0.060);
  EXPECT_GE(v.by_source.size(), 3u);
  for (const auto& [source, figures] : v.by_source)
    if (figures.memory_runs > 0) EXPECT_LE(figures.memory_mape, 0.15) << source;
  // No run that ran is refused (issue 40). The last two were optimum-habana CI
  // baselines: CodeLlama-13B ZeRO-1 at micro-batch 48 on Gaudi2 (121 GiB of 96
  // while DeepSpeed's ZeRO-1 gradients were counted in the forward, which
  // stage_1_and_2.py frees at each step; now 88.7) and BLOOM-7B1 ZeRO-3 at
  // micro-batch 8 on Gaudi1 (38.4 GiB of 32 with FP32 logits, a 1 GB bucket and
  // the replayed layer beside the loss; its release's BF16 loss, hidden^2 bucket
  // and a trainer that drops the logits before backward give 31.5).
  EXPECT_EQ(v.ran_refused, 0);
  EXPECT_GE(v.published_oom, 24);
  EXPECT_GE(v.oom_refused, 17);
}

// The largest component is named among what the run's counter sees, for the
// stage it measured: a peak-allocated figure holds no allocator or runtime
// reserve, so neither may be named as its largest part (the tiny Megatron CI
// models were labelled "runtime reserve" before).
TEST(Validation, LargestMemoryComponentIsOneTheCounterSees) {
  const auto v = validate_runs(load_measured_dir(measured_dir()), spec::Calibration{}, default_fit_parameters(), false);
  int allocated = 0;
  for (const auto& r : v.runs) {
    if (!r.run.memory || r.problem != cost::PlanProblem::none) continue;
    EXPECT_FALSE(r.memory_largest_component.empty()) << r.run.id;
    if (r.run.memory->counter != MemoryCounter::peak_allocated) continue;
    ++allocated;
    EXPECT_NE(r.memory_largest_component, "runtime reserve") << r.run.id;
    EXPECT_NE(r.memory_largest_component, "allocator reserve") << r.run.id;
  }
  EXPECT_GE(allocated, 50);
}

// Seed 000: 98.04 / 95.88 / 90.39% at 2 / 4 / 8 instances. Within 3 points
// while the fit could put dl1's EFA at 5% of line rate; with EFA held to its
// measured band (30-80%) the in-sample model keeps 99.4 / 98.9 / 98.4%: the
// loss past 2 instances is not bandwidth and stays unexplained
// (reports/validation.md, Trainium and Gaudi). The guard keeps the shape (no
// gain with size) and the gap at this commit's 8 points.
TEST(Validation, BertLargeScalingShapeOnDl1) {
  const auto v = validate_runs(seed_runs(), spec::Calibration{});
  int checked = 0;
  for (const auto& r : v.runs)
    if (r.run.model == "bert-large" && r.run.plan.instances > 1) {
      EXPECT_LE(r.efficiency_in_sample, 1.0 + 1e-9) << r.run.id;
      EXPECT_NEAR(r.efficiency_in_sample, r.efficiency_measured, 0.085) << r.run.id;
      ++checked;
    }
  EXPECT_EQ(checked, 3);
}

}  // namespace
}  // namespace trainplan::validate

namespace trainplan::validate {
namespace {

TEST(PublishedChoices, Seed002LoadsAsPublished) {
  const auto choices = load_published_choices((std::filesystem::path(spec::data_root()) / "data" / "published-choices").string());
  ASSERT_EQ(choices.size(), 1u);
  const PublishedChoice& c = choices[0];
  EXPECT_EQ(c.plan.instances, 128);
  EXPECT_EQ(c.plan.tp, 8);
  EXPECT_EQ(c.plan.pp, 1);
  EXPECT_TRUE(c.plan.sp);
  EXPECT_EQ(c.plan.micro_batch, 1);
  EXPECT_EQ(c.workload.global_batch_seqs, 1024);
  EXPECT_EQ(c.workload.seq_len, 4096);
  EXPECT_EQ(c.held_fixed, (std::vector<HeldField>{HeldField::recompute, HeldField::micro_batch, HeldField::zero}));
  EXPECT_NE(c.held_fixed_source.find("line 87"), std::string::npos) << c.held_fixed_source;
}

// A field the check cannot hold is refused naming the file and the path.
TEST(PublishedChoices, HeldFixedNamesOnlyFieldsTheCheckCanHold) {
  const auto j = nlohmann::json::parse(R"({"name": "x", "source": "s", "model": "llama2-7b", "instances": 4,
    "hardware": "trn1.32xlarge", "stack": "neuronx-distributed", "workload": {"seq_len": 4096, "global_batch": 1024, "precision": "bf16-sr"},
    "plan": {"tp": 8}, "held_fixed": {"value": ["recompute", "tp"], "source": "s"}})");
  try {
    published_choice_from_json(j, "c.json");
    FAIL() << "accepted tp as held fixed";
  } catch (const spec::SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("c.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("held_fixed.value"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("\"tp\""), std::string::npos) << e.what();
  }
}

TEST(PublishedChoices, MissingInstancesNamesTheField) {
  const auto j = nlohmann::json::parse(R"({"name": "x", "source": "s", "model": "llama2-7b",
    "hardware": "trn1.32xlarge", "stack": "neuronx-distributed", "workload": {"seq_len": 4096, "global_batch": 1024, "precision": "bf16-sr"},
    "plan": {"tp": 8}})");
  try {
    published_choice_from_json(j, "c.json");
    FAIL() << "accepted a choice without instances";
  } catch (const spec::SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("c.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("instances"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace trainplan::validate
