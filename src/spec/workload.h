// Workload: what is trained, independent of hardware and layout.
#pragma once
#include <array>
#include <cstdint>
#include <string_view>

namespace trainplan::spec {

// mixed_bf16: BF16 compute, FP32 master weights, FP32 Adam moments, FP32 grads.
// bf16_sr:    BF16 weights, grads and Adam moments with stochastic rounding.
// fp32:       everything in FP32.
// fp32_bf16_matmul: an FP32 model (weights, gradients, moments, activations and
//             vector ops in FP32) whose matmuls the compiler casts to BF16:
//             neuronx-cc --auto-cast matmult --auto-cast-type bf16, its default
//             until Neuron SDK 2.27 (compiler release notes).
// fp8:        mixed_bf16 with the transformer layers' linear GEMMs in FP8
//             (Transformer Engine's hybrid recipe: E4M3 forward, E5M2 gradients,
//             delayed scaling); attention core, norms, embedding and LM head in BF16.
enum class Precision { mixed_bf16, bf16_sr, fp32, fp8, fp32_bf16_matmul };

struct Workload {
  int seq_len = 0;
  int64_t global_batch_seqs = 0;
  double tokens_to_train = 0;
  Precision precision = Precision::mixed_bf16;
  // Tokens the busiest expert-parallel rank computes, over the mean: routing is
  // never perfectly even. An assumption (1: balanced, as an auxiliary loss or
  // bias balancing aims for), named in the output of a MoE model; capped by
  // the model's capacity factor when it has one.
  double expert_imbalance = 1.0;
  // Mean tokens per document where several documents are packed into each
  // sequence and attention is masked to each one (0: one document per
  // sequence). Only the attention core depends on it.
  int document_tokens = 0;
  double tokens_per_step() const { return double(seq_len) * double(global_batch_seqs); }
};

// Bytes of one activation (and of the compute copy of a weight): FP32 runs in
// FP32, every other precision computes in 16-bit (FP8 GEMM operands are cast on the fly).
inline bool fp32_model(Precision precision) {
  return precision == Precision::fp32 || precision == Precision::fp32_bf16_matmul;
}
inline double element_bytes(Precision precision) { return fp32_model(precision) ? 4 : 2; }
// Bytes of a matmul operand as the matrix unit reads it: an auto-cast FP32
// model's matmuls run on BF16 operands.
inline double matmul_element_bytes(Precision precision) { return precision == Precision::fp32 ? 4 : 2; }

inline constexpr std::array<Precision, 5> kPrecisions{Precision::mixed_bf16, Precision::bf16_sr, Precision::fp32,
                                                     Precision::fp8, Precision::fp32_bf16_matmul};
const char* to_string(Precision precision);
bool parse_precision(const std::string_view text, Precision& out);

}  // namespace trainplan::spec
