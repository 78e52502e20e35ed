// What the Megatron-family pretrain_gpt.py scripts share (Megatron-LM,
// bigscience and microsoft Megatron-DeepSpeed): the batch, sequence and layer
// shape options to write, the architecture flags spelled alike, and the
// architecture's head (layers, hidden, heads) to read back.
#pragma once
#include <string>

#include "export/launch_job.h"
#include "export/shell_args.h"

namespace trainplan::exporting {

// --micro-batch-size, --global-batch-size, --seq-length and, unless told not to
// (bigscience's fork asserts none is given with rotary embeddings), --max-position-embeddings.
void write_batch_and_sequence(ArgList& args, const LaunchJob& job, bool with_max_positions = true);
// --num-layers, --hidden-size, --ffn-hidden-size, --num-attention-heads.
void write_layer_shape(ArgList& args, const spec::ModelSpec& model);
// --rotary-percent (a partial rotary only), --swiglu, --untie-embeddings-and-output-weights,
// --disable-bias-linear, zero dropouts, --vocab-size, --make-vocab-size-divisible-by.
// RoPE's base as the clients take it (an integer: Megatron's --rotary-base is type=int);
// a model that states none gets the clients' default, 10000.
std::string rope_base_text(const spec::ModelSpec& m);
void write_rotary_percent(ArgList& args, const spec::ModelSpec& model);
void write_shared_architecture(ArgList& args, const spec::ModelSpec& model);
// The reverse of write_shared_architecture (less --swiglu, which the caller reads first) and --max-position-embeddings:
// the defaults are Megatron's (tied, biased, dropout 0.1, padded to 128).
void read_shared_architecture(const ShellArgs& args, const std::string& file, LaunchJob& job);
// --ffn-hidden-size, else `fallback`, the width the client derives from --hidden-size; refused
// naming --ffn-hidden-size where that width is below 1 or past 2^30 (tiny or huge hidden sizes).
int read_ffn_hidden(const ShellArgs& args, const std::string& file, long fallback);
// --rotary-percent (default 1): the share of each head's dimensions RoPE rotates, refused
// outside (0, 1] as a model file's rotary_fraction is.
double read_rotary_percent(const ShellArgs& args, const std::string& file);
// When the script states --num-layers, --hidden-size, --num-attention-heads and
// `vocab_option`, names the model after `file` and reads those three; false otherwise.
bool read_architecture_head(const ShellArgs& args, const std::string& file, const std::string& vocab_option,
                            LaunchJob& job);

}  // namespace trainplan::exporting
