// expect_spec_error: runs `f` and expects a SpecError whose JSON path contains
// `path_part` and whose message contains `expected_part`; with `file`, also
// that the error names that file first, as the one-line message promises.
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "spec/error.h"

namespace trainplan::spec::test_support {

template <typename F>
void expect_spec_error(F&& f, const std::string& path_part, const std::string& expected_part,
                       const std::string& file = "") {
  try {
    f();
    FAIL() << "expected a SpecError at " << path_part;
  } catch (const SpecError& e) {
    const std::string what = e.what();
    if (!file.empty()) {
      EXPECT_EQ(e.file(), file) << what;
      EXPECT_EQ(what.rfind(file + ": ", 0), 0u) << what;
    }
    EXPECT_NE(e.json_path().find(path_part), std::string::npos) << what;
    EXPECT_NE(what.find(expected_part), std::string::npos) << what;
  }
}

}  // namespace trainplan::spec::test_support
