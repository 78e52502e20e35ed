// The measured figure of a published run, converted to seq/s of the whole
// cluster (validate/measured_figure.h), the sources' FLOP counts, and the
// measured-run file format (data/measured/README.md): per-row overrides,
// ids, one figure per row, memory and out-of-memory rows.
#include <gtest/gtest.h>

#include <string>
#include <nlohmann/json.hpp>

#include "spec/error.h"
#include "spec/load.h"
#include "validate/measured_figure.h"
#include "validate/measured_run.h"

namespace trainplan::validate {
namespace {

using nlohmann::json;

// A one-row table; each test edits it.
json table() {
  return json::parse(R"({
    "table": "t", "source_id": "src", "stack": "megatron-lm", "stack_version": "v1",
    "model": "gpt-sc21-1.7b", "hardware": "dgx-a100-80gb",
    "workload": {"seq_len": 2048, "global_batch": 512, "precision": "mixed-bf16"},
    "plan": {"tp": 1, "pp": 1, "micro_batch": 4, "zero": 1, "recompute": "full"},
    "runs": [{"instances": 1, "measured_seqs_per_s": 100, "source": "row 1"}]})");
}

json row(const std::string& text) { return json::parse(text); }

// Expects a SpecError naming the file, a JSON path containing `path_part`,
// and a message containing `expected_part`.
void expect_refused(const json& j, const std::string& path_part, const std::string& expected_part) {
  try {
    measured_runs_from_json(j, "dir/t.json");
    FAIL() << "accepted a bad table; expected an error at " << path_part;
  } catch (const spec::SpecError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.file(), "dir/t.json") << what;
    EXPECT_EQ(what.rfind("dir/t.json: ", 0), 0u) << what;
    EXPECT_NE(e.json_path().find(path_part), std::string::npos) << what;
    EXPECT_NE(what.find(path_part), std::string::npos) << what;
    EXPECT_NE(what.find(expected_part), std::string::npos) << what;
  }
}

MeasuredRun only_run(const json& j) {
  const auto runs = measured_runs_from_json(j, "dir/t.json");
  EXPECT_EQ(runs.size(), 1u);
  return runs.at(0);
}

// ---- each kind to seq/s ----------------------------------------------------------

TEST(MeasuredFigure, SeqsPerSecondIsTakenAsIs) {
  json j = table();
  j["runs"][0] = row(R"({"instances": 8, "measured_seqs_per_s": 1883.63, "source": "s"})");
  const MeasuredRun r = only_run(j);
  EXPECT_EQ(r.kind, MeasuredKind::seqs_per_s);
  EXPECT_DOUBLE_EQ(measured_seqs_per_s(r, spec::load_model(r.model), 64), 1883.63);
  EXPECT_DOUBLE_EQ(measured_seqs_per_s(r, spec::load_model(r.model), 8), 1883.63);  // whatever the devices
}

TEST(MeasuredFigure, TokensPerSecondPerDeviceTimesDevicesOverSeqLen) {
  json j = table();
  j["runs"][0] = row(R"({"instances": 1, "measured_tokens_per_s_per_device": 3400, "source": "s"})");
  const MeasuredRun r = only_run(j);
  EXPECT_EQ(r.kind, MeasuredKind::tokens_per_s_per_device);
  EXPECT_DOUBLE_EQ(r.measured_value, 3400);
  // 3400 tokens/s/GPU x 8 GPUs / 2048 tokens per sequence = 13.28125 seq/s.
  EXPECT_DOUBLE_EQ(measured_seqs_per_s(r, spec::load_model(r.model), 8), 13.28125);
  // x 64 GPUs: 3400 x 64 / 2048 = 106.25 seq/s.
  EXPECT_DOUBLE_EQ(measured_seqs_per_s(r, spec::load_model(r.model), 64), 106.25);
}

TEST(MeasuredFigure, StepSecondsIsGlobalBatchOverStep) {
  json j = table();
  j["runs"][0] = row(R"({"instances": 4, "measured_step_s": 4.0, "source": "s"})");
  const MeasuredRun r = only_run(j);
  EXPECT_EQ(r.kind, MeasuredKind::step_s);
  EXPECT_EQ(r.workload.global_batch_seqs, 512);
  // 512 sequences per step / 4 s per step = 128 seq/s, whatever the devices.
  EXPECT_DOUBLE_EQ(measured_seqs_per_s(r, spec::load_model(r.model), 32), 128.0);
}

TEST(MeasuredFigure, ModelTflopsPerDeviceUnderTheSourcesFlopCount) {
  json j = table();
  j["flops_formula"] = "megatron-2021";
  j["runs"][0] = row(R"({"instances": 4, "measured_model_tflops_per_device": 137, "source": "s"})");
  const MeasuredRun r = only_run(j);
  EXPECT_EQ(r.kind, MeasuredKind::model_tflops_per_device);
  EXPECT_EQ(r.flops_formula, "megatron-2021");
  // 137e12 FLOP/s x 32 GPUs / 30,208,652,476,416 FLOPs per sequence (below) = 145.12398... seq/s.
  EXPECT_NEAR(measured_seqs_per_s(r, spec::load_model(r.model), 32), 145.12398404472376, 1e-9);
}

TEST(MeasuredFigure, MemoryOnlyRowHasNoFigure) {
  json j = table();
  j["runs"][0] = row(R"({"instances": 1, "memory": {"gib": 61.2, "what": "peak-reserved", "source": "m"}, "source": "s"})");
  const MeasuredRun r = only_run(j);
  EXPECT_EQ(r.kind, MeasuredKind::none);
  EXPECT_DOUBLE_EQ(measured_seqs_per_s(r, spec::load_model(r.model), 8), 0);
}

// ---- the sources' FLOP counts -------------------------------------------------------

TEST(SourceFlops, Megatron2021OnSc21Models) {
  // gpt-sc21-1.7b: l 24, h 2304, V 51,200, s 2048.
  // 96 s l h^2 = 96 x 2048 x 24 x 2304^2 = 25,048,249,270,272;
  // 1 + s/(6h) + V/(16 l h) = 1 + 2048/13824 + 51200/884736 = 1 + 64/432 + 25/432 = 521/432;
  // product = 30,208,652,476,416 FLOPs per sequence.
  const auto small = spec::load_model("gpt-sc21-1.7b");
  EXPECT_DOUBLE_EQ(source_flops_per_sequence("megatron-2021", small, 2048, "t.json"), 30208652476416.0);
  // gpt-sc21-18b: l 40, h 6144. 96 x 2048 x 40 x 6144^2 = 296,868,139,499,520;
  // 1 + 2048/36864 + 51200/393216 = 1 + 64/1152 + 150/1152 = 1231/1152;
  // product = 317,226,284,482,560.
  const auto big = spec::load_model("gpt-sc21-18b");
  EXPECT_DOUBLE_EQ(source_flops_per_sequence("megatron-2021", big, 2048, "t.json"), 317226284482560.0);
}

TEST(SourceFlops, MegatronCore2024OnGqaSwiGlu) {
  // llama3-8b: l 32, h 4096, a 32, g 8, f 14336, V 128,256 (no padding), SwiGLU, s 4096.
  // 12 s l h^2 = 12 x 4096 x 32 x 4096^2 = 26,388,279,066,624;
  // (1 + g/a + s/h) q/h = (1 + 0.25 + 1) x 1 = 2.25; f/h x 3/2 = 3.5 x 1.5 = 5.25;
  // V/(2 l h) = 128256/262144 = 0.4892578125; sum 7.9892578125 (8181/1024);
  // product = 210,822,764,691,456 FLOPs per sequence.
  const auto llama = spec::load_model("llama3-8b");
  ASSERT_EQ(llama.mlp, spec::MlpKind::swiglu);
  ASSERT_EQ(llama.kv_heads, 8);
  EXPECT_DOUBLE_EQ(source_flops_per_sequence("megatron-core-2024", llama, 4096, "t.json"), 210822764691456.0);
  // At s 8192: 12 s l h^2 = 52,776,558,133,248; sum 2.25 + 1 + 5.25 + 0.4892578125 = 8.9892578125;
  // product = 474,422,087,516,160.
  EXPECT_DOUBLE_EQ(source_flops_per_sequence("megatron-core-2024", llama, 8192, "t.json"), 474422087516160.0);
}

TEST(SourceFlops, MegatronCore2024GeluHasNoGateFactor) {
  // megatron-ci-gpt-7b-gqa: GeLU, l 32, h 4096, a 32, g 8, f 16384, V 131,072, s 8192.
  // 12 s l h^2 = 52,776,558,133,248; (1 + 0.25 + 2) + 16384/4096 x 1 + 131072/262144 = 3.25 + 4 + 0.5 = 7.75;
  // product = 409,018,325,532,672.
  const auto gpt = spec::load_model("megatron-ci-gpt-7b-gqa");
  ASSERT_EQ(gpt.mlp, spec::MlpKind::gelu);
  EXPECT_DOUBLE_EQ(source_flops_per_sequence("megatron-core-2024", gpt, 8192, "t.json"), 409018325532672.0);
}

TEST(SourceFlops, UnknownFormulaNamesFlopsFormula) {
  const auto m = spec::load_model("gpt-sc21-1.7b");
  try {
    source_flops_per_sequence("palm-2022", m, 2048, "dir/t.json");
    FAIL() << "accepted an unknown FLOP formula";
  } catch (const spec::SpecError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.file(), "dir/t.json") << what;
    EXPECT_EQ(e.json_path(), "flops_formula") << what;
    EXPECT_NE(what.find("palm-2022"), std::string::npos) << what;
    EXPECT_NE(what.find("megatron-2021"), std::string::npos) << what;
  }
}

TEST(SourceFlops, TflopsRowWithoutAFormulaIsRefused) {
  json j = table();
  j["runs"][0] = row(R"({"instances": 4, "measured_model_tflops_per_device": 137, "source": "s"})");
  expect_refused(j, "flops_formula", "measured_model_tflops_per_device");
}

// ---- per-row overrides and ids ---------------------------------------------------------

TEST(MeasuredRunFile, RowOverridesMergeOverTheFilesPlanWorkloadAndModel) {
  json j = table();
  j["runs"] = json::array({row(R"({"instances": 1, "measured_seqs_per_s": 10, "source": "a"})"),
                           row(R"({"instances": 2, "model": "gpt-sc21-18b",
                                   "plan": {"tp": 8, "sp": true, "recompute": "selective"},
                                   "workload": {"seq_len": 4096, "global_batch": 1024},
                                   "measured_seqs_per_s": 20, "source": "b"})")});
  const auto runs = measured_runs_from_json(j, "dir/t.json");
  ASSERT_EQ(runs.size(), 2u);
  // Row 0: the file's values.
  EXPECT_EQ(runs[0].model, "gpt-sc21-1.7b");
  EXPECT_EQ(runs[0].plan.tp, 1);
  EXPECT_FALSE(runs[0].plan.sp);
  EXPECT_EQ(runs[0].plan.recompute, spec::Recompute::full);
  EXPECT_EQ(runs[0].workload.seq_len, 2048);
  EXPECT_EQ(runs[0].workload.global_batch_seqs, 512);
  // Row 1: its own values where it states them, the file's elsewhere.
  EXPECT_EQ(runs[1].model, "gpt-sc21-18b");
  EXPECT_EQ(runs[1].plan.tp, 8);
  EXPECT_TRUE(runs[1].plan.sp);
  EXPECT_EQ(runs[1].plan.recompute, spec::Recompute::selective);
  EXPECT_EQ(runs[1].plan.micro_batch, 4);  // from the file
  EXPECT_EQ(runs[1].plan.zero, 1);         // from the file
  EXPECT_EQ(runs[1].workload.seq_len, 4096);
  EXPECT_EQ(runs[1].workload.global_batch_seqs, 1024);
  EXPECT_EQ(runs[1].workload.precision, runs[0].workload.precision);  // from the file
  EXPECT_EQ(runs[1].plan.instances, 2);
  // File-level fields every row shares.
  for (const auto& r : runs) {
    EXPECT_EQ(r.table, "t");
    EXPECT_EQ(r.source_id, "src");
    EXPECT_EQ(r.stack, "megatron-lm");
    EXPECT_EQ(r.stack_version, "v1");
    EXPECT_EQ(r.hardware, "dgx-a100-80gb");
  }
}

TEST(MeasuredRunFile, OverrideMustBeAnObject) {
  json j = table();
  j["runs"][0]["plan"] = 8;
  expect_refused(j, "runs[0].plan", "an object");
}

// An override's bad field should be reported at the row it is in.
// BUG (measured_run.cpp, read_workload_and_plan): the merged plan/workload is
// read with the paths "plan" / "workload", so an error in runs[1]'s own
// override is reported as "plan.tp" (the file-level plan, which is fine)
// instead of "runs[1].plan.tp".
TEST(MeasuredRunFile, BadOverrideNamesItsRow) {
  json j = table();
  j["runs"].push_back(row(R"({"instances": 2, "plan": {"tp": "two"}, "measured_seqs_per_s": 1, "source": "b"})"));
  expect_refused(j, "runs[1].plan.tp", "an integer");
}

TEST(MeasuredRunFile, IdsAreFileStemAndRowIdOrInstances) {
  json j = table();
  j["runs"] = json::array({row(R"({"instances": 1, "measured_seqs_per_s": 10, "source": "a"})"),
                           row(R"({"instances": 1, "id": "mbs8", "measured_seqs_per_s": 10, "source": "b"})")});
  const auto runs = measured_runs_from_json(j, "dir/t.json");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].id, "t#1");
  EXPECT_EQ(runs[1].id, "t#mbs8");
}

TEST(MeasuredRunFile, DuplicateRunIdsNameTheRow) {
  json j = table();
  j["runs"] = json::array({row(R"({"instances": 1, "id": "a", "measured_seqs_per_s": 10, "source": "a"})"),
                           row(R"({"instances": 2, "measured_seqs_per_s": 10, "source": "b"})"),
                           row(R"({"instances": 4, "id": "a", "measured_seqs_per_s": 10, "source": "c"})")});
  expect_refused(j, "runs[2].id", "\"a\" repeats");
  // Two rows at the same instance count without ids collide on the default id.
  j["runs"] = json::array({row(R"({"instances": 8, "measured_seqs_per_s": 10, "source": "a"})"),
                           row(R"({"instances": 8, "measured_seqs_per_s": 12, "source": "b"})")});
  expect_refused(j, "runs[1].id", "\"8\" repeats");
}

// ---- the figure, memory and outcome of a row -----------------------------------------------

TEST(MeasuredRunFile, TwoFiguresOnOneRowAreRefused) {
  json j = table();
  j["runs"][0] = row(R"({"instances": 1, "measured_seqs_per_s": 10, "measured_step_s": 3, "source": "s"})");
  expect_refused(j, "runs[0]", "exactly one measured_* figure");
  j["runs"][0] = row(R"({"instances": 1, "measured_tokens_per_s_per_device": 10,
                         "measured_model_tflops_per_device": 100, "source": "s"})");
  j["flops_formula"] = "megatron-2021";
  expect_refused(j, "runs[0]", "exactly one measured_* figure");
}

TEST(MeasuredRunFile, FigureMustBePositive) {
  json j = table();
  j["runs"][0]["measured_seqs_per_s"] = 0;
  expect_refused(j, "runs[0].measured_seqs_per_s", "a number > 0, got 0");
}

TEST(MeasuredRunFile, OutOfMemoryRowParsesWithoutFigure) {
  json j = table();
  j["runs"][0] = row(R"({"instances": 1, "id": "oom", "outcome": "out-of-memory", "source": "s"})");
  const MeasuredRun r = only_run(j);
  EXPECT_TRUE(r.out_of_memory);
  EXPECT_EQ(r.kind, MeasuredKind::none);
  EXPECT_FALSE(r.memory.has_value());
  EXPECT_EQ(r.id, "t#oom");
}

TEST(MeasuredRunFile, OutOfMemoryRowWithAFigureIsRefused) {
  json j = table();
  j["runs"][0] = row(R"({"instances": 1, "outcome": "out-of-memory", "measured_seqs_per_s": 10, "source": "s"})");
  expect_refused(j, "runs[0]", "no measured figure on an out-of-memory row");
}

TEST(MeasuredRunFile, RowWithNeitherFigureNorMemoryNorOomIsRefused) {
  json j = table();
  j["runs"][0] = row(R"({"instances": 1, "source": "s"})");
  expect_refused(j, "runs[0]", "a measured_* figure or a memory object");
  j["runs"][0]["outcome"] = "ran";  // stating the default changes nothing
  expect_refused(j, "runs[0]", "a measured_* figure or a memory object");
}

TEST(MeasuredRunFile, OutcomeIsRanOrOutOfMemory) {
  json j = table();
  j["runs"][0]["outcome"] = "failed";
  expect_refused(j, "runs[0].outcome", "one of ran, out-of-memory, got \"failed\"");
  j["runs"][0]["outcome"] = "ran";
  EXPECT_FALSE(only_run(j).out_of_memory);
}

TEST(MeasuredRunFile, MemoryInGibOrGb) {
  json j = table();
  j["runs"][0]["memory"] = row(R"({"gib": 61.2, "what": "peak-reserved", "source": "m"})");
  MeasuredRun r = only_run(j);
  ASSERT_TRUE(r.memory.has_value());
  EXPECT_DOUBLE_EQ(r.memory->bytes, 61.2 * 1073741824.0);  // GiB = 2^30 bytes
  EXPECT_EQ(r.memory->counter, MemoryCounter::peak_reserved);
  EXPECT_EQ(r.memory->stage, MemoryStage::heaviest);  // the default
  EXPECT_EQ(r.memory->source, "m");
  EXPECT_EQ(r.kind, MeasuredKind::seqs_per_s);  // a figure and memory on one row

  j["runs"][0]["memory"] = row(R"({"gb": 40, "what": "nvidia-smi", "source": "m"})");
  r = only_run(j);
  EXPECT_DOUBLE_EQ(r.memory->bytes, 40e9);  // GB = 10^9 bytes
  EXPECT_EQ(r.memory->counter, MemoryCounter::nvidia_smi);
}

TEST(MeasuredRunFile, MemoryWithBothOrNeitherUnitIsRefused) {
  json j = table();
  j["runs"][0]["memory"] = row(R"({"gib": 61.2, "gb": 65.7, "what": "peak-reserved", "source": "m"})");
  expect_refused(j, "runs[0].memory", "exactly one of gib or gb");
  j["runs"][0]["memory"] = row(R"({"what": "peak-reserved", "source": "m"})");
  expect_refused(j, "runs[0].memory", "exactly one of gib or gb");
}

TEST(MeasuredRunFile, MemoryStageAndCounter) {
  json j = table();
  j["runs"][0]["memory"] = row(R"({"gib": 30, "what": "peak-allocated", "stage": "last", "source": "m"})");
  MeasuredRun r = only_run(j);
  ASSERT_TRUE(r.memory.has_value());
  EXPECT_EQ(r.memory->stage, MemoryStage::last);
  EXPECT_EQ(r.memory->counter, MemoryCounter::peak_allocated);

  j["runs"][0]["memory"]["stage"] = "first";
  EXPECT_EQ(only_run(j).memory->stage, MemoryStage::first);

  j["runs"][0]["memory"]["stage"] = "middle";
  expect_refused(j, "runs[0].memory.stage", "one of first, last, heaviest, got \"middle\"");

  j["runs"][0]["memory"]["stage"] = "last";
  j["runs"][0]["memory"]["what"] = "peak";
  expect_refused(j, "runs[0].memory.what", "one of peak-allocated, peak-active, peak-reserved, nvidia-smi, got \"peak\"");
}

}  // namespace
}  // namespace trainplan::validate

namespace trainplan::validate {
namespace {

// A run's packed documents are read and cannot be longer than its sequences.
TEST(MeasuredRunFile, DocumentTokensWithinTheSequence) {
  json j = table();
  j["workload"]["document_tokens"] = 135;
  EXPECT_EQ(only_run(j).workload.document_tokens, 135);
  j["workload"]["document_tokens"] = 5000;  // sequences of 2048 tokens
  expect_refused(j, "document_tokens", "2048");
}

TEST(MeasuredRunFile, MisspeltPlanKeyIsRefusedWithASuggestion) {
  json j = table();
  j["plan"]["micro_batchs"] = 2;
  try {
    measured_runs_from_json(j, "t.json");
    FAIL() << "accepted plan.micro_batchs";
  } catch (const spec::SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("plan.micro_batchs"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("did you mean micro_batch?"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace trainplan::validate
