#include "feed/feed.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace feed {
namespace {

constexpr absl::string_view kByteOrderMark = "\xEF\xBB\xBF";

bool IsBlank(absl::string_view line) {
  return absl::StripAsciiWhitespace(line).empty();
}

// Whether `s` is well-formed UTF-8 (protobuf refuses other string values).
bool IsUtf8(absl::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t extra;
    uint32_t cp;
    uint32_t min;
    if ((c & 0xE0) == 0xC0) {
      extra = 1;
      cp = c & 0x1F;
      min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2;
      cp = c & 0x0F;
      min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3;
      cp = c & 0x07;
      min = 0x10000;
    } else {
      return false;
    }
    if (i + extra >= s.size()) return false;
    for (size_t k = 1; k <= extra; ++k) {
      const unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += extra + 1;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<FeedReader>> FeedReader::Open(std::istream* in) {
  std::unique_ptr<FeedReader> reader(new FeedReader(in));
  auto first = reader->NextNonBlank();
  if (!first.ok()) return first.status();
  if (first->has_value()) {
    auto header = ParseCsvRecord(**first);
    if (header.ok()) {
      for (size_t i = 0; i < header->size(); ++i) {
        if (absl::EqualsIgnoreCase(absl::StripAsciiWhitespace((*header)[i]),
                                   "vin")) {
          reader->kind_ = InputKind::kCsv;
          reader->quoted_ = true;
          reader->vin_column_ = i;
          reader->columns_ = *std::move(header);
          return reader;
        }
      }
    }
    reader->pending_ = std::move(**first);
  }
  reader->kind_ = InputKind::kPlainList;
  reader->columns_ = {"vin"};
  reader->vin_column_ = 0;
  return reader;
}

absl::StatusOr<absl::optional<std::string>> FeedReader::NextNonBlank() {
  while (true) {
    auto raw = lines_.NextRaw(quoted_);
    if (!raw.ok()) return raw.status();
    if (!raw->has_value()) return absl::nullopt;
    std::string text = **std::move(raw);
    if (first_line_) {
      first_line_ = false;
      if (absl::StartsWith(text, kByteOrderMark)) {
        text.erase(0, kByteOrderMark.size());
      }
    }
    if (!IsBlank(text)) return text;
  }
}

absl::StatusOr<absl::optional<FeedRecord>> FeedReader::Next() {
  std::string text;
  if (pending_.has_value()) {
    text = *std::move(pending_);
    pending_.reset();
  } else {
    auto raw = NextNonBlank();
    if (!raw.ok()) return raw.status();
    if (!raw->has_value()) return absl::nullopt;
    text = **std::move(raw);
  }

  FeedRecord record;
  record.index = next_index_++;
  if (text.size() > kMaxRowBytes) {
    // Sent, it would be over the server's message limit and end the stream
    // for every row; failed here, it fails alone.
    record.problem =
        absl::StrCat("line ", lines_.line_number(), " is ", text.size(),
                     " bytes, over the ", kMaxRowBytes,
                     " a row may have; the row was "
                     "not sent");
  }
  if (kind_ == InputKind::kPlainList) {
    record.vin = std::string(absl::StripAsciiWhitespace(text));
    record.fields = {record.vin};
    if (record.problem.empty() && !IsUtf8(record.vin)) {
      record.problem = absl::StrCat("line ", lines_.line_number(),
                                    ": the VIN is not valid UTF-8");
    }
    return record;
  }

  auto fields = ParseCsvRecord(text);
  if (!fields.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "line ", lines_.line_number(), ": ", fields.status().message()));
  }
  record.fields = *std::move(fields);
  // Extra fields that are all empty (trailing commas) carry nothing: dropped.
  while (record.fields.size() > columns_.size() &&
         record.fields.back().empty()) {
    record.fields.pop_back();
  }
  if (record.problem.empty() && record.fields.size() > columns_.size()) {
    record.problem = absl::StrCat(
        "line ", lines_.line_number(), " has ", record.fields.size(),
        " fields, the header has ", columns_.size(), "; the row was not sent");
  }
  record.fields.resize(columns_.size());  // pads a short row
  record.vin = record.fields[vin_column_];
  if (record.problem.empty() && !IsUtf8(record.vin)) {
    record.problem = absl::StrCat("line ", lines_.line_number(),
                                  ": the VIN field is not valid UTF-8");
  }
  return record;
}

}  // namespace feed
