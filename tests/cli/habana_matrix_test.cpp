// Issue 38.1 for the habana format: 21 plans (Llama 2 7/13/70B, Llama 3 and 3.1
// 8/70/405B on HLS-Gaudi2 and HLS-Gaudi3; TP, PP, uneven stages from the script's
// own layer count; ZeRO-1 through DeepSpeed's ZeRO optimizer or its BF16
// optimizer at stage 0; recompute none / selective / full; BF16 and FP8) export
// to scripts whose HL_* settings switch on what the plan was priced with, and
// read back to the same script. Each script also ran through Intel's own
// scripts/run_llama.sh and the fork's megatron/arguments.py parse_args and
// validate_args (tools/check_habana_args.py against HabanaAI/Megatron-DeepSpeed@891d6db,
// run by hand: CI has neither torch nor the fork); this test keeps the settings
// those runs resolved.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "export_matrix.h"

namespace trainplan::cli::habana_matrix {
namespace {

using testing::MatrixPlan;

const std::string kZero1 = " --zero 1 --stack megatron-deepspeed-habana";
const std::string kBf16Optimizer = " --zero 1 --stack megatron-deepspeed-habana-bf16-optimizer";

const std::vector<MatrixPlan>& matrix() {
  static const std::vector<MatrixPlan> plans = {
      {"--model llama2-7b --hardware hls-gaudi2 --instances 1 --tp 1 --pp 1 --seq-len 4096 --global-batch 1024 --micro-batch 1 "
       "--recompute selective --precision fp8" + kZero1,
       {"HL_LLAMA_VER=2\n", "HL_LLAMA_MODEL_SIZE=7\n", "HL_DP=8\n", "HL_SEQ_PARALLEL=0\n", "HL_CKP_ACT=2\n",
        "HL_USE_TRANSFORMER_ENGINE=1\n", "HL_ZERO_STAGE=1\n", "HL_GRAD_ACCUM_DTYPE=bf16\n"},
       {"HL_NUM_LAYERS", "HL_HOSTSFILE"}},
      {"--model llama2-7b --hardware hls-gaudi2 --instances 1 --tp 2 --pp 2 --seq-len 4096 --global-batch 256 --micro-batch 2 "
       "--recompute none --precision mixed-bf16" + kZero1,
       {"HL_TP=2\n", "HL_PP=2\n", "HL_DP=2\n", "HL_SEQ_PARALLEL=1\n", "HL_CKP_ACT=0\n", "HL_MICRO_BATCH=2\n"},
       {"HL_USE_TRANSFORMER_ENGINE"}},
      {"--model llama2-13b --hardware hls-gaudi2 --instances 2 --tp 2 --pp 2 --sp --seq-len 4096 --global-batch 1024 "
       "--micro-batch 2 --recompute selective --precision fp8" + kZero1,
       {"HL_LLAMA_MODEL_SIZE=13\n", "HL_NUM_NODES=2\n", "HL_DP=4\n", "HL_USE_CACHE_FP8_WEIGHT=1\n", "HL_HOSTSFILE"}, {}},
      {"--model llama2-13b --hardware hls-gaudi2 --instances 8 --tp 2 --pp 2 --seq-len 4096 --global-batch 1024 --micro-batch 1 "
       "--recompute full --precision mixed-bf16" + kZero1,
       {"HL_DP=16\n", "HL_CKP_ACT=1\n"}, {}},
      {"--model llama2-70b --hardware hls-gaudi2 --instances 4 --tp 8 --pp 4 --seq-len 4096 --global-batch 1024 --micro-batch 1 "
       "--recompute none --precision fp8" + kBf16Optimizer,
       {"HL_LLAMA_MODEL_SIZE=70\n", "HL_DP=1\n", "HL_ZERO_STAGE=0\n"}, {"HL_GRAD_ACCUM_DTYPE"}},
      {"--model llama2-70b --hardware hls-gaudi2 --instances 8 --tp 8 --pp 2 --seq-len 4096 --global-batch 1024 --micro-batch 1 "
       "--recompute full --precision mixed-bf16" + kBf16Optimizer,
       {"HL_ZERO_STAGE=0\n", "HL_CKP_ACT=1\n"}, {"HL_GRAD_ACCUM_DTYPE"}},
      {"--model llama2-70b --hardware hls-gaudi2 --instances 8 --tp 8 --pp 8 --seq-len 4096 --global-batch 512 --micro-batch 1 "
       "--recompute selective --precision fp8" + kZero1,
       {"HL_PP=8\n", "HL_DP=1\n"}, {}},
      {"--model llama3.1-8b --hardware hls-gaudi2 --instances 1 --tp 4 --pp 1 --seq-len 8192 --global-batch 128 --micro-batch 1 "
       "--recompute selective --precision fp8" + kZero1,
       {"HL_LLAMA_VER=3.1\n", "HL_LLAMA_MODEL_SIZE=8\n", "HL_SEQ_LEN=8192\n", "HL_SEQ_PARALLEL=1\n"}, {}},
      {"--model llama3.1-8b --hardware hls-gaudi2 --instances 1 --tp 1 --pp 1 --seq-len 8192 --global-batch 128 --micro-batch 1 "
       "--recompute full --precision mixed-bf16" + kZero1,
       {"HL_TP=1\n", "HL_CKP_ACT=1\n"}, {}},
      {"--model llama3.1-8b --hardware hls-gaudi3 --instances 2 --tp 2 --pp 2 --seq-len 8192 --global-batch 256 --micro-batch 1 "
       "--recompute selective --precision fp8" + kZero1,
       {"hardware=hls-gaudi3", "HL_NUM_NODES=2\n"}, {}},
      {"--model llama3.1-8b --hardware hls-gaudi3 --instances 1 --tp 8 --pp 1 --no-sp --seq-len 8192 --global-batch 64 "
       "--micro-batch 1 --recompute none --precision mixed-bf16" + kZero1,
       {"HL_TP=8\n", "HL_SEQ_PARALLEL=0\n"}, {}},
      {"--model llama3.1-70b --hardware hls-gaudi2 --instances 8 --tp 8 --pp 1 --seq-len 8192 --global-batch 128 --micro-batch 1 "
       "--recompute selective --precision fp8" + kZero1,
       {"HL_LLAMA_MODEL_SIZE=70\n", "HL_DP=8\n"}, {}},
      {"--model llama3.1-70b --hardware hls-gaudi2 --instances 16 --tp 8 --pp 2 --seq-len 8192 --global-batch 256 "
       "--micro-batch 1 --recompute full --precision mixed-bf16" + kZero1,
       {"HL_DP=8\n", "HL_PP=2\n"}, {}},
      {"--model llama3.1-70b --hardware hls-gaudi3 --instances 8 --tp 4 --pp 4 --seq-len 8192 --global-batch 256 --micro-batch 1 "
       "--recompute full --precision fp8" + kBf16Optimizer,
       {"HL_ZERO_STAGE=0\n", "HL_DP=4\n"}, {}},
      // 126 layers over PP 8: the script's own count, which DeepSpeed splits 16 / 15 (no HL_NUM_LAYERS, which it would refuse).
      {"--model llama3.1-405b --hardware hls-gaudi3 --instances 64 --tp 8 --pp 8 --uneven-stages --seq-len 8192 "
       "--global-batch 512 --micro-batch 1 --recompute full --precision fp8" + kZero1,
       {"HL_LLAMA_MODEL_SIZE=405\n", "HL_DP=8\n"}, {"HL_NUM_LAYERS"}},
      // Llama 3's shapes are Llama 3.1's rows of the script (the RoPE base and vocabulary too).
      {"--model llama3-8b --hardware hls-gaudi2 --instances 1 --tp 2 --pp 1 --seq-len 8192 --global-batch 128 --micro-batch 1 "
       "--recompute selective --precision mixed-bf16" + kZero1,
       {"HL_LLAMA_VER=3.1\n", "HL_LLAMA_MODEL_SIZE=8\n"}, {}},
      {"--model llama3-70b --hardware hls-gaudi2 --instances 8 --tp 8 --pp 1 --seq-len 8192 --global-batch 128 --micro-batch 1 "
       "--recompute selective --precision fp8" + kZero1,
       {"HL_LLAMA_VER=3.1\n", "HL_LLAMA_MODEL_SIZE=70\n"}, {}},
      {"--model llama2-13b --hardware hls-gaudi3 --instances 1 --tp 4 --pp 2 --seq-len 2048 --global-batch 512 --micro-batch 4 "
       "--recompute none --precision fp8" + kZero1,
       {"HL_SEQ_LEN=2048\n", "HL_MICRO_BATCH=4\n"}, {}},
      {"--model llama2-7b --hardware hls-gaudi2 --instances 4 --tp 8 --pp 1 --seq-len 16384 --global-batch 64 --micro-batch 1 "
       "--recompute full --precision mixed-bf16" + kZero1,
       {"HL_SEQ_LEN=16384\n", "HL_NUM_NODES=4\n"}, {}},
      {"--model llama3.1-8b --hardware hls-gaudi2 --instances 4 --tp 2 --pp 4 --seq-len 8192 --global-batch 512 --micro-batch 2 "
       "--recompute full --precision fp8" + kBf16Optimizer,
       {"HL_ZERO_STAGE=0\n", "HL_PP=4\n"}, {"HL_GRAD_ACCUM_DTYPE"}},
      {"--model llama2-70b --hardware hls-gaudi3 --instances 16 --tp 4 --pp 8 --seq-len 4096 --global-batch 1024 --micro-batch 1 "
       "--recompute selective --precision fp8" + kZero1,
       {"HL_TP=4\n", "HL_PP=8\n", "HL_DP=4\n"}, {}},
  };
  return plans;
}

// run_llama.sh checks NUM_NODES*DEVICES_PER_NODE against DP*TP*PP, and its pretrain_gpt.py runs the fused attention.
TEST(HabanaMatrix, EveryPlanSwitchesOnWhatItWasPricedWithAndReadsBack) {
  testing::expect_matrix("habana", matrix(), "trainplan_habana_matrix_test", {"HL_DEVICES_PER_NODE=8\n", "HL_USE_FUSED_SDPA=1\n"});
}

}  // namespace
}  // namespace trainplan::cli::habana_matrix
