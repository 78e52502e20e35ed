// $(( expr )) in a launch script's words, as bash evaluates it: integers with
// + - * / % and parentheses, a bare name standing for its variable. Anything
// else (a name unset or not a number, $(command), an overflow or a division by
// zero, which bash would wrap or trap) stays as written. Also the two word rules
// it shares with the script reader: a variable name's characters, a decimal integer.
#pragma once
#include <map>
#include <optional>
#include <string>

namespace trainplan::exporting {

// A character of a shell variable name (a letter or _, then digits too).
bool shell_name_char(char c, bool first);

// A whole word that is a decimal integer of at most 17 digits (optionally negative), as
// the shell's arithmetic and [ -eq ] tests read one; nothing otherwise.
std::optional<long long> shell_integer(const std::string& word);

// `word` with each $(( ... )) that is plain integer arithmetic replaced by its value.
std::string evaluate_arithmetic(const std::string& word, const std::map<std::string, std::string>& vars);

}  // namespace trainplan::exporting
