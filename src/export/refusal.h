// How an emitter refuses a plan its launcher cannot run: one SpecError naming
// the format ("megatron format": estimate's --emit and export's --to both
// name it), the launcher's option and what that option needs.
// One Refusal per launcher format, shared by every file that writes it.
#pragma once
#include <string>

#include "spec/error.h"

namespace trainplan::exporting {

struct Refusal {
  const char* format;
  [[noreturn]] void operator()(const std::string& option, const std::string& why) const {
    throw spec::SpecError(format, option, why);
  }
};

inline constexpr Refusal refuse_deepspeed{"deepspeed format"};
inline constexpr Refusal refuse_megatron{"megatron format"};
inline constexpr Refusal refuse_nemo{"nemo format"};
inline constexpr Refusal refuse_nxd{"nxd format"};
inline constexpr Refusal refuse_habana{"habana format"};

}  // namespace trainplan::exporting
