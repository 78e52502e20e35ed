#include "kernels/cpu_features.h"

#include <cstdlib>
#include <string>

namespace tp::kernels {

bool cpu_has(Isa isa) {
  switch (isa) {
    case Isa::portable: return true;
    case Isa::avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Isa::avx512: return __builtin_cpu_supports("avx512f") && cpu_has(Isa::avx2);
    case Isa::avx512_bf16:
      return __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512bw") && cpu_has(Isa::avx512);
  }
  return false;
}

Isa best_isa() {
  static const Isa chosen = [] {
    Isa cap = Isa::avx512_bf16;
    if (const char* env = std::getenv("TRAINPLAN_KERNEL_ISA")) {
      std::string s = env;
      if (s == "portable") cap = Isa::portable;
      else if (s == "avx2") cap = Isa::avx2;
      else if (s == "avx512") cap = Isa::avx512;
    }
    for (Isa isa : {Isa::avx512_bf16, Isa::avx512, Isa::avx2})
      if (int(isa) <= int(cap) && cpu_has(isa)) return isa;
    return Isa::portable;
  }();
  return chosen;
}

const char* to_string(Isa isa) {
  switch (isa) {
    case Isa::portable: return "portable";
    case Isa::avx2: return "avx2";
    case Isa::avx512: return "avx512";
    case Isa::avx512_bf16: return "avx512_bf16";
  }
  return "?";
}

}  // namespace tp::kernels
