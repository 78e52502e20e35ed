// The reduction buffers component: a DP bucket buffer kept across steps (two
// where the stack double-buffers an overlapped reduction), and the flat bucket
// copy a buffered all-reduce makes after backward (with its cast to the
// reduction dtype beside it where the stack casts one).
#include <algorithm>

#include "cost/memory.h"

namespace trainplan::cost {

double reduction_buffers_bytes(const spec::ModelSpec& m, const spec::Stack& stack, const StateBytes& s,
                               const spec::Plan& p) {
  if (p.dp <= 1) return 0;
  const spec::StackCommunication& c = stack.communication;
  // The Hugging Face integration's "auto" reduce_bucket_size: hidden^2
  // elements of the 16-bit model dtype the bucket is allocated in.
  const double one = c.dp_bucket_buffer_hidden_squared ? double(m.hidden) * m.hidden * s.weights : c.dp_bucket_buffer_bytes;
  return one * (p.overlap_dp_comm && c.overlap_dp_grad_reduce ? c.dp_bucket_buffers_overlapped : 1);
}

double reduction_copy_bytes(const spec::ModelSpec& m, const spec::Stack& stack, const StateBytes& s, double params,
                            const spec::Plan& p, int rank) {
  if (p.dp <= 1 || stack.communication.dp_reduction_copy_bytes <= 0) return 0;
  // The edge stages hold the embedding or the head (or the tied copy): one tensor of
  // vocabulary x hidden (positions and the embedding's norm are tensors of their own).
  const bool edge = rank == 0 || rank == p.pp - 1;
  const double embedding = edge ? double(m.padded_vocab()) * m.hidden / p.tp : 0.0;
  const double layer_matrix = double(m.hidden) * std::max(m.ffn_hidden, 3 * m.hidden) / p.tp;
  // Where the stack casts the flat copy for the collective (dp_reduce_dtype), the cast sits beside it.
  const double per_element = s.gradients + s.reduce_cast;
  const double largest = std::max(embedding, layer_matrix) * per_element;
  return std::min(params * per_element, std::max(stack.communication.dp_reduction_copy_bytes, largest));
}

}  // namespace trainplan::cost
