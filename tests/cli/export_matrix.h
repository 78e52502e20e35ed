// A matrix of plans for one export format (issue 38.1): each plan exported with
// `trainplan export`, its file holding the settings the client needs and none it
// must not, and read back by --from-config to the same file. The clients' own
// checks ran by hand on the same plans (tools/check_*_args.py); these keep what
// those runs showed.
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "run_cli.h"

namespace trainplan::cli::testing {

struct MatrixPlan {
  std::string plan;                  // export flags
  std::vector<std::string> present;  // text the file must hold
  std::vector<std::string> absent;   // text it must not
};

// A path in a scratch folder of the test's own.
inline std::string matrix_scratch(const std::string& folder, const std::string& name) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / folder;
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

inline std::string read_whole_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Exports every plan to `format` in `folder`, checks what each file holds, and reads it back;
// `always` is text every file of the format holds.
inline void expect_matrix(const std::string& format, const std::vector<MatrixPlan>& plans, const std::string& folder,
                          const std::vector<std::string>& always = {}) {
  ASSERT_GE(plans.size(), 20u);
  int n = 0;
  for (const MatrixPlan& m : plans) {
    const std::string a = matrix_scratch(folder, "m" + std::to_string(n) + "a.sh");
    const std::string b = matrix_scratch(folder, "m" + std::to_string(n) + "b.sh");
    ++n;
    Outcome r = run_cli("export -q --to " + format + " --out " + a + " " + m.plan);
    ASSERT_EQ(r.code, 0) << m.plan << "\n" << r.out;
    const std::string file = read_whole_file(a);
    for (const std::string& s : m.present) EXPECT_NE(file.find(s), std::string::npos) << m.plan << ": " << s;
    for (const std::string& s : always) EXPECT_NE(file.find(s), std::string::npos) << m.plan << ": " << s;
    for (const std::string& s : m.absent) EXPECT_EQ(file.find(s), std::string::npos) << m.plan << ": " << s;
    r = run_cli("export -q --from-config " + a + " --to " + format + " --out " + b);
    ASSERT_EQ(r.code, 0) << m.plan << "\n" << r.out;
    EXPECT_EQ(read_whole_file(b), file) << m.plan;
  }
}

}  // namespace trainplan::cli::testing
