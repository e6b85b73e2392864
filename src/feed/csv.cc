#include "feed/csv.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace feed {

namespace {

// Splits `text` into field values (appended to *fields unless null). Returns
// the 1-based column of a quoted field left open at the end, or 0.
size_t SplitFields(absl::string_view text, std::vector<std::string>* fields) {
  std::string field;
  size_t column = 0;
  size_t i = 0;
  while (true) {
    // At the start of a field.
    ++column;
    field.clear();
    if (i < text.size() && text[i] == '"') {
      ++i;
      bool closed = false;
      while (i < text.size()) {
        const char c = text[i++];
        if (c != '"') {
          field.push_back(c);
        } else if (i < text.size() && text[i] == '"') {
          field.push_back('"');  // "" inside quotes
          ++i;
        } else {
          closed = true;
          break;
        }
      }
      if (!closed) return column;
    }
    // Unquoted text, or text after a closing quote: kept as it is.
    while (i < text.size() && text[i] != ',') field.push_back(text[i++]);
    if (fields != nullptr) fields->push_back(field);
    if (i >= text.size()) return 0;
    ++i;  // the comma; a field follows even when the text ends here
  }
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ParseCsvRecord(
    absl::string_view text) {
  std::vector<std::string> fields;
  if (size_t open = SplitFields(text, &fields); open != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("quoted field in column ", open, " is not closed"));
  }
  return fields;
}

std::string FormatCsvRecord(const std::vector<std::string>& fields) {
  std::string out;
  for (size_t f = 0; f < fields.size(); ++f) {
    if (f > 0) out.push_back(',');
    const std::string& v = fields[f];
    if (v.find_first_of(",\"\r\n") == std::string::npos) {
      out.append(v);
      continue;
    }
    out.push_back('"');
    for (char c : v) {
      if (c == '"') out.push_back('"');
      out.push_back(c);
    }
    out.push_back('"');
  }
  return out;
}

bool EndsInsideQuotes(absl::string_view text) {
  return SplitFields(text, nullptr) != 0;
}

namespace {

// Reads one physical line (its LF dropped) into `line`, refusing to hold one
// longer than `max` bytes. False at the end of input with nothing read.
absl::StatusOr<bool> ReadLine(std::istream* in, std::string* line, size_t max,
                              int64_t line_number) {
  line->clear();
  std::streambuf* buf = in->rdbuf();
  bool any = false;
  for (;;) {
    const int c = buf->sbumpc();
    if (c == std::char_traits<char>::eof()) {
      in->setstate(std::ios::eofbit);
      return any;
    }
    any = true;
    if (c == '\n') return true;
    if (line->size() == max) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", line_number, " is longer than ", max,
                       " bytes (not a feed of VINs?)"));
    }
    line->push_back(static_cast<char>(c));
  }
}

}  // namespace

absl::StatusOr<absl::optional<std::string>> CsvRecordReader::NextRaw(
    bool quoted) {
  std::string record;
  std::string line;
  bool started = false;
  while (true) {
    auto got = ReadLine(in_, &line, kMaxRecordBytes, lines_read_ + 1);
    if (!got.ok()) return got.status();
    if (!*got) {
      if (in_->bad()) return absl::DataLossError("error reading the input");
      if (!started) return absl::nullopt;
      return absl::InvalidArgumentError(
          absl::StrCat("line ", record_line_,
                       ": quoted field not closed before the end of input"));
    }
    ++lines_read_;
    bytes_read_ += static_cast<int64_t>(line.size()) + (in_->eof() ? 0 : 1);
    if (!started) {
      started = true;
      record_line_ = lines_read_;
    } else {
      record.push_back('\n');  // the line break was inside quotes
    }
    record.append(line);
    if (!quoted || !EndsInsideQuotes(record)) {
      if (!record.empty() && record.back() == '\r') record.pop_back();
      return record;
    }
    if (record.size() > kMaxRecordBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "line ", record_line_, ": quoted field not closed within ",
          kMaxRecordBytes, " bytes"));
    }
  }
}

}  // namespace feed
