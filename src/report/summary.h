// Summary: profiler-like sections of label / value lines, e.g. where step time
// goes. Each line may show its share of the section total (the sum of its
// values unless a total is given) and, in text, a bar of '#' of that share.
// Renders in all four formats; shares are presentation, not model figures.
#pragma once
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "report/format.h"
#include "report/number_format.h"

namespace trainplan::report {

struct SummaryLine {
  std::string label;
  double value = 0;  // raw, SI unit of the section
};

struct SummarySection {
  std::string title;
  std::string unit;  // of every value in the section
  NumberStyle style = NumberStyle::engineering;
  int decimals = 2;
  bool show_share = true;
  std::optional<double> total;  // default: sum of the line values
  std::vector<SummaryLine> lines;

  double total_value() const;
};

struct Summary {
  std::string title;
  std::vector<SummarySection> sections;
  std::vector<std::string> notes;
};

// text: bar_width '#' marks a share of 100%. csv: section,label,value,unit,share
// with raw numbers. json: {title, sections: [{title, unit, total, lines: [{label,
// value, share}]}], notes}.
void render_summary(std::ostream& out, const Summary& summary, Format format, int bar_width = 40);

}  // namespace trainplan::report
