// How an emitter refuses a plan its launcher cannot run: one SpecError naming
// the --emit flag, the launcher's option and what that option needs.
// One Refusal per launcher format, shared by every file that writes it.
#pragma once
#include <string>

#include "spec/error.h"

namespace tp::exporting {

struct Refusal {
  const char* emit_flag;
  [[noreturn]] void operator()(const std::string& option, const std::string& why) const {
    throw spec::SpecError(emit_flag, option, why);
  }
};

inline constexpr Refusal refuse_deepspeed{"--emit deepspeed"};
inline constexpr Refusal refuse_megatron{"--emit megatron"};
inline constexpr Refusal refuse_nemo{"--emit nemo"};
inline constexpr Refusal refuse_nxd{"--emit nxd"};

}  // namespace tp::exporting
