// The layer shapes the calibration grid is drawn from: the models trainplan
// ships descriptors for (hidden, ffn hidden, attention heads, KV heads), kept
// here so calibration runs without the spec loader. Figures from each model's
// published config (Hugging Face config.json or its paper).
#pragma once
#include <string>
#include <vector>

namespace trainplan::calib {

struct LayerShape {
  std::string model;
  long hidden = 0, ffn_hidden = 0, heads = 0, kv_heads = 0;
  long head_dim() const { return hidden / heads; }
};

const std::vector<LayerShape>& builtin_layer_shapes();

}  // namespace trainplan::calib
