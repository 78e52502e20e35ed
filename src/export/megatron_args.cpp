#include "export/megatron_args.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "spec/error.h"

namespace trainplan::exporting {

void write_batch_and_sequence(ArgList& a, const LaunchJob& job, bool with_max_positions) {
  a.number("--micro-batch-size", job.plan.micro_batch);
  a.number("--global-batch-size", job.workload.global_batch_seqs);
  a.number("--seq-length", job.workload.seq_len);
  if (with_max_positions) a.number("--max-position-embeddings", std::max(job.model.max_positions, job.workload.seq_len));
}

void write_layer_shape(ArgList& a, const spec::ModelSpec& m) {
  a.number("--num-layers", m.layers);
  a.number("--hidden-size", m.hidden);
  a.number("--ffn-hidden-size", m.ffn_hidden);
  a.number("--num-attention-heads", m.heads);
  // Megatron takes hidden / heads unless told (arguments.py: --kv-channels).
  if (m.explicit_head_dim > 0) a.number("--kv-channels", m.explicit_head_dim);
}

std::string rope_base_text(const spec::ModelSpec& m) {
  std::ostringstream f;
  f << std::fixed << std::setprecision(0) << (m.rope_theta > 0 ? m.rope_theta : 10000.0);
  return f.str();
}

void write_rotary_percent(ArgList& a, const spec::ModelSpec& m) {
  if (m.position != spec::PositionKind::rotary || m.rotary_fraction <= 0 || m.rotary_fraction >= 1) return;
  std::ostringstream f;
  f << m.rotary_fraction;
  a.text("--rotary-percent", f.str());
}

void write_shared_architecture(ArgList& a, const spec::ModelSpec& m) {
  if (m.mlp == spec::MlpKind::swiglu) a.flag("--swiglu");
  // NVIDIA/Megatron-LM@73a28a10 megatron/training/arguments.py:1446 and microsoft/Megatron-DeepSpeed@f4157bea
  // megatron/arguments.py:668: --squared-relu, 'Use squared relu activation instead of default gelu'.
  if (m.squared_relu) a.flag("--squared-relu");
  if (!m.tied_embeddings) a.flag("--untie-embeddings-and-output-weights");
  if (!m.bias) a.flag("--disable-bias-linear");
  if (!m.dropout) {
    a.text("--attention-dropout", "0.0");
    a.text("--hidden-dropout", "0.0");
  }
  a.number("--vocab-size", m.vocab);
  a.number("--make-vocab-size-divisible-by", m.vocab_pad_multiple);
}

void read_shared_architecture(const ShellArgs& args, const std::string& file, LaunchJob& job) {
  constexpr long kBig = 1L << 30;
  spec::ModelSpec& m = job.model;
  m.squared_relu = m.mlp == spec::MlpKind::gelu && args.has("--squared-relu");  // read after --swiglu
  m.tied_embeddings = !args.has("--untie-embeddings-and-output-weights");
  m.bias = !args.has("--disable-bias-linear");
  m.dropout = args.real("--attention-dropout", 0.1, file) > 0 || args.real("--hidden-dropout", 0.1, file) > 0;
  m.vocab = int(args.whole("--vocab-size", 1, kBig, 0, file));
  m.vocab_pad_multiple = int(args.whole("--make-vocab-size-divisible-by", 1, kBig, 128, file));
  m.max_positions = int(args.whole("--max-position-embeddings", 1, kBig, job.workload.seq_len, file));
}

int read_ffn_hidden(const ShellArgs& args, const std::string& file, long fallback) {
  constexpr long kBig = 1L << 30;
  if (args.has("--ffn-hidden-size") || (fallback >= 1 && fallback <= kBig))
    return int(args.whole("--ffn-hidden-size", 1, kBig, fallback, file));
  throw spec::SpecError(file, "--ffn-hidden-size",
                        "the option: the width it defaults to from --hidden-size, " + std::to_string(fallback) +
                            ", is outside 1.." + std::to_string(kBig));
}

double read_rotary_percent(const ShellArgs& args, const std::string& file) {
  const double share = args.real("--rotary-percent", 1.0, file);
  if (!(share > 0 && share <= 1))
    throw spec::SpecError(file, "--rotary-percent", "a share of each head's dimensions in (0, 1], found '" +
                                                        args.value("--rotary-percent").value_or("") + "'");
  return share;
}

bool read_architecture_head(const ShellArgs& args, const std::string& file, const std::string& vocab_option,
                            LaunchJob& job) {
  constexpr long kBig = 1L << 30;
  spec::ModelSpec& m = job.model;
  // What a partial architecture states is kept, for the caller to hold a named model against it.
  m.layers = int(args.whole("--num-layers", 1, kBig, 0, file));
  m.hidden = int(args.whole("--hidden-size", 1, kBig, 0, file));
  m.heads = int(args.whole("--num-attention-heads", 1, kBig, 0, file));
  if (!(args.has("--num-layers") && args.has("--hidden-size") && args.has("--num-attention-heads") &&
        args.has(vocab_option)))
    return false;
  job.has_architecture = true;
  m.name = "from " + file;
  m.source_file = file;
  m.source = file + " (its architecture arguments)";
  if (args.has("--kv-channels")) {
    const int d = int(args.whole("--kv-channels", 1, kBig, 0, file));
    if (long(d) * m.heads != m.hidden) m.explicit_head_dim = d;
  } else if (m.hidden % m.heads != 0) {
    // Megatron-LM@73a28a10 megatron/training/arguments.py:771-773 (and both Megatron-DeepSpeed forks):
    // without --kv-channels the head width is hidden / heads, asserted whole.
    throw spec::SpecError(file, "--num-attention-heads",
                          "a divisor of --hidden-size " + std::to_string(m.hidden) + " unless --kv-channels is given (" +
                              std::to_string(m.heads) + " heads do not divide it; the client asserts it)");
  }
  return true;
}

}  // namespace trainplan::exporting
