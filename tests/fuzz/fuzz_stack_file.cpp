// Fuzz target: `--stack FILE` and `--stack LINE@VERSION` as spec::load_stack reads
// them. The input is written to fuzz.json in a folder of this process's own and
// loaded from there as the tool loads a file in the folder it runs in: its
// "extends" chain, a shipped stack's name found under spec::data_root(), "fuzz.json"
// the file itself. The first line, when of the form LINE@VERSION, is loaded too.
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include "fuzz_stack_checks.h"
#include "fuzz_folder.h"
#include "fuzz_text.h"
#include "spec/error.h"
#include "spec/load.h"

namespace {
namespace fs = std::filesystem;
using namespace trainplan;

const fs::path& own_folder() { return fuzz::own_folder("stack_file"); }

// Runs in `folder` until destroyed, the loader's exceptions included: libFuzzer's
// own relative paths (its corpus folders) name folders under the one it started in.
class InFolder {
 public:
  explicit InFolder(const fs::path& folder) : before_(fs::current_path()) { fs::current_path(folder); }
  ~InFolder() {
    std::error_code ec;
    fs::current_path(before_, ec);
    FUZZ_EXPECT(!ec);
  }
  InFolder(const InFolder&) = delete;
  InFolder& operator=(const InFolder&) = delete;

 private:
  fs::path before_;
};

void load_file(std::string_view text) {
  const InFolder here(own_folder());
  {
    std::ofstream out("fuzz.json", std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    FUZZ_EXPECT(out.good());
  }
  try {
    const spec::Stack stack = spec::load_stack("fuzz.json");
    fuzz::expect_stack(stack);
    // spec/load.cpp refuses a chain deeper than 4 files, so a cycle ends there.
    FUZZ_EXPECT(stack.source_file == "fuzz.json" && stack.bases.size() <= 4);
  } catch (const spec::SpecError&) {
  }
}

// Only a name load_stack reads as LINE@VERSION: one with a '/' or ending in
// .json is a path, which load_file covers.
void load_release(const std::string& asked) {
  const size_t at = asked.find('@');
  if (at == std::string::npos || asked.find('/') != std::string::npos || asked.ends_with(".json")) return;
  try {
    const spec::Stack stack = spec::load_stack(asked);
    fuzz::expect_stack(stack);
    FUZZ_EXPECT(stack.releases.line == asked.substr(0, at) && spec::release_holds(stack.releases, asked.substr(at + 1)));
    FUZZ_EXPECT(fs::path(stack.source_file).parent_path() == fs::path(spec::data_root()) / "stacks");
  } catch (const spec::SpecError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::text_of(data, size);
  load_file(text);
  load_release(fuzz::lines_of(text).front());
  return 0;
}
