#include "export/deepspeed_optimizer.h"

#include <nlohmann/json.hpp>

#include "export/deepspeed_ms_args.h"
#include "spec/error.h"

namespace trainplan::exporting {

// An element count of zero_optimization as DeepSpeed's pydantic config takes it: an integer, or a
// JSON number with no fraction (run-175b.sh writes "sub_group_size": 1e9); `fallback`, DeepSpeed's
// default, where absent.
long long zero_element_count(const nlohmann::json& zero, const std::string& key, long long fallback,
                             const std::string& config_file) {
  if (!zero.contains(key)) return fallback;
  const nlohmann::json& v = zero[key];
  const double x = v.is_number() ? v.get<double>() : -1;
  if (!v.is_number() || x < 1 || x > 1e15 || x != double(static_cast<long long>(x)))
    throw spec::SpecError(config_file, "zero_optimization." + key, "a whole number of elements from 1 to 1e15, found " + v.dump());
  return static_cast<long long>(x);
}

// The optimizer wrapper DeepSpeed 0.16.2 builds for a ds_config at ZeRO stage 0-1 and the dtype it
// accumulates gradients in, as microsoft/DeepSpeed@b344c04d deepspeed/runtime/engine.py:939-954
// (get_data_types) and :1229-1281 (_do_optimizer_sanity_check) decide them; `raises` names what
// DeepSpeed refuses at start-up.
DeepSpeedOptimizer deepspeed_optimizer(bool fp16, bool bf16, int stage, const std::string& grad_accum_dtype,
                                       bool pipeline_engine) {
  DeepSpeedOptimizer o;
  o.model_dtype = fp16 ? "fp16" : bf16 ? "bf16" : "fp32";
  // Without data_types.grad_accum_dtype: FP32 for BF16 without ZeRO, else the model's dtype (:946-950).
  o.accumulation = !grad_accum_dtype.empty() ? grad_accum_dtype : bf16 && stage == 0 ? "fp32" : o.model_dtype;
  if (stage >= 1) {  // :1245-1248: BF16 with FP32 accumulation at stage 1 keeps the BF16 wrapper
    o.wrapper = bf16 && o.accumulation == "fp32" && stage == 1 ? DeepSpeedOptimizer::bf16_optimizer
                                                               : DeepSpeedOptimizer::zero_optimizer;
  } else if (o.accumulation == o.model_dtype) {  // :1262-1275
    if (bf16 && !pipeline_engine) o.raises = "Bfloat16 wrapper must use a gradient accumulation type of fp32";
    o.wrapper = bf16 ? DeepSpeedOptimizer::bf16_optimizer : fp16 ? DeepSpeedOptimizer::fp16_optimizer : DeepSpeedOptimizer::none;
  } else if (bf16 && o.accumulation == "fp32") {  // :1276-1277
    o.wrapper = DeepSpeedOptimizer::bf16_optimizer;
  } else {  // :1278-1279
    o.raises = "unsupported mix of model dtype and gradient accumulation type";
  }
  return o;
}

// microsoft's fork at ds_config stage 0-2: the stack that prices the optimizer DeepSpeed builds
// (set where the file's header names none), or a refusal naming the key where no stack does.
void read_microsoft_optimizer(const DeepSpeedOptimizer& o, int stage, bool no_pipeline,
                              const std::string& config_file, const nlohmann::json& zero, LaunchJob& job) {
  using W = DeepSpeedOptimizer;
  const std::string where = std::string(no_pipeline ? "without" : "under") + " the pipeline engine";
  if (!o.raises.empty())
    throw spec::SpecError(config_file, "data_types.grad_accum_dtype",
                          "a gradient accumulation dtype DeepSpeed 0.16.2 takes for " + o.model_dtype + " at ZeRO stage " +
                              std::to_string(stage) + " " + where + "; it raises '" + o.raises +
                              "' (deepspeed/runtime/engine.py:1229-1281)");
  const bool half = o.model_dtype != "fp32";
  const std::string at_stage = "at ZeRO stage " + std::to_string(stage);
  if (o.wrapper == W::zero_optimizer && half && o.accumulation != o.model_dtype)
    throw spec::SpecError(config_file, "data_types.grad_accum_dtype",
                          o.model_dtype + " (the model's dtype) or absent " + at_stage + ": otherwise DeepSpeed 0.16.2's " +
                              (stage == 1 ? "stage-1 optimizer keeps a second, " + o.accumulation +
                                                " gradient buffer beside the model's"
                                          : "ZeRO-2 optimizer takes a separate " + o.accumulation +
                                                " accumulation dtype beside its " + o.model_dtype + " partitions") +
                              " (deepspeed/runtime/zero/stage_1_and_2.py:284-294), which no trainplan stack prices");
  // The optimizer with 16-bit gradients (FP16_Optimizer, or the stage-1 optimizer in FP16 or BF16) runs
  // the same with or without the pipeline engine: only who calls its reduction differs
  // (pipe/engine.py:293-301 against engine.py:1975-1989).
  const bool sixteen_bit_gradients = o.wrapper == W::fp16_optimizer || (o.wrapper == W::zero_optimizer && half);
  std::string stack;
  if (sixteen_bit_gradients) {
    stack = no_pipeline ? kMicrosoftDeepSpeedNoPipeStack : kMicrosoftDeepSpeedFp16Stack;
    if (stage >= 1) {
      // With overlap_comm stages 1-2 reduce from backward hooks into two buckets on a side stream, the
      // plan's DP overlap; without it stage 1 reduces after backward through one bucket and stage 2 from
      // the hooks on the compute stream (stacks/megatron-deepspeed-ms-nopipe.json's by_zero_stage, with
      // stage_1_and_2.py lines); under the pipeline engine DeepSpeed turns it off (engine.py:1569-1572).
      if (zero.contains("contiguous_gradients") && zero["contiguous_gradients"] == false)
        throw spec::SpecError(config_file, "zero_optimization.contiguous_gradients",
                              "true (DeepSpeed 0.16.2's default) " + at_stage + " " + where + ": without it the " +
                                  (stage == 1 ? "stage-1" : "ZeRO-2") +
                                  " optimizer keeps no bucket buffer (deepspeed/runtime/zero/stage_1_and_2.py:705, 2039), "
                                  "which stack " + stack + " prices");
      // At stages 1 and 2 the bucket goes through allreduce_and_scatter, an all-reduce of the flattened
      // bucket (stage_1_and_2.py:1118-1134, 1005-1015, 1482-1502), as the stack prices it; without
      // reduce_scatter it is all-reduced in place, no flat copy (:1055-1057), and without
      // use_multi_rank_bucket_allreduce reduced to each slice's owner (allreduce_no_retain, :1135-1140).
      for (const char* key : {"reduce_scatter", "use_multi_rank_bucket_allreduce"})
        if (zero.contains(key) && zero[key] == false)
          throw spec::SpecError(config_file, std::string("zero_optimization.") + key,
                                "true (DeepSpeed 0.16.2's default) " + at_stage + ": stack " + stack +
                                    " prices each bucket flattened and all-reduced (deepspeed/runtime/zero/"
                                    "stage_1_and_2.py:1118-1134, 1482-1502), which " + key + " false does not run");
      // zero/config.py@b344c04d:108: 5e8 elements where the file is silent.
      job.zero_reduce_bucket_elements = zero_element_count(zero, "reduce_bucket_size", 500000000, config_file);
      if (o.model_dtype == "bf16")
        job.notes.push_back("bf16.enabled " + at_stage + " priced as stack " + stack + "'s FP16: DeepSpeed "
                            "0.16.2's " + (stage == 1 ? "stage-1" : "ZeRO-2") + " optimizer keeps the same 2-byte "
                            "gradients, bucket and partitions (deepspeed/runtime/engine.py:946-950)");
    }
  } else if (!no_pipeline) {
    // Stack megatron-deepspeed-ms prices DeepSpeed's BF16 optimizer with FP32 accumulation under the
    // pipeline engine (and FP32 training, as before). With BF16 accumulation at stage 0 DeepSpeed builds
    // the same optimizer (engine.py:1264-1268) over a BF16 accumulator (bf16_optimizer.py:162),
    // all-reduced in BF16 (engine.py:871-880, 2418-2442) and cast to FP32 at the step (bf16_optimizer.py:
    // 297-301): stack megatron-deepspeed-ms-bf16-accum.
    stack = o.wrapper == W::bf16_optimizer && o.accumulation == "bf16" ? kMicrosoftDeepSpeedBf16AccumStack
                                                                       : kMicrosoftDeepSpeedStack;
  } else if (o.wrapper == W::bf16_optimizer) {
    stack = kMicrosoftDeepSpeedNoPipeBf16Stack;
  } else {
    throw spec::SpecError(config_file, "fp16.enabled",
                          "true (or bf16.enabled) with --no-pipeline-parallel at ZeRO stage 0-2: in FP32 DeepSpeed 0.16.2 "
                          "steps the bare optimizer or its ZeRO optimizer over FP32 gradients, which no trainplan stack "
                          "prices");
  }
  if (job.stack_name.empty()) job.stack_name = stack;
}

}  // namespace trainplan::exporting
