#include "report/summary.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "report/escape.h"
#include "report/prose_wrap.h"

namespace trainplan::report {
namespace {

// NaN when there is no meaningful total (zero or non-finite).
double share_of(double value, double total) {
  return (total != 0 && std::isfinite(total)) ? value / total : std::nan("");
}

std::string bar(double share, int width) {
  if (!std::isfinite(share)) return {};
  const double clamped = std::clamp(share, 0.0, 1.0);
  return std::string(static_cast<std::size_t>(std::lround(clamped * width)), '#');
}

std::string human_value(double value, const SummarySection& section) {
  return format_human(value, section.style, section.decimals, section.unit);
}

std::string human_share(double share) { return format_human(share, NumberStyle::percent, 1, ""); }

void render_text(std::ostream& out, const Summary& summary, int bar_width) {
  if (!summary.title.empty()) out << wrap_prose(summary.title) << "\n";
  for (const SummarySection& section : summary.sections) {
    std::size_t label_width = 0, value_width = 0;
    for (const auto& line : section.lines) {
      label_width = std::max(label_width, display_width(line.label));
      value_width = std::max(value_width, display_width(human_value(line.value, section)));
    }
    const double total = section.total_value();
    out << section.title;
    if (section.show_share) out << "  (total " << human_value(total, section) << ")";
    out << '\n';
    for (const auto& line : section.lines) {
      const std::string value = human_value(line.value, section);
      std::string text = "  " + line.label + std::string(label_width - display_width(line.label), ' ') + "  " +
                         std::string(value_width - display_width(value), ' ') + value;
      if (section.show_share) {
        const double share = share_of(line.value, total);
        const std::string percent = human_share(share);
        text += "  " + std::string(6 - std::min<std::size_t>(6, percent.size()), ' ') + percent;
        const std::string marks = bar(share, bar_width);
        if (!marks.empty()) text += "  " + marks;
      }
      out << text << '\n';
    }
    out << '\n';
  }
  for (const auto& note : summary.notes) out << wrap_prose(note);
}

void render_markdown(std::ostream& out, const Summary& summary) {
  if (!summary.title.empty()) out << "### " << markdown_cell(summary.title) << "\n\n";
  for (const SummarySection& section : summary.sections) {
    const double total = section.total_value();
    out << "#### " << markdown_cell(section.title);
    if (section.show_share) out << " (total " << human_value(total, section) << ")";
    out << "\n\n" << (section.show_share ? "| item | value | share |\n| :--- | ---: | ---: |\n"
                                         : "| item | value |\n| :--- | ---: |\n");
    for (const auto& line : section.lines) {
      out << "| " << markdown_cell(line.label) << " | " << human_value(line.value, section) << " |";
      if (section.show_share) out << ' ' << human_share(share_of(line.value, total)) << " |";
      out << '\n';
    }
    out << '\n';
  }
  for (const auto& note : summary.notes) out << markdown_cell(note) << "  \n";
}

void render_csv(std::ostream& out, const Summary& summary) {
  out << "section,label,value,unit,share\n";
  for (const SummarySection& section : summary.sections) {
    const double total = section.total_value();
    for (const auto& line : section.lines) {
      const double share = share_of(line.value, total);
      out << csv_field(section.title) << ',' << csv_field(line.label) << ',' << format_raw(line.value) << ','
          << csv_field(section.unit) << ',' << (section.show_share && std::isfinite(share) ? format_raw(share) : "")
          << '\n';
    }
  }
}

nlohmann::ordered_json number_or_null(double value) {
  return std::isfinite(value) ? nlohmann::ordered_json(value) : nlohmann::ordered_json(nullptr);
}

void render_json(std::ostream& out, const Summary& summary) {
  nlohmann::ordered_json doc;
  doc["title"] = summary.title;
  doc["sections"] = nlohmann::ordered_json::array();
  for (const SummarySection& section : summary.sections) {
    const double total = section.total_value();
    nlohmann::ordered_json s;
    s["title"] = section.title;
    s["unit"] = section.unit;
    s["total"] = number_or_null(total);
    s["lines"] = nlohmann::ordered_json::array();
    for (const auto& line : section.lines) {
      nlohmann::ordered_json l;
      l["label"] = line.label;
      l["value"] = number_or_null(line.value);
      if (section.show_share) l["share"] = number_or_null(share_of(line.value, total));
      s["lines"].push_back(std::move(l));
    }
    doc["sections"].push_back(std::move(s));
  }
  doc["notes"] = summary.notes;
  out << doc.dump(2) << '\n';
}

}  // namespace

double SummarySection::total_value() const {
  if (total) return *total;
  double sum = 0;
  for (const auto& line : lines) sum += line.value;
  return sum;
}

void render_summary(std::ostream& out, const Summary& summary, Format format, int bar_width) {
  switch (format) {
    case Format::text: render_text(out, summary, bar_width); return;
    case Format::markdown: render_markdown(out, summary); return;
    case Format::csv: render_csv(out, summary); return;
    case Format::json: render_json(out, summary); return;
  }
}

}  // namespace trainplan::report
