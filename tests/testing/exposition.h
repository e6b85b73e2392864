// A strict reader of Prometheus' text exposition format (0.0.4), for tests
// that must show every scrape is one Prometheus accepts: the whole text
// valid UTF-8, every line a comment (# HELP / # TYPE) or a sample
// `name{label="value",...} value`, names of [a-zA-Z_:][a-zA-Z0-9_:]*,
// label values with no escapes but \\, \" and \n, values numbers.
#ifndef VIN_TESTS_TESTING_EXPOSITION_H_
#define VIN_TESTS_TESTING_EXPOSITION_H_

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "util/utf8.h"

namespace testing_util {

namespace exposition_internal {

inline bool NameChar(char c, bool first) {
  return absl::ascii_isalpha(static_cast<unsigned char>(c)) || c == '_' ||
         c == ':' ||
         (!first && absl::ascii_isdigit(static_cast<unsigned char>(c)));
}

// Reads a metric or label name at `*i`; false when there is none.
inline bool Name(absl::string_view line, size_t* i, bool label) {
  const size_t start = *i;
  while (*i < line.size() && NameChar(line[*i], *i == start) &&
         !(label && line[*i] == ':')) {
    ++*i;
  }
  return *i > start;
}

inline bool Value(absl::string_view text) {
  double d;
  return text == "+Inf" || text == "-Inf" || text == "NaN" ||
         absl::SimpleAtod(text, &d);
}

}  // namespace exposition_internal

// "" when `text` is a valid exposition, else the first problem and its line.
inline std::string ExpositionProblem(const std::string& text) {
  using namespace exposition_internal;  // NOLINT
  if (!util::IsValidUtf8(text)) return "the text is not valid UTF-8";
  int n = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++n;
    auto bad = [&](absl::string_view why) {
      return absl::StrCat("line ", n, ": ", why, ": ", line.substr(0, 200));
    };
    if (line.empty()) continue;
    if (line[0] == '#') {
      std::vector<absl::string_view> parts =
          absl::StrSplit(line, absl::MaxSplits(' ', 3));
      if (parts.size() >= 3 && (parts[1] == "HELP" || parts[1] == "TYPE")) {
        size_t i = 0;
        if (!Name(parts[2], &i, false) || i != parts[2].size()) {
          return bad("a comment names no metric");
        }
      }
      continue;
    }
    size_t i = 0;
    if (!Name(line, &i, false)) return bad("no metric name");
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        if (!Name(line, &i, true)) return bad("no label name");
        if (line.substr(i, 2) != "=\"") return bad("a label without =\"");
        i += 2;
        for (;; ++i) {
          if (i >= line.size()) return bad("an unterminated label value");
          if (line[i] == '"') break;
          if (line[i] == '\\') {
            ++i;
            if (i >= line.size() ||
                (line[i] != '\\' && line[i] != '"' && line[i] != 'n')) {
              return bad("an escape other than \\\\, \\\" or \\n");
            }
          } else if (line[i] == '\n') {
            return bad("a line break in a label value");
          }
        }
        ++i;  // the closing quote
        if (i < line.size() && line[i] == ',') ++i;
      }
      if (i >= line.size()) return bad("an unterminated label set");
      ++i;  // '}'
    }
    if (i >= line.size() || line[i] != ' ')
      return bad("no space before the value");
    std::vector<absl::string_view> rest =
        absl::StrSplit(line.substr(i + 1), ' ', absl::SkipEmpty());
    if (rest.empty() || rest.size() > 2 || !Value(rest[0]))
      return bad("not a number");
  }
  return "";
}

}  // namespace testing_util

#endif  // VIN_TESTS_TESTING_EXPOSITION_H_
