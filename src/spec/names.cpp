#include <algorithm>
#include <string>

#include "spec/hardware_spec.h"
#include "spec/model_spec.h"
#include "spec/plan.h"
#include "spec/workload.h"

namespace trainplan::spec {

const char* to_string(FabricTopology t) {
  switch (t) {
    case FabricTopology::all_to_all: return "all-to-all";
    case FabricTopology::torus_2d: return "torus-2d";
    case FabricTopology::switched: return "switch";
  }
  return "?";
}
const char* to_string(ModelKind k) { return k == ModelKind::decoder ? "decoder" : "encoder-mlm"; }
const char* to_string(MlpKind k) { return k == MlpKind::gelu ? "gelu" : "swiglu"; }
const char* to_string(Precision p) {
  switch (p) {
    case Precision::mixed_bf16: return "mixed-bf16";
    case Precision::bf16_sr: return "bf16-sr";
    case Precision::fp32: return "fp32";
    case Precision::fp8: return "fp8";
    case Precision::fp32_bf16_matmul: return "fp32-bf16-matmul";
  }
  return "?";
}
bool parse_precision(std::string_view text, Precision& out) {
  for (Precision p : kPrecisions)
    if (text == to_string(p)) return out = p, true;
  return false;
}
double layers_per_stage(int layers, const Plan& p) {
  const long slots = long(layers) + (edge_slots_active(p) ? 2 : 0);
  return p.uneven_stages ? double((slots + p.pp - 1) / p.pp) : double(slots) / p.pp;
}

double stage_layers(int layers, const Plan& p, int rank) {
  const bool edge = edge_slots_active(p) && (rank == 0 || rank == p.pp - 1);
  return layers_per_stage(layers, p) - (edge ? 1 : 0);
}

double chunk_layers(int layers, const Plan& p) { return layers_per_stage(layers, p) / p.virtual_stages; }

double recomputed_layers(const Plan& p, double chunk_layers) {
  if (p.recompute != Recompute::full) return 0;
  return p.recompute_layers > 0 ? std::min<double>(p.recompute_layers, chunk_layers) : chunk_layers;
}

double recomputed_share(const Plan& p, double chunk_layers) {
  return chunk_layers > 0 ? recomputed_layers(p, chunk_layers) / chunk_layers : 0.0;
}

double recomputed_share(int layers, const Plan& p) {
  return recomputed_share(p, chunk_layers(layers, p));
}

std::string recompute_text(const Plan& p, bool spelled_out) {
  std::string text = to_string(p.recompute);
  if (p.recompute == Recompute::full && p.recompute_layers > 0)
    text += ", first " + std::to_string(p.recompute_layers) +
            (spelled_out ? (p.recompute_layers == 1 ? " layer of each chunk" : " layers of each chunk") : "");
  return text;
}

const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
  }
  return "?";
}
bool parse_recompute(std::string_view text, Recompute& out) {
  for (Recompute r : {Recompute::none, Recompute::selective, Recompute::full})
    if (text == to_string(r)) return out = r, true;
  return false;
}

}  // namespace trainplan::spec
