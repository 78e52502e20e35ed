#include "report/table_render.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "report/escape.h"
#include "report/prose_wrap.h"

namespace trainplan::report {
namespace {

bool right_aligned(const Column& column, const std::vector<std::vector<Cell>>& rows, std::size_t index) {
  if (column.align != Align::automatic) return column.align == Align::right;
  for (const auto& row : rows) {
    if (std::holds_alternative<std::string>(row[index]) || std::holds_alternative<bool>(row[index])) return false;
  }
  return true;
}

std::string human_cell(const Cell& cell, const Column& column) {
  if (const auto* text = std::get_if<std::string>(&cell)) return *text;
  if (const auto* on = std::get_if<bool>(&cell)) return *on ? "on" : "off";
  if (const auto* number = std::get_if<double>(&cell)) {
    return format_human(*number, column.style, column.decimals, column.unit);
  }
  return "-";
}

// A header wider than its column's cells wraps onto a second line at the space
// or hyphen
// that makes the wider line narrowest: tables of long headers and short
// numbers stay narrow enough to read.
std::pair<std::string, std::string> wrap_header(const std::string& header, std::size_t cells_width) {
  if (display_width(header) <= cells_width) return {header, ""};
  std::pair<std::string, std::string> best{header, ""};
  std::size_t best_width = display_width(header);
  for (std::size_t at = header.find_first_of(" -"); at != std::string::npos; at = header.find_first_of(" -", at + 1)) {
    // At a space the space goes; at a hyphen the hyphen stays on the first line.
    const bool hyphen = header[at] == '-';
    const std::string first = header.substr(0, hyphen ? at + 1 : at), second = header.substr(at + 1);
    const std::size_t width = std::max(display_width(first), display_width(second));
    if (width < best_width) best = {first, second}, best_width = width;
  }
  return best;
}

std::string pad(const std::string& text, std::size_t width, bool right) {
  const std::size_t used = display_width(text);
  const std::string fill(width > used ? width - used : 0, ' ');
  return right ? fill + text : text + fill;
}

// A text cell broken after each ", " or " / " into lines of at most `width`;
// with at_spaces, a piece still longer breaks at its spaces and after the
// slashes of a path too. A word longer than `width` stays whole.
std::vector<std::string> wrap_cell(const std::string& text, std::size_t width, bool at_spaces) {
  std::vector<std::string> pieces;
  std::size_t start = 0;
  for (std::size_t at = 0; at + 1 < text.size(); ++at)
    if (text[at + 1] == ' ' && (text[at] == ',' || text[at] == '/' || (at_spaces && text[at] != ' '))) {
      pieces.push_back(text.substr(start, at + 2 - start));
      start = at + 2;
    } else if (at_spaces && text[at] == '/' && text[at + 1] != ' ') {  // a path breaks after a slash
      pieces.push_back(text.substr(start, at + 1 - start));
      start = at + 1;
    }
  pieces.push_back(text.substr(start));
  std::vector<std::string> lines{""};
  for (const std::string& piece : pieces) {
    const std::string joined = lines.back() + piece;
    std::string trimmed = joined;
    trimmed.erase(trimmed.find_last_not_of(' ') + 1);
    if (!lines.back().empty() && display_width(trimmed) > width) lines.push_back(piece);
    else lines.back() = joined;
  }
  for (std::string& line : lines) line.erase(line.find_last_not_of(' ') + 1);
  return lines;
}

std::size_t widest(const std::vector<std::string>& lines) {
  std::size_t w = 0;
  for (const std::string& line : lines) w = std::max(w, display_width(line));
  return w;
}

std::size_t table_width(const std::vector<std::size_t>& widths, std::size_t gap) {
  std::size_t sum = 0;
  for (std::size_t c = 0; c < widths.size(); ++c) sum += widths[c] + (c ? gap : 0);
  return sum;
}

// Where a table is wider than kTextWidth even with two-line headers, its
// left-aligned text columns break their cells: after ", " and " / " while that
// is enough (a plan keeps "ZeRO 1" whole), then at any space. Each such column
// is cut to one common width (or its narrowest, if wider), the largest that
// fits: the longest cells give way first and shorter ones stay whole. A long
// plan or description costs a row a few lines rather than the reader a scroll.
void wrap_wide_cells(const std::vector<std::vector<std::string>>& texts,
                     std::vector<std::vector<std::vector<std::string>>>& cells, std::vector<std::size_t>& widths,
                     const std::vector<bool>& right, const std::vector<std::size_t>& header_widths) {
  for (const bool at_spaces : {false, true}) {
    if (table_width(widths, 2) <= kTextWidth) return;
    std::vector<std::size_t> floor(widths.size());  // the narrowest each column can wrap to
    for (std::size_t c = 0; c < widths.size(); ++c) {
      floor[c] = right[c] ? widths[c] : header_widths[c];
      for (const auto& row : texts)
        if (!right[c]) floor[c] = std::max(floor[c], widest(wrap_cell(row[c], 1, at_spaces)));
      floor[c] = std::min(floor[c], widths[c]);
    }
    auto width_at = [&](std::size_t cut) {
      std::vector<std::size_t> cut_widths(widths.size());
      for (std::size_t c = 0; c < widths.size(); ++c) cut_widths[c] = std::min(widths[c], std::max(floor[c], cut));
      return table_width(cut_widths, 2);
    };
    std::size_t cut = 0;  // the largest common cut that fits, else every column at its floor
    for (std::size_t hi = *std::max_element(widths.begin(), widths.end()); cut < hi;) {
      const std::size_t mid = (cut + hi + 1) / 2;
      if (width_at(mid) <= kTextWidth) cut = mid;
      else hi = mid - 1;
    }
    for (std::size_t c = 0; c < widths.size(); ++c) {
      const std::size_t target = std::max(floor[c], cut);
      if (right[c] || widths[c] <= target) continue;
      std::size_t wrapped_width = 0;
      for (std::size_t r = 0; r < texts.size(); ++r) {
        cells[r][c] = wrap_cell(texts[r][c], target, at_spaces);
        wrapped_width = std::max(wrapped_width, widest(cells[r][c]));
      }
      widths[c] = std::max(wrapped_width, header_widths[c]);
    }
  }
}

void render_text(std::ostream& out, const Table& table) {
  const std::size_t n = table.columns.size();
  std::vector<std::size_t> widths(n);
  std::vector<bool> right(n);
  std::vector<std::vector<std::string>> texts;  // row, column
  // Row, column, line: only where a cell wraps (empty: the cell is its text).
  std::vector<std::vector<std::vector<std::string>>> cells;
  for (std::size_t c = 0; c < n; ++c) right[c] = right_aligned(table.columns[c], table.rows, c);
  texts.reserve(table.rows.size());
  for (const auto& row : table.rows) {
    auto& text = texts.emplace_back();
    text.reserve(n);
    for (std::size_t c = 0; c < n; ++c) {
      text.push_back(human_cell(row[c], table.columns[c]));
      widths[c] = std::max(widths[c], display_width(text.back()));
    }
  }
  // Headers wrap only where the table would be wider than a terminal's kTextWidth.
  std::size_t one_line_width = 0;
  for (std::size_t c = 0; c < n; ++c)
    one_line_width += std::max(widths[c], display_width(table.columns[c].human_header())) + (c ? 2 : 0);
  std::vector<std::string> header(n), header_second(n);
  std::vector<std::size_t> header_widths(n);
  bool two_line_header = false;
  for (std::size_t c = 0; c < n; ++c) {
    if (one_line_width > kTextWidth)
      std::tie(header[c], header_second[c]) = wrap_header(table.columns[c].human_header(), std::max<std::size_t>(widths[c], 4));
    else
      header[c] = table.columns[c].human_header();
    header_widths[c] = std::max(display_width(header[c]), display_width(header_second[c]));
    widths[c] = std::max(widths[c], header_widths[c]);
    two_line_header = two_line_header || !header_second[c].empty();
  }
  if (one_line_width > kTextWidth) {
    cells.assign(texts.size(), std::vector<std::vector<std::string>>(n));
    wrap_wide_cells(texts, cells, widths, right, header_widths);
  }
  // The last resort before a line runs past the terminal: one space between columns.
  const std::string gap = table_width(widths, 2) > kTextWidth ? " " : "  ";
  auto emit = [&](const std::vector<std::string>& line) {
    std::string text;
    for (std::size_t c = 0; c < n; ++c) text += (c ? gap : "") + pad(line[c], widths[c], right[c]);
    text.erase(text.find_last_not_of(' ') + 1);
    out << text << '\n';
  };
  if (!table.title.empty()) out << wrap_prose(table.title);
  std::vector<std::string> rule;
  for (std::size_t c = 0; c < n; ++c) rule.emplace_back(widths[c], '-');
  emit(header);
  if (two_line_header) emit(header_second);
  emit(rule);
  for (std::size_t r = 0; r < texts.size(); ++r) {
    std::size_t height = 1;
    if (!cells.empty())
      for (const auto& cell : cells[r]) height = std::max(height, cell.size());
    if (height == 1) {
      emit(texts[r]);
      continue;
    }
    for (std::size_t k = 0; k < height; ++k) {
      std::vector<std::string> line(n);
      for (std::size_t c = 0; c < n; ++c) {
        const auto& wrapped = cells[r][c];
        line[c] = wrapped.empty() ? (k == 0 ? texts[r][c] : std::string()) : k < wrapped.size() ? wrapped[k] : "";
      }
      emit(line);
    }
  }
  for (const auto& note : table.notes) out << wrap_prose(note);
}

void render_markdown(std::ostream& out, const Table& table) {
  if (!table.title.empty()) out << "### " << markdown_cell(table.title) << "\n\n";
  std::string header = "|", align = "|";
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    header += ' ';
    header += markdown_cell(table.columns[c].human_header());
    header += " |";
    align += right_aligned(table.columns[c], table.rows, c) ? " ---: |" : " :--- |";
  }
  out << header << '\n' << align << '\n';
  for (const auto& row : table.rows) {
    out << '|';
    for (std::size_t c = 0; c < row.size(); ++c) out << ' ' << markdown_cell(human_cell(row[c], table.columns[c])) << " |";
    out << '\n';
  }
  if (!table.notes.empty()) out << '\n';
  for (const auto& note : table.notes) out << markdown_cell(note) << "  \n";
}

void render_csv(std::ostream& out, const Table& table) {
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    out << (c ? "," : "") << csv_field(table.columns[c].machine_key());
  }
  out << '\n';
  for (const auto& row : table.rows) {
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (c) out << ',';
      if (const auto* text = std::get_if<std::string>(&row[c])) out << csv_field(*text);
      if (const auto* on = std::get_if<bool>(&row[c])) out << (*on ? "true" : "false");
      if (const auto* number = std::get_if<double>(&row[c])) out << (std::isnan(*number) ? "" : format_raw(*number));
    }
    out << '\n';
  }
}

nlohmann::ordered_json json_value(const Cell& cell, const Column& column) {
  if (const auto* text = std::get_if<std::string>(&cell)) return *text;
  if (const auto* on = std::get_if<bool>(&cell)) return *on;
  if (const auto* number = std::get_if<double>(&cell)) {
    if (!std::isfinite(*number)) return nullptr;
    if (column.style == NumberStyle::integer && std::fabs(*number) < 9.0e15 && *number == std::round(*number)) {
      return static_cast<long long>(*number);
    }
    // Bytes are whole: a modelled figure's fraction of a byte says nothing.
    if (column.unit == "B" && std::fabs(*number) < 9.0e15) return std::llround(*number);
    return *number;
  }
  return nullptr;
}

void render_json(std::ostream& out, const Table& table) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& row : table.rows) {
    nlohmann::ordered_json object = nlohmann::ordered_json::object();
    for (std::size_t c = 0; c < row.size(); ++c) object[table.columns[c].machine_key()] = json_value(row[c], table.columns[c]);
    rows.push_back(std::move(object));
  }
  out << rows.dump(2) << '\n';
}

}  // namespace

void render_table(std::ostream& out, const Table& table, Format format) {
  switch (format) {
    case Format::text: render_text(out, table); return;
    case Format::markdown: render_markdown(out, table); return;
    case Format::csv: render_csv(out, table); return;
    case Format::json: render_json(out, table); return;
  }
}

void render_tables(std::ostream& out, const std::vector<Table>& tables, const std::string& format,
                   const JsonDocument& document) {
  const Format f = parse_format(format);
  if (f == Format::json) {
    render_json_document(out, document, tables);
    return;
  }
  for (std::size_t i = 0; i < tables.size(); ++i) {
    if (i) out << "\n";
    render_table(out, tables[i], f);
  }
}


}  // namespace trainplan::report
