// The groups of a Stack (spec/stack.h), one struct per concern: what the stack
// offers a plan, how its kernels compute, what it keeps in memory, and how it
// communicates. Plain data: stack_load.cpp fills it from the flat keys of
// stacks/<name>.json; a default is what spec::Stack{} and an omitted optional key get.
#pragma once
#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "spec/device_runtime.h"
#include "spec/plan.h"
#include "spec/workload.h"

namespace trainplan::spec {

enum class GradAccumulation { fused_wgrad, separate_pass };
enum class AttentionKernel { flash, unfused };
// Selective recompute as the stack runs it: Megatron's attention core (scores,
// softmax, context, flash or not); torch's per-op policy; or NxD's module
// wrapping, which re-runs its CoreAttention module and the SwiGLU activation
// (a flash kernel bypasses that module and leaves the activation alone), and
// in NxD's TP/PP example at 8,192 tokens the whole MLP module too.
enum class SelectiveRecompute { attention_core, per_op, core_attention_module, core_attention_and_mlp_modules };
// How far full recompute re-runs a layer in backward: to its output, collectives
// included (a reentrant autograd.Function: Megatron's and DeepSpeed's
// CheckpointFunction, torch use_reentrant=True); or until the last tensor
// autograd saves is recomputed (torch's non-reentrant checkpoint, early stop on
// from PyTorch 2.1), which leaves out the MLP's closing GEMM, whose inputs are
// saved before it runs, and the TP collective and residual add after it.
enum class FullRecompute { whole_layer, until_last_saved };
// What the optimizer step allocates beside the states: nothing (a fused Adam),
// a tensor-list Adam's parameter-sized intermediate, DeepSpeed ZeRO-1/2's
// FP32 copy of the rank's gradient shard (flattened 16-bit, then cast to FP32)
// after the gradients outside the shard are freed, or DeepSpeed's FP16_Optimizer
// (ZeRO off): every 16-bit gradient cast to FP32 into a list, then the list
// flattened into one FP32 gradient, while the 16-bit gradients are still held;
// or DeepSpeed's BF16 optimizer accumulating in BF16: the rank's partition of
// the BF16 accumulator cast to FP32 for the wrapped optimizer, all gradients held.
enum class StepTemporaries { none, foreach, fp32_grad_shard, fp32_grad_casts, fp32_grad_partition };
// How a stack exchanges K and V under context parallelism: none offered, a
// ring of CP-1 point-to-point steps overlapped with attention (Megatron-Core /
// Transformer Engine "p2p"), one all-gather of K and V (torchtitan's default),
// or all-to-alls that trade the sequence split for a head split around
// attention (DeepSpeed-Ulysses; Transformer Engine's cp_comm_type "a2a").
enum class ContextParallel { none, ring, all_gather, all_to_all };
// Which TP collectives a column-parallel layer's backward launches
// asynchronously beside its own GEMMs (Megatron's
// LinearWithGradAccumulationAndAsyncCommunication, Transformer Engine's
// LayerNormLinear): none (each collective blocks: the SC21-era code and forks
// of it); under SP only (the gather of the saved input beside the input-gradient
// GEMM, the input gradient's reduce-scatter beside the weight-gradient GEMM;
// forks that turn the all-reduce path off under DeepSpeed); or always (without
// SP too, the input gradient's all-reduce beside the weight-gradient GEMM).
// The row-parallel layer's backward gather under SP blocks either way.
enum class TpBackwardOverlap { none, sequence_parallel, always };

// What a plan may ask of the stack (spec::stack_refusal, spec/precision_support.h
// and the search space refuse the rest), and what it takes where the plan leaves
// it open: the default precision, the 16-bit type, the selective-recompute scheme.
struct StackCapabilities {
  // The device runtime its kernels run on (file: "runs_on"): hardware whose
  // accelerator needs another is refused. Empty only in the generic host stack.
  std::optional<DeviceRuntime> runs_on;
  std::vector<int> zero_stages{0, 1, 2, 3};
  bool pipeline_1f1b = true, pipeline_interleaved = true;
  // The embedding and the LM head may each take a layer's slot in the pipeline
  // split (Plan::edge_layer_slots); optional in files ("edge_layer_slots").
  bool edge_layer_slots = false;
  // Full recompute of only the first N layers of each model chunk
  // (Plan::recompute_layers, Megatron-Core's --recompute-method block);
  // optional in files ("block_recompute").
  bool block_recompute = false;
  bool sequence_parallel = true;
  // Its client runs SP whenever TP > 1 unless told otherwise, so a plan that
  // states neither --sp nor --no-sp takes it where the stack offers SP; optional
  // in files ("sequence_parallel_default", absent: off, as Megatron-LM's --sequence-parallel).
  bool sequence_parallel_default = false;
  bool overlap_tp_comm = false;  // offers async TP
  bool expert_parallel = false;  // offers EP (and expert TP) for MoE models; optional in files
  // Its CP runs only at TP 1 and PP 1 (DeepSpeed-Ulysses in microsoft's
  // Megatron-DeepSpeed); optional in files ("context_parallel_without_tp_pp").
  bool context_parallel_without_tp_pp = false;
  // Its CP needs K and V as wide as Q: no grouped-query attention; optional in
  // files ("context_parallel_needs_all_kv_heads").
  bool context_parallel_needs_all_kv_heads = false;
  bool fp8 = false;              // offers FP8 GEMMs (Precision::fp8)
  // Its compiler casts an FP32 model's matmuls to BF16 (Precision::fp32_bf16_matmul;
  // neuronx-cc --auto-cast matmult); optional in files.
  bool fp32_bf16_matmul = false;
  // The precision its published jobs train in, which a plan takes when the user
  // names none; optional in files ("default_precision", absent: mixed BF16).
  Precision default_precision = Precision::mixed_bf16;
  // Its 16-bit type is FP16 with loss scaling, not BF16 (main_grad_dtype "fp16":
  // the FP16 runs of 2020-2022); priced as mixed BF16, written so by exports.
  bool half_is_fp16 = false;
  std::vector<Recompute> recompute_modes{Recompute::none, Recompute::selective, Recompute::full};
  SelectiveRecompute selective = SelectiveRecompute::attention_core;
  FullRecompute full = FullRecompute::whole_layer;  // optional in files ("full_recompute")
};

// How the stack's kernels and host run the step's compute: what its time costs.
struct StackCompute {
  GradAccumulation grad_accumulation = GradAccumulation::separate_pass;
  AttentionKernel attention = AttentionKernel::flash;
  // Flash-attention speed per accelerator family over the FA2-class kernels
  // the calibration's attention factor is fitted on (Transformer Engine's cuDNN
  // fused attention on Hopper); optional, absent families run at 1.
  std::map<std::string, double> attention_speedup_by_family;
  // Bytes a memory-bound op moves in forward per element of its tensor, as the
  // stack's kernels run it; 0: one fused kernel (read the BF16 input(s), write
  // the output). Eager PyTorch runs an RMSNorm or a rotary embedding as several
  // kernels through FP32 copies. Optional in files ("elementwise_bytes").
  double norm_bytes_per_element = 0;    // per hidden element
  double swiglu_bytes_per_element = 0;  // per MLP intermediate element
  double rotary_bytes_per_element = 0;  // per rotated query / key element
  // Its mixed BF16 is torch.autocast over an FP32 model: the matmuls take BF16
  // casts, while the residual stream, the norms and the softmax (on every
  // autocast FP32 list) stay FP32; optional in files ("mixed_precision_autocast").
  bool mixed_precision_autocast = false;
  // The framework records every micro-batch's graph on the host, re-running the
  // Python, while the device runs the previous one (torch-xla's lazy tensors on
  // Neuron, lazy mode on Gaudi): a micro-batch takes at least the host's time,
  // Calibration::host_trace_s_per_layer per layer; optional ("lazy_tracing").
  bool lazy_tracing = false;
  // The training loop blocks the host on the device every micro-batch (a
  // loss.item() or a barrier per micro-step), so the host records micro-batch
  // k + 1 only after the device has run k: the recording above adds to the step
  // instead of overlapping it; optional ("host_waits_every_micro_batch").
  bool host_waits_every_micro_batch = false;
  // Where the runtime launches each graph synchronously (Neuron's
  // nrt_execute() without NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS), the host
  // prepares the next graph only once the device has finished this one: the
  // share of an asynchronous step's latency that this adds back (0.12: async
  // execution "can reduce latency by roughly 12% for training workloads");
  // 0 where the launch returns at once; optional ("sync_launch_share").
  double sync_launch_share = 0;
  // Each expert computes its capacity's slots whether routing fills them or not
  // (NxD's ExpertMLPs; at full capacity, a dropless model's, every expert runs
  // every token), not the routed tokens; optional ("expert_compute": "capacity",
  // absent: "routed").
  bool experts_compute_capacity = false;
  double host_overhead_s = 0;
};

// What the stack keeps on a device: states and gradients per parameter, the
// activations its layers save, and what the runtime and allocator reserve.
struct StackMemory {
  double main_grad_bytes = 4;           // per gradient element accumulated and reduced (FP32: 4, BF16 or FP16: 2)
  bool keeps_16bit_grads = false;       // the model's 16-bit gradients coexist with the main ones across backward
  // Mixed precision's master weights per parameter: FP32 (4), the low 16 bits
  // of each FP32 value beside the BF16 weights (2: Apex DistributedFusedAdam's
  // store_param_remainders), or none (0: BF16 with stochastic rounding).
  double master_weight_bytes = 4;
  double optimizer_state_bytes = 8;     // Adam's two moments per parameter (FP32: 8, BF16: 4)
  bool zero3_keeps_16bit_shard = true;  // DeepSpeed ZeRO-3: yes; FSDP: only the FP32 shard
  StepTemporaries step_temporaries = StepTemporaries::none;
  // DeepSpeed ZeRO-3 steps the optimizer one sub-group of the rank's shard at
  // a time (sub_group_size), so fp32-grad-shard temporaries cover at most this
  // many parameters; 0: the whole shard at once (ZeRO-1/2). Optional in files.
  double optimizer_sub_group_parameters = 0;
  // Under FP8, the linear GEMMs' inputs kept for the weight gradient are FP8
  // (Transformer Engine), not BF16 (torchao re-casts in backward); optional.
  bool fp8_saves_gemm_inputs_in_fp8 = false;
  // Under FP8 the layers' GEMM weights are Transformer Engine FP8 parameters
  // (fp8_model_init): one FP8 copy and its transpose, no BF16 copy, and the
  // sharded optimizer gathers them in FP8; optional ("fp8_param_gather"),
  // false: BF16 weights with a cached FP8 copy and transpose beside them.
  bool fp8_param_gather = false;
  // The experts scale an unfused activation's output by the router's
  // probabilities before the second GEMM (Megatron-Core), so autograd keeps that
  // output beside the scaled one: one expert-FFN-wide tensor more per routed
  // token for GeLU experts (a fused weighted SwiGLU keeps its input alone);
  // optional in files ("moe_probs_after_activation").
  bool moe_probs_after_activation = false;
  // Activations an eager PyTorch layer keeps beyond the fused kernels' (Megatron,
  // Transformer Engine) that the activation terms assume: each RMSNorm's FP32
  // input copy and its normalized tensor before the weight, SwiGLU's gate, up
  // and SiLU outputs apart, and GELU written as an erf expression (three
  // intermediates kept, not its input). Optional in files ("eager_activations");
  // absent: all fused.
  bool eager_rmsnorm = false, eager_swiglu = false, erf_expression_gelu = false;
  double loss_bytes_per_logit = 8;      // FP32 logits and gradient; a fused cross-entropy over BF16 logits: 2
  // Where the loss takes another path once the logits are split over TP
  // (torchtitan's loss_parallel); 0: loss_bytes_per_logit at any TP.
  double loss_bytes_per_logit_tp = 0;
  // DeepSpeed's PipelineEngine keeps each in-flight micro-batch's stage output
  // until its backward, the TP rank's partition of it where TP > 1.
  bool pipeline_keeps_stage_outputs = false;
  // FSDP under a pipeline schedule (torchtitan on torch.distributed.pipelining):
  // no reshard between a stage's micro-batches and no gradient reduction until
  // the last backward, so the stage's 16-bit weights stay gathered and its
  // gradients accumulate unsharded in the main-gradient dtype.
  bool fsdp_gathered_under_pipeline = false;
  // The stack's gradients exist only from a step's backward to its optimizer
  // step, which frees them (DeepSpeed's ZeRO-1/2 optimizer), so with one
  // micro-batch per step none are held while the forward runs; false: a
  // gradient buffer held across steps (Megatron's main_grad, DDP's buckets,
  // DeepSpeed ZeRO-3's partition buffer). Optional in files
  // ("gradients_freed_at_step"); by ZeRO stage through by_zero_stage.
  bool gradients_freed_at_step = false;
  // At ZeRO-2 each micro-batch's reduced gradients are copied into a fresh
  // 16-bit partition buffer, added into the accumulated partition only at the
  // backward's end (DeepSpeed's stage_1_and_2.py grads_in_partition and
  // averaged_gradients): with more than one micro-batch per step two
  // partitions are held through backward. Optional in files
  // ("gradient_partition_per_micro_batch"); by ZeRO stage through by_zero_stage.
  bool gradient_partition_per_micro_batch = false;
  // Nothing keeps the logits past the loss's backward (the trainer takes the
  // loss alone from the model's output), so under full recompute the loss and
  // the replayed layer, which backward re-runs only after the LM head's
  // backward, are never held at once; false: summed, as where a pipeline
  // engine keeps the last stage's output through the backward. Optional in
  // files ("loss_freed_before_recompute").
  bool loss_freed_before_recompute = false;
  double runtime_reserve_bytes = 0;     // per device, outside the framework's tensors (the context, where
                                        // communicator_bytes is given)
  double communicator_bytes = 0;        // per communicator, one per parallel group of more than one rank;
                                        // optional in files (absent: counted in runtime_reserve_bytes)
  // What the caching allocator reserves beyond the tensors at their peak
  // (fragmentation and cached free blocks), as a share of that peak: what a
  // reserved counter or nvidia-smi reads.
  double allocator_overhead_fraction = 0;
  // Of that share, the part the allocator cannot give back when an allocation
  // fails (free pieces of segments that still hold live blocks), which decides
  // the fit: on a failed cudaMalloc it frees its cached unsplit segments, or
  // with expandable segments unmaps every free page, and retries. Optional in
  // files ("allocator_unreleasable_fraction"); absent: all of
  // allocator_overhead_fraction.
  double allocator_unreleasable_fraction = -1;
  // The share falls on what is freed and allocated again within a step
  // (activations, logits, temporaries, gathered shards), not on state the
  // stack holds in buffers allocated once (parameters, gradients, optimizer
  // state): Megatron-Core's contiguous parameter and gradient buffers.
  // Optional in files ("allocator_overhead_on_transients"); false: every tensor.
  bool allocator_overhead_on_transients = false;
  double allocator_unreleasable() const {
    return allocator_unreleasable_fraction < 0 ? allocator_overhead_fraction : allocator_unreleasable_fraction;
  }
};

// How the stack moves data between devices: data-parallel reduction and
// gathering, expert dispatch, pipeline hand-offs, context-parallel K and V.
struct StackCommunication {
  bool overlap_dp_grad_reduce = true;   // gradient reduction streams out during the last backward
  bool overlap_dp_param_gather = true;  // sharded-optimizer / FSDP all-gather hidden behind forward
  double dp_bucket_bytes = 0;           // one reduction bucket; the last one cannot hide (0: one bucket per layer)
  double dp_bucket_buffer_bytes = 0;    // a reduction buffer apart from the gradients, held across the step (0: buckets are views)
  // The buffer holds hidden^2 16-bit elements instead of dp_bucket_buffer_bytes
  // (dp_bucket_buffer_mb "hidden-squared": the Hugging Face DeepSpeed
  // integration fills reduce_bucket_size "auto" with hidden_size * hidden_size).
  bool dp_bucket_buffer_hidden_squared = false;
  // Buffers of that size held when the plan overlaps the reduction (DeepSpeed's
  // ZeRO-1/2 optimizer double-buffers its bucket under overlap_comm); optional
  // in files ("dp_bucket_buffers_overlapped"), absent: 1.
  int dp_bucket_buffers_overlapped = 1;
  // Bytes per element the DP reduction moves in mixed precision where the stack
  // casts its gradient buffer for the collective (DeepSpeed's
  // communication_data_type: the 16-bit type of an FP32 accumulator); 0: the
  // buffer's own. Optional in files ("dp_reduce_dtype").
  double dp_reduce_bytes = 0;
  // A flat copy of one reduction bucket, made after backward and freed before the
  // step (DeepSpeed's buffered all-reduce; a tensor larger than the bucket is
  // copied whole); 0: none. Optional in files.
  double dp_reduction_copy_bytes = 0;
  // ZeRO 1-2 reduce each gradient bucket with an all-reduce and keep their own
  // shard of it (DeepSpeed's "reduce_scatter": false), twice a reduce-scatter's
  // bytes; optional in files ("zero_grad_reduce": "all-reduce" | "reduce-scatter"),
  // absent: reduce-scatter.
  bool zero_grad_reduce_all_reduce = false;
  // At ZeRO 1-2 the gradients are reduced after every micro-batch's backward,
  // not once after the last (DeepSpeed's ZeRO-2 partitions them from backward
  // hooks; FSDP without no_sync reduce-scatters each backward), and with
  // dp_param_gather_every_micro_batch the parameters are gathered for every
  // micro-batch's forward, not once after the step (FSDP's SHARD_GRAD_OP
  // reshards after backward). Optional in files; absent: once per step.
  bool dp_grad_reduce_every_micro_batch = false;
  bool dp_param_gather_every_micro_batch = false;
  // The MoE dispatcher sends a token once to each other instance that holds
  // one of its experts and fans it out there (DeepEP / HybridEP), instead of
  // one copy per expert (a plain all-to-all); optional in files.
  bool dispatch_once_per_instance = false;
  // Megatron-Core's EP all-to-all overlap (overlap_moe_expert_parallel_comm,
  // the combined 1F1B schedule): in steady state one micro-batch's dispatch and
  // combine run beside another's layer compute. The share of that all-to-all
  // time hidden, up to the paired compute; optional ("ep_a2a_overlap"), 0: none.
  double ep_a2a_hidden_share = 0;
  // The pipeline ends a compiled graph at each micro-batch's send and receive
  // (XLA's mark_step on Neuron), so every hand-off pays the runtime's fixed
  // cost, Calibration::pipeline_microbatch_overhead_s; optional
  // ("pipeline_graph_cut_per_micro_batch"), false: the sends are asynchronous.
  bool pipeline_graph_cut_per_micro_batch = false;
  // The pipeline's p2p exchange holds the rank until it completes, per schedule
  // (cost::PipelineInput::blocking_p2p); optional ("pipeline_p2p": {"1f1b":
  // "blocking" | "overlapped", "interleaved": ...}), absent: overlapped.
  bool pipeline_p2p_blocking_1f1b = false;
  bool pipeline_p2p_blocking_interleaved = false;
  // A SwiGLU MLP's gate and up projections are two column-parallel layers, each
  // gathering its sequence-parallel input forward and again for its weight
  // gradient and reducing its input gradient (under SP a reduce-scatter, else
  // an all-reduce), not one fused layer; optional ("gate_up_projection":
  // "separate", absent: "fused").
  bool gate_up_separate_linears = false;
  // Optional ("tp_backward_overlap": "none", "sequence-parallel", "always");
  // absent: none. Not the decomposed async TP of Plan::overlap_tp_comm.
  TpBackwardOverlap tp_backward_overlap = TpBackwardOverlap::none;
  ContextParallel context_parallel = ContextParallel::none;  // optional in files: older stacks offer none
};

}  // namespace trainplan::spec
