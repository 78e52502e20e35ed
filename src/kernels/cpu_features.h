// Which instruction sets this CPU offers, read once at run time, so one binary
// runs everywhere and picks the widest micro-kernel the host supports.
// avx512_bf16 adds VDPBF16PS (BF16 pair dot products into FP32); amx_bf16 adds
// AMX tiles and TDPBF16PS, usable only once Linux grants this process the tile state.
// TRAINPLAN_KERNEL_ISA=portable|avx2|avx512|avx512_bf16|amx_bf16 caps every check
// (tests, benchmarks): the process runs as on a CPU without the ISAs above it.
#pragma once

namespace trainplan::kernels {

enum class Isa { portable, avx2, avx512, avx512_bf16, amx_bf16 };

Isa best_isa();              // the widest supported ISA, after the cap above
bool cpu_has(Isa isa);       // does the CPU (and for amx_bf16 the OS) support it, within the cap
const char* to_string(Isa isa);

}  // namespace trainplan::kernels
