// StepContext: what every term of the step reads, gathered once per plan: the
// specs, the completed Plan, the cluster graph and the derived sizes of one
// micro-batch on one device. Terms read it and never each other's internals.
#pragma once
#include "net/cluster.h"
#include "spec/calibration.h"
#include "spec/hardware_spec.h"
#include "spec/model_spec.h"
#include "spec/plan.h"
#include "spec/stack.h"
#include "spec/workload.h"

namespace trainplan::cost {

// Per-op streaming efficiencies, pulled out of the Calibration's map once.
struct OpEfficiencies {
  spec::MemoryEfficiency norm, softmax, activation, residual, optimizer;
  spec::MemoryEfficiency attention_softmax;  // unfused attention's softmax over the scores
};

struct StepContext {
  const spec::ModelSpec& model;
  const spec::HardwareSpec& hardware;
  const spec::Stack& stack;
  const spec::Calibration& calibration;
  const spec::Workload& workload;
  const spec::Plan& plan;  // completed: dp and grad_accum set
  const net::Cluster& cluster;
  const OpEfficiencies& ops;
  double params_per_device;  // of the heaviest stage, before ZeRO, routed experts excepted (cost/memory.h)
  double expert_params_per_device;  // routed experts of that stage on one device (EP x expert TP split)
  double attention_speedup;  // the stack's flash kernel on this hardware over FA2-class ones (spec::Stack)

  double peak_flops_per_s() const;  // BF16 (FP32 in fp32 training): attention, head, and MFU's denominator
  // The transformer layers' linear GEMMs: FP8 under Precision::fp8, else peak_flops_per_s().
  double linear_peak_flops_per_s() const;
  double element_bytes() const { return spec::element_bytes(workload.precision); }
  // Bytes per parameter the sharded optimizer's all-gather sends: the weights'
  // dtype, one byte for the layers' GEMM weights under the stack's FP8
  // parameters (spec::StackMemory::fp8_param_gather).
  double gathered_parameter_bytes() const;
  // Mixed BF16 as torch.autocast over an FP32 model (spec::Stack): the
  // residual stream, the norms and the attention probabilities are FP32.
  bool fp32_autocast() const { return stack.fp32_autocast(workload.precision); }
  // Bytes of an element of the residual stream and the norms (and, for an
  // unfused attention, of the softmax's probabilities).
  double stream_element_bytes() const { return fp32_autocast() ? 4.0 : element_bytes(); }
  // One micro-batch's tokens on one device: its sequences' share under CP.
  double tokens() const { return double(workload.seq_len) / plan.cp * plan.micro_batch; }
  double seq_local() const { return double(workload.seq_len) / plan.cp; }
  // Ranks that hold the same weights and reduce their gradients together:
  // DP x CP (Megatron-Core's data-parallel group with CP); the experts' own.
  int dense_dp() const { return plan.dp * plan.cp; }
  int expert_dp() const { return spec::expert_dp(plan); }
  // Share of the layers that are MoE layers (0 for a dense model).
  // Under full recompute, the share of the layers re-run (Plan::recompute_layers of each chunk).
  double full_recompute_share() const { return spec::recomputed_share(model.layers, plan); }
  double moe_share() const { return model.moe() ? double(model.moe_layers()) / model.layers : 0.0; }
  // Tokens the busiest expert rank computes, over the mean routed load (spec::expert_load).
  double expert_load() const { return spec::expert_load(stack, model, workload.expert_imbalance); }
  // Tokens seen by norms and residuals: split across TP under sequence parallelism.
  double sp_tokens() const { return plan.sp ? tokens() / plan.tp : tokens(); }
  double heads_local() const { return double(model.heads) / plan.tp; }
  // KV heads on one TP rank; replicated when TP exceeds them.
  double kv_heads_local() const { return model.kv_heads_per_rank(plan.tp); }
  int micro_batches() const { return plan.grad_accum; }
  double stream_s(const spec::MemoryEfficiency& eff, double bytes) const {
    return bytes > 0 ? bytes / (hardware.hbm_bytes_per_s * eff.at(bytes)) : 0.0;
  }
};

}  // namespace trainplan::cost
