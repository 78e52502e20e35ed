// The logits component: the loss's logits on the last stage, at the stack's
// bytes per logit.
#include "cost/memory.h"

namespace trainplan::cost {

double logits_bytes(const spec::ModelSpec& m, const spec::Stack& stack, const spec::Workload& w, const spec::Plan& p) {
  const double head_tokens = double(w.seq_len) / p.cp * p.micro_batch * m.head_token_fraction;
  const double tp_bytes = stack.memory.loss_bytes_per_logit_tp;
  const double bytes = p.tp > 1 && tp_bytes > 0 ? tp_bytes : stack.memory.loss_bytes_per_logit;
  return head_tokens * double(m.padded_vocab(p.tp)) / p.tp * bytes;
}

}  // namespace trainplan::cost
