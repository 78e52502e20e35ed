#include "kernels/cpu_features.h"

#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace trainplan::kernels {
namespace {

// AMX-TILE and AMX-BF16: CPUID leaf 7 sub-leaf 0, EDX bits 24 and 22 (Intel SDM vol. 2A,
// CPUID). Linux (5.16+) keeps the 8 KiB tile state off until the process asks for it with
// arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA = 18) (kernel Documentation/arch/x86/xstate.rst);
// a tile instruction before that faults. The grant covers every thread of the process.
bool amx_usable() {
  static const bool usable = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
    if (!(edx & (1u << 24)) || !(edx & (1u << 22))) return false;
    constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return usable;
}

}  // namespace

// TRAINPLAN_KERNEL_ISA caps every check, so a forced path runs as it would on
// a CPU without the higher ISAs: packing helpers fall back with the kernels.
Isa isa_cap() {
  static const Isa cap = [] {
    const char* env = std::getenv("TRAINPLAN_KERNEL_ISA");
    const std::string s = env ? env : "";
    if (s == "portable") return Isa::portable;
    if (s == "avx2") return Isa::avx2;
    if (s == "avx512") return Isa::avx512;
    if (s == "avx512_bf16") return Isa::avx512_bf16;
    return Isa::amx_bf16;
  }();
  return cap;
}

bool cpu_has(Isa isa) {
  if (int(isa) > int(isa_cap())) return false;
  switch (isa) {
    case Isa::portable: return true;
    case Isa::avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Isa::avx512: return __builtin_cpu_supports("avx512f") && cpu_has(Isa::avx2);
    case Isa::avx512_bf16:  // VL for the tile kernel's masked 256-bit stores
      return __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && cpu_has(Isa::avx512);
    case Isa::amx_bf16:  // packing and rounding use AVX-512 (and VL, as above)
      return cpu_has(Isa::avx512_bf16) && amx_usable();
  }
  return false;
}

Isa best_isa() {
  static const Isa chosen = [] {
    for (Isa isa : {Isa::amx_bf16, Isa::avx512_bf16, Isa::avx512, Isa::avx2})
      if (cpu_has(isa)) return isa;
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
    case Isa::amx_bf16: return "amx_bf16";
  }
  return "?";
}

}  // namespace trainplan::kernels
