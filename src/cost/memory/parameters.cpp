// Parameters one device holds per pipeline rank and parameter group: a stage's
// layers, the embedding on the first and the head on the last, the routed
// experts split over EP and expert TP, and the replica count each group is
// sharded over (dense: DP x CP, Megatron-Core's data-parallel group with CP;
// experts: their own data-parallel group).
#include <algorithm>

#include "cost/memory.h"
#include "cost/stages.h"

namespace trainplan::cost {

double stage_parameters_per_device(const spec::ModelSpec& m, const spec::Plan& p, int rank) {
  const double layers = double(m.layer_parameters()) * spec::stage_layers(m.layers, p, rank);
  const double embedding = double(m.embedding_parameters());
  double head = double(m.head_parameters());
  // A tied output layer on a last stage of its own keeps a copy of the word
  // embedding, as a parameter with its own gradient and optimizer state, for
  // GPT and BERT alike (Megatron-Core LanguageModule.setup_embeddings_and_output_layer;
  // BertModel's output_layer allocates its weight unless pre_process).
  if (m.tied_embeddings && p.pp > 1) head += double(m.padded_vocab()) * m.hidden;
  if (p.pp == 1) return (layers + embedding + head) / p.tp;
  return (layers + (rank == 0 ? embedding : 0.0) + (rank == p.pp - 1 ? head : 0.0)) / p.tp;
}

double parameters_per_device(const spec::ModelSpec& m, const spec::Plan& p) {
  double most = 0;
  for (const int rank : candidate_ranks(p)) most = std::max(most, stage_parameters_per_device(m, p, rank));
  return most;
}

double stage_layer_parameters_per_device(const spec::ModelSpec& m, const spec::Plan& p, int rank) {
  return double(m.layer_parameters()) * spec::stage_layers(m.layers, p, rank) / p.tp;
}

double expert_parameters_per_device(const spec::ModelSpec& m, const spec::Plan& p) {
  if (!m.moe()) return 0;
  const int etp = spec::expert_tp(p);
  const double per_layer = double(m.routed_expert_parameters()) / m.layers;
  return per_layer * spec::layers_per_stage(m.layers, p) / (double(p.ep) * etp);
}

spec::Plan sharded_over(const spec::Plan& p, int replicas) {
  spec::Plan out = p;
  out.dp = replicas;
  return out;
}

}  // namespace trainplan::cost
