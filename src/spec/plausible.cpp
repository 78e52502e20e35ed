#include "spec/plausible.h"

#include <cmath>
#include <sstream>

#include "spec/error.h"

namespace trainplan::spec {
namespace {

void within(const std::string& file, const std::string& path, double value, double lo, double hi,
            const std::string& unit) {
  if (std::isfinite(value) && value >= lo && value <= hi) return;
  std::ostringstream text;
  text << "a plausible figure from " << lo << " to " << hi << (unit.empty() ? "" : " " + unit) << ", got ";
  if (std::isfinite(value)) text << value;
  else text << "a figure too large to represent";
  throw SpecError(file, path, text.str());
}

}  // namespace

void check_plausible(const HardwareSpec& hw) {
  const std::string& f = hw.source_file;
  const double per_chip = hw.devices_per_chip;
  within(f, "$.chips_per_instance", hw.chips_per_instance, 1, 1024, "");
  within(f, "$.devices_per_chip", hw.devices_per_chip, 1, 64, "");
  within(f, "$.peak_bf16_tflops_per_chip.value", hw.peak_bf16_flops_per_s * per_chip / 1e12, 0.1, 1e5, "TFLOP/s");
  within(f, "$.peak_fp32_tflops_per_chip.value", hw.peak_fp32_flops_per_s * per_chip / 1e12, 0.01, 1e5, "TFLOP/s");
  if (hw.peak_fp8_flops_per_s > 0)
    within(f, "$.peak_fp8_tflops_per_chip.value", hw.peak_fp8_flops_per_s * per_chip / 1e12, 0.1, 1e5, "TFLOP/s");
  if (hw.matrix_alignment_bytes > 0) within(f, "$.matrix_alignment_bytes.value", hw.matrix_alignment_bytes, 1, 1024, "bytes");
  within(f, "$.hbm_gib_per_chip (or hbm_gb_per_chip)", hw.hbm_bytes * per_chip / 1073741824.0, 0.5, 4096, "GiB");
  within(f, "$.hbm_gb_per_s_per_chip (or hbm_gib_per_s_per_chip)", hw.hbm_bytes_per_s * per_chip / 1e9, 10, 1e5, "GB/s");
  if (hw.chips_per_instance > 1) within(f, "$.fabric (per-link bandwidth)", hw.link_bytes_per_s / 1e9, 1, 1e5, "GB/s");
  within(f, "$.fabric.latency_us.value", hw.fabric_latency_s * 1e6, 0.01, 1e4, "us");
  within(f, "$.efa.gbps.value", hw.efa_gbps, 1, 1e6, "Gb/s");
  within(f, "$.efa.latency_us.value", hw.efa_latency_s * 1e6, 0.01, 1e4, "us");
  for (size_t i = 0; i < hw.prices.size(); ++i)
    within(f, "$.prices[" + std::to_string(i) + "].usd_per_instance_hour", hw.prices[i].usd_per_instance_hour, 0.01,
           1e4, "USD");
  within(f, "$.reliability.failures_per_instance_hour.value", hw.failures_per_instance_hour, 0, 1, "");
  within(f, "$.reliability.checkpoint_storage_gb_per_s.value", hw.checkpoint_storage_bytes_per_s / 1e9, 0.01, 1e5,
         "GB/s");
}

void check_plausible(const ModelSpec& m, bool hf) {
  const std::string& f = m.source_file;
  within(f, hf ? "$.num_hidden_layers" : "$.layers", m.layers, 1, 1e4, "");
  within(f, hf ? "$.hidden_size" : "$.hidden", m.hidden, 8, 1e6, "");
  within(f, hf ? "$.num_attention_heads" : "$.heads", m.heads, 1, 1e4, "");
  if (m.explicit_head_dim > 0) within(f, "$.head_dim", m.explicit_head_dim, 8, 1024, "");
  within(f, hf ? "$.intermediate_size" : "$.ffn_hidden", m.ffn_hidden, 1, 1e7, "");
  within(f, hf ? "$.vocab_size" : "$.vocab", m.vocab, 2, 1e7, "");
  within(f, hf ? "$.max_position_embeddings" : "$.max_positions", m.max_positions, 1, 1e8, "");
}

void check_plausible(const Stack& s) {
  const std::string& f = s.source_file;
  const StackMemory& mem = s.memory;
  const StackCompute& compute = s.compute;
  const StackCommunication& comm = s.communication;
  within(f, "$.dp_bucket_mb.value", comm.dp_bucket_bytes / 1e6, 0, 1e5, "MB");
  within(f, "$.dp_bucket_buffer_mb.value", comm.dp_bucket_buffer_bytes / 1e6, 0, 1e5, "MB");
  within(f, "$.dp_reduction_copy_mb.value", comm.dp_reduction_copy_bytes / 1e6, 0, 1e5, "MB");
  within(f, "$.optimizer_sub_group_parameters.value", mem.optimizer_sub_group_parameters, 0, 1e13, "parameters");
  within(f, "$.loss_bytes_per_logit.value", mem.loss_bytes_per_logit, 1, 64, "bytes");
  if (mem.loss_bytes_per_logit_tp != 0) within(f, "$.loss_bytes_per_logit_tp.value", mem.loss_bytes_per_logit_tp, 1, 64, "bytes");
  within(f, "$.runtime_reserve_gib.value", mem.runtime_reserve_bytes / 1073741824.0, 0, 1024, "GiB");
  within(f, "$.communicator_gib.value", mem.communicator_bytes / 1073741824.0, 0, 64, "GiB");
  within(f, "$.allocator_overhead_fraction.value", mem.allocator_overhead_fraction, 0, 0.9, "");
  // What the allocator cannot give back is a part of what it reserves.
  if (mem.allocator_unreleasable_fraction >= 0)
    within(f, "$.allocator_unreleasable_fraction.value", mem.allocator_unreleasable_fraction, 0,
           mem.allocator_overhead_fraction, "");
  within(f, "$.host_overhead_s.value", compute.host_overhead_s, 0, 60, "s");
  // 0 means the fused default; a stated figure is at least one read and one write.
  const std::pair<const char*, double> elementwise[] = {
      {"norm", compute.norm_bytes_per_element},
      {"swiglu", compute.swiglu_bytes_per_element},
      {"rotary", compute.rotary_bytes_per_element}};
  for (const auto& [op, bytes] : elementwise)
    if (bytes != 0) within(f, std::string("$.elementwise_bytes.value.") + op, bytes, 2, 256, "bytes");
  for (const auto& [family, factor] : compute.attention_speedup_by_family)
    within(f, "$.attention_speedup.value." + family, factor, 0.25, 4, "");
}

}  // namespace trainplan::spec
