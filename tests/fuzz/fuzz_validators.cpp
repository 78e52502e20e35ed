// Fuzz target: the checks of cli/validators.h as trainplan applies them, each
// input line given as --value=LINE to CLI11 int, long and double options. The
// only refusals allowed are CLI::ValidationError (our words) and, for an empty
// value, CLI::ArgumentMismatch; an accepted value converts (no ConversionError)
// to the very number the check read.
#include <cmath>

#include "cli/validators.h"
#include "fuzz_text.h"

namespace {

// Parses `--name=value` into `target`; false when our check refused it.
template <class T>
bool parse(const std::string& value, CLI::Validator check, T& target) {
  CLI::App app;
  app.add_option("--value", target)->check(std::move(check));
  const std::string argument = "--value=" + value;
  std::vector<std::string> args{argument};  // CLI11 takes them last to first
  try {
    app.parse(args);
  } catch (const CLI::ValidationError&) {
    return false;
  } catch (const CLI::ArgumentMismatch&) {  // "--value=" gives no value at all: "1 required ... missing"
    FUZZ_EXPECT(value.empty());
    return false;
  }
  return true;
}

void whole(const std::string& text, long long lo, long long hi) {
  int as_int = 0;
  if (parse(text, trainplan::cli::whole_in(lo, hi), as_int)) {
    FUZZ_EXPECT(as_int >= lo && as_int <= hi);
    FUZZ_EXPECT(as_int == std::stoll(text));
  }
  long as_long = 0;
  if (parse(text, trainplan::cli::positive_whole(), as_long)) FUZZ_EXPECT(as_long >= 1 && as_long == std::stoll(text));
}

void amount(const std::string& text) {
  double value = -1;
  if (!parse(text, trainplan::cli::non_negative(), value)) return;
  const double read = std::stod(text);
  FUZZ_EXPECT(std::isfinite(value) && value >= 0);
  FUZZ_EXPECT(std::fabs(value - read) <= 1e-12 * std::fabs(read));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for (const std::string& line : trainplan::fuzz::lines_of(trainplan::fuzz::text_of(data, size))) {
    whole(line, 0, 3);
    whole(line, 1, 2147483647);
    amount(line);
  }
  return 0;
}
