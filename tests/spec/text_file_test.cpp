// Writing files: through a link to the file it names, never over a folder or a
// device, nothing left beside the target on failure, and files that belong
// together (a launch script and its ds_config) written both or neither.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "spec/error.h"
#include "spec/text_file.h"

namespace fs = std::filesystem;
using trainplan::spec::read_text_file;
using trainplan::spec::write_text_file;
using trainplan::spec::write_text_files;

namespace {

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / "trainplan_text_file_test" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace

TEST(TextFile, WritesThroughALinkToTheFileItNames) {
  const fs::path dir = scratch("link");
  write_text_file((dir / "real.txt").string(), "old", "test file");
  fs::create_symlink(dir / "real.txt", dir / "link.txt");
  write_text_file((dir / "link.txt").string(), "new", "test file");
  EXPECT_TRUE(fs::is_symlink(dir / "link.txt"));
  EXPECT_EQ(read_text_file((dir / "real.txt").string()), "new");
}

TEST(TextFile, AFolderInTheWayRefusesTheWholeSetAndLeavesTheOthersAsTheyWere) {
  const fs::path dir = scratch("pair");
  write_text_file((dir / "job.sh").string(), "old script", "test file");
  fs::create_directories(dir / "job.ds_config.json");
  EXPECT_THROW(write_text_files({{(dir / "job.sh").string(), "new script"},
                                 {(dir / "job.ds_config.json").string(), "{}"}},
                                "launcher config"),
               trainplan::spec::SpecError);
  EXPECT_EQ(read_text_file((dir / "job.sh").string()), "old script");
  for (const auto& entry : fs::directory_iterator(dir))
    EXPECT_EQ(entry.path().string().find(".partial"), std::string::npos) << entry.path();
}

TEST(TextFile, BothFilesOfASetLand) {
  const fs::path dir = scratch("both");
  write_text_files({{(dir / "job.sh").string(), "script"}, {(dir / "job.ds_config.json").string(), "{}"}},
                   "launcher config");
  EXPECT_EQ(read_text_file((dir / "job.sh").string()), "script");
  EXPECT_EQ(read_text_file((dir / "job.ds_config.json").string()), "{}");
}
