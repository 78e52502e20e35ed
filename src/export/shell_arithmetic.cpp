#include "export/shell_arithmetic.h"

#include <climits>
#include <optional>

namespace trainplan::exporting {
namespace {

class Arithmetic {
 public:
  Arithmetic(const std::string& text, const std::map<std::string, std::string>& vars) : t_(text), vars_(vars) {}
  std::optional<long long> value() {
    const auto v = sum();
    skip();
    if (!v || i_ != t_.size()) return std::nullopt;
    return v;
  }

 private:
  void skip() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t')) ++i_;
  }
  std::optional<long long> sum() {
    auto v = product();
    while (v) {
      skip();
      if (i_ >= t_.size() || (t_[i_] != '+' && t_[i_] != '-')) break;
      const char op = t_[i_++];
      const auto r = product();
      long long out = 0;
      if (!r || (op == '+' ? __builtin_add_overflow(*v, *r, &out) : __builtin_sub_overflow(*v, *r, &out)))
        return std::nullopt;
      v = out;
    }
    return v;
  }
  std::optional<long long> product() {
    auto v = factor();
    while (v) {
      skip();
      if (i_ >= t_.size() || (t_[i_] != '*' && t_[i_] != '/' && t_[i_] != '%')) break;
      const char op = t_[i_++];
      const auto r = factor();
      // Whatever bash would wrap or trap (overflow, division by zero) is left as written.
      if (!r || ((op == '/' || op == '%') && (*r == 0 || (*r == -1 && *v == LLONG_MIN)))) return std::nullopt;
      long long out = 0;
      if (op == '*' && __builtin_mul_overflow(*v, *r, &out)) return std::nullopt;
      v = op == '*' ? out : op == '/' ? *v / *r : *v % *r;
    }
    return v;
  }
  std::optional<long long> factor() {
    skip();
    if (i_ >= t_.size() || ++depth_ > 64) return std::nullopt;
    std::optional<long long> v;
    if (t_[i_] == '-') {
      ++i_;
      if (const auto f = factor(); f && *f != LLONG_MIN) v = -*f;
    } else if (t_[i_] == '(') {
      ++i_;
      v = sum();
      skip();
      if (i_ >= t_.size() || t_[i_] != ')') v.reset();
      else ++i_;
    } else if (shell_name_char(t_[i_], true)) {
      const std::size_t start = i_;
      while (i_ < t_.size() && shell_name_char(t_[i_], false)) ++i_;
      const auto it = vars_.find(t_.substr(start, i_ - start));
      if (it != vars_.end()) v = shell_integer(it->second);
    } else {
      const std::size_t start = i_;
      while (i_ < t_.size() && t_[i_] >= '0' && t_[i_] <= '9') ++i_;
      if (i_ > start && i_ - start < 18) v = std::stoll(t_.substr(start, i_ - start));
    }
    --depth_;
    return v;
  }
  const std::string& t_;
  const std::map<std::string, std::string>& vars_;
  std::size_t i_ = 0;
  int depth_ = 0;
};

}  // namespace

bool shell_name_char(char c, bool first) {
  return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (!first && c >= '0' && c <= '9');
}

std::optional<long long> shell_integer(const std::string& s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  std::size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size()) return std::nullopt;
  for (std::size_t k = i; k < s.size(); ++k)
    if (s[k] < '0' || s[k] > '9') return std::nullopt;
  return std::stoll(s);
}

std::string evaluate_arithmetic(const std::string& word, const std::map<std::string, std::string>& vars) {
  std::string out;
  for (std::size_t i = 0; i < word.size();) {
    if (word.compare(i, 3, "$((") != 0) {
      out += word[i++];
      continue;
    }
    const std::size_t close = word.find("))", i + 3);
    if (close == std::string::npos) {
      out += word.substr(i);
      break;
    }
    const std::string inner = word.substr(i + 3, close - i - 3);
    if (const auto v = Arithmetic(inner, vars).value()) out += std::to_string(*v);
    else out += word.substr(i, close + 2 - i);
    i = close + 2;
  }
  return out;
}


}  // namespace trainplan::exporting
