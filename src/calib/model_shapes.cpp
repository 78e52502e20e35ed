#include "calib/model_shapes.h"

namespace trainplan::calib {

const std::vector<LayerShape>& builtin_layer_shapes() {
  static const std::vector<LayerShape> shapes = {
      {"bert-large", 1024, 4096, 16, 16},     {"bert-1.5b", 1600, 6400, 25, 25},
      {"pythia-6.9b", 4096, 16384, 32, 32},   {"gpt-neox-20b", 6144, 24576, 64, 64},
      {"llama2-7b", 4096, 11008, 32, 32},     {"llama2-13b", 5120, 13824, 40, 40},
      {"llama2-70b", 8192, 28672, 64, 8},     {"llama3-8b", 4096, 14336, 32, 8},
      {"llama3-70b", 8192, 28672, 64, 8},     {"gpt3-175b", 12288, 49152, 96, 96},
  };
  return shapes;
}

}  // namespace trainplan::calib
