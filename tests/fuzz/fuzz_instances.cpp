// Fuzz target: the instance-count parser of search, sweep and compare
// (`--instances 1,2,4` or `1..128`, cli::parse_instances) and the hardware list
// splitter (app::split_hardware), one value per input line. The only refusal
// allowed is CLI::ValidationError; accepted counts are 1..2^31-1, a range
// ascends from its start to its end, and a split list holds no empty name.
#include "cli/search_flags.h"
#include "fuzz_text.h"

namespace {

void instances(const std::string& text) {
  std::vector<int> counts;
  try {
    counts = trainplan::cli::parse_instances(text);
  } catch (const CLI::ValidationError&) {
    return;
  }
  FUZZ_EXPECT(!counts.empty());
  for (const int n : counts) FUZZ_EXPECT(n >= 1);
  if (text.find("..") != std::string::npos) {
    FUZZ_EXPECT(counts.size() <= 32);
    for (size_t i = 1; i < counts.size(); ++i) FUZZ_EXPECT(counts[i] > counts[i - 1]);
  } else {
    FUZZ_EXPECT(counts.size() <= text.size());
  }
}

void hardware_list(const std::string& text) {
  for (const std::string& name : trainplan::app::split_hardware(text))
    FUZZ_EXPECT(!name.empty() && name.find(',') == std::string::npos);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for (const std::string& line : trainplan::fuzz::lines_of(trainplan::fuzz::text_of(data, size))) {
    instances(line);
    hardware_list(line);
  }
  return 0;
}
