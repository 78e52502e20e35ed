// Issue 38.1 for the megatron format: 25 plans (dense and MoE, MLA and leading
// dense layers; TP, PP, VP, CP, EP, uneven stages; ZeRO 0-3; recompute none / selective / full; BF16 and
// FP8; the megatron-lm and megatron-lm-bf16-grads stacks) export to scripts
// that switch on what the plan was priced with, and read back to the same
// script. Each script also passed Megatron-LM core_r0.13.0's own parse_args,
// validate_args and TransformerConfig.__post_init__ (tools/check_megatron_args.py
// against NVIDIA/Megatron-LM@73a28a10, run by hand: CI has neither torch nor
// the client); this test keeps the options those runs showed the client needs.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "export_matrix.h"

namespace trainplan::cli::megatron_matrix {
namespace {

using testing::MatrixPlan;
using testing::Outcome;
using testing::run_cli;

std::string scratch(const std::string& name) { return testing::matrix_scratch("trainplan_megatron_matrix_test", name); }

const std::vector<MatrixPlan>& matrix() {
  const std::string p5 = " --hardware p5.48xlarge --precision mixed-bf16";
  static const std::vector<MatrixPlan> plans = {
      {"--model llama2-7b --instances 2 --tp 8 --sp" + p5,
       {"CUDA_DEVICE_MAX_CONNECTIONS=1", "--sequence-parallel", "--use-distributed-optimizer", "--overlap-grad-reduce",
        "--recompute-granularity selective", "--bf16", "--position-embedding-type rope", "--normalization RMSNorm"},
       {"--fp8-format", "--num-experts"}},
      {"--model llama2-70b --instances 16 --tp 8 --pp 4 --virtual-stages 2 --sp --recompute selective --zero 1" + p5,
       {"--num-virtual-stages-per-pipeline-rank 2", "--group-query-attention", "--num-query-groups 8"}, {}},
      {"--model llama2-70b --instances 16 --tp 8 --pp 4 --recompute full --zero 1" + p5,
       {"--recompute-granularity full", "--recompute-method uniform", "--recompute-num-layers 1"}, {"--sequence-parallel"}},
      {"--model llama3-8b --instances 2 --tp 1 --zero 2 --recompute full" + p5,
       {"--use-custom-fsdp", "--data-parallel-sharding-strategy optim_grads", "--no-gradient-accumulation-fusion",
        "--rotary-base 500000"},
       {"CUDA_DEVICE_MAX_CONNECTIONS=1"}},
      {"--model llama3-8b --instances 2 --tp 2 --sp --zero 3" + p5,
       {"CUDA_DEVICE_MAX_CONNECTIONS=8", "--data-parallel-sharding-strategy optim_grads_params"}, {}},
      {"--model llama3-8b --instances 2 --tp 1 --cp 2 --seq-len 8192" + p5,
       {"CUDA_DEVICE_MAX_CONNECTIONS=1", "--context-parallel-size 2"}, {}},
      {"--model llama3-8b --instances 2 --tp 4 --sp --cp 2 --seq-len 8192 --hardware p5.48xlarge --precision fp8",
       {"--fp8-format hybrid", "--bf16", "--context-parallel-size 2"}, {}},
      {"--model mixtral-8x7b --instances 8 --tp 2 --sp --ep 8 --pp 2" + p5,
       {"--num-experts 8", "--moe-router-topk 2", "--expert-model-parallel-size 8",
        "--moe-token-dispatcher-type alltoall", "--moe-grouped-gemm", "--rotary-base 1000000"},
       {}},
      {"--model mixtral-8x7b --instances 8 --tp 1 --ep 8 --pp 4 --recompute full" + p5, {"--moe-grouped-gemm"}, {}},
      {"--model qwen3-30b-a3b --instances 4 --tp 1 --ep 8 --recompute full" + p5,
       {"--qk-layernorm", "--num-experts 128", "--moe-router-topk 8"}, {"--add-qkv-bias"}},
      {"--model qwen2.5-14b --instances 2 --tp 4 --sp" + p5, {"--add-qkv-bias", "--rotary-base 1000000"}, {}},
      {"--model llama3.1-405b --instances 128 --tp 8 --pp 8 --sp --seq-len 8192 --global-batch 1536 --uneven-stages "
       "--recompute full --hardware p5.48xlarge --precision fp8",
       {"--decoder-first-pipeline-num-layers 15", "--decoder-last-pipeline-num-layers 15"}, {}},
      // NVIDIA's H100 layout for Llama 3.1 405B: VP 8 over 126 layers + 2 edge slots
      // (core_r0.13.0 transformer_config.py accepts 128 / 8 / 8; checked by hand as above).
      {"--model llama3.1-405b --instances 128 --tp 8 --pp 8 --cp 2 --virtual-stages 8 --edge-layer-slots --sp "
       "--seq-len 8192 --global-batch 512 --zero 1 --recompute none --stack nemo --hardware dgx-h100 --precision fp8",
       {"--num-virtual-stages-per-pipeline-rank 8", "--account-for-embedding-in-pipeline-split",
        "--account-for-loss-in-pipeline-split", "--context-parallel-size 2"},
       {"--decoder-first-pipeline-num-layers"}},
      {"--model gpt3-175b --hardware p4d.24xlarge --instances 32 --tp 8 --pp 8 --virtual-stages 4 --sp --recompute full "
       "--global-batch 1536 --seq-len 2048 --precision mixed-bf16",
       {"--normalization LayerNorm", "--num-virtual-stages-per-pipeline-rank 4"},
       {"--swiglu", "--position-embedding-type rope"}},  // learned positions: the client's default
      {"--model llama2-13b --hardware p4d.24xlarge --instances 4 --tp 4 --pp 2 --zero 0 --recompute full "
       "--precision mixed-bf16",
       {}, {"--use-distributed-optimizer"}},
      {"--model llama3-70b --instances 8 --tp 8 --pp 2 --sp --zero 1 --recompute selective --hardware p5.48xlarge "
       "--precision fp8",
       {"--fp8-format hybrid"}, {}},
      {"--model llama2-7b --hardware p4d.24xlarge --instances 1 --tp 2 --sp --zero 1 --recompute full "
       "--precision mixed-bf16",
       {"--tensor-model-parallel-size 2"}, {}},
      {"--model mixtral-8x22b --instances 16 --tp 2 --sp --pp 4 --ep 8 --recompute full" + p5,
       {"--expert-model-parallel-size 8"}, {}},
      {"--model llama3.1-8b --instances 1 --tp 2 --zero 1 --recompute none --micro-batch 1 --global-batch 64 "
       "--seq-len 2048" + p5,
       {"--micro-batch-size 1", "--global-batch-size 64"}, {"--recompute-granularity"}},
      {"--model llama3.1-70b --instances 16 --tp 4 --sp --pp 4 --virtual-stages 5 --cp 2 --seq-len 8192" + p5,
       {"--num-virtual-stages-per-pipeline-rank 5", "--context-parallel-size 2"}, {}},
      {"--model gpt3-5b --hardware p4d.24xlarge --instances 2 --tp 2 --pp 2 --virtual-stages 2 --recompute full "
       "--seq-len 2048 --precision mixed-bf16",
       {}, {}},
      {"--model llama2-7b --instances 2 --tp 2 --sp --stack megatron-lm-bf16-grads" + p5, {"--grad-reduce-in-bf16"}, {}},
      {"--model llama2-70b --instances 8 --tp 8 --pp 2 --sp --zero 1 --overlap-tp" + p5, {"--tp-comm-overlap"}, {}},
      {"--model llama3-8b --instances 1 --tp 8 --sp --zero 1 --recompute selective" + p5, {}, {"--tp-comm-overlap"}},
      // DeepSeek-V3: multi-latent attention, three leading dense layers, 61 layers over PP 16 uneven.
      {"--model deepseek-v3 --instances 64 --tp 1 --pp 16 --ep 32 --recompute full --uneven-stages "
       "--hardware p5.48xlarge --precision fp8",
       {"--multi-latent-attention", "--q-lora-rank 1536", "--kv-lora-rank 512", "--qk-head-dim 128",
        "--qk-pos-emb-head-dim 64", "--v-head-dim 128", "--moe-layer-freq '([0]*3+[1]*58)'",
        "--decoder-first-pipeline-num-layers 2", "--decoder-last-pipeline-num-layers 3"},
       {"--group-query-attention"}},
  };
  return plans;
}

TEST(MegatronMatrix, EveryPlanSwitchesOnWhatItWasPricedWithAndReadsBack) {
  testing::expect_matrix("megatron", matrix(), "trainplan_megatron_matrix_test");
}

// Megatron-LM's uneven split read back: a split that loads one stage beyond
// ceil(layers / PP) is refused (trainplan would price fewer layers on it), and
// one that does not leave the middle stages an even share is refused as the
// client refuses it.
TEST(MegatronMatrix, UnevenSplitsTheModelDoesNotPriceAreRefused) {
  const std::string a = scratch("uneven.sh");
  ASSERT_EQ(run_cli("export -q --to megatron --out " + a + " " + matrix()[11].plan).code, 0);
  const std::string script = testing::read_whole_file(a);
  for (const auto& [split, expect] : std::vector<std::pair<std::string, std::string>>{
           {"--decoder-first-pipeline-num-layers 9", "busiest stage holds ceil(layers / PP) = 16"},
           {"--decoder-first-pipeline-num-layers 14", "an even share of --num-layers 126"}}) {
    std::string edited = script;
    edited.replace(edited.find("--decoder-first-pipeline-num-layers 15"), 38, split);
    const std::string path = scratch("uneven-edited.sh");
    std::ofstream(path) << edited;
    const Outcome r = run_cli("estimate -q --from-config " + path);
    EXPECT_EQ(r.code, 2) << split << "\n" << r.out;
    EXPECT_NE(r.out.find(expect), std::string::npos) << split << "\n" << r.out;
  }
}

}  // namespace
}  // namespace trainplan::cli::megatron_matrix
