#include "vpic/parse.h"

#include <exception>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace vpic {
namespace {

using Json = nlohmann::json;

constexpr char kErrorCode[] = "ErrorCode";
constexpr char kErrorText[] = "ErrorText";

// At most this many leading bytes of a rejected body go into the message.
constexpr size_t kExcerptBytes = 40;

// The start of `body`, printable ASCII only, for error messages: enough to
// recognise an HTML maintenance page without echoing arbitrary bytes.
std::string Excerpt(absl::string_view body) {
  body = absl::StripLeadingAsciiWhitespace(body);
  std::string out;
  for (char c : body.substr(0, kExcerptBytes)) {
    const auto byte = static_cast<unsigned char>(c);
    out.push_back(byte >= 0x20 && byte < 0x7F ? c : '?');
  }
  if (body.size() > kExcerptBytes) out += "...";
  return out;
}

absl::Status NotVpic(absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("vPIC answer is not DecodeVinValues JSON: ", what));
}

// The text of a scalar vPIC value, trimmed; "" for null. Returns false for
// arrays, objects and binary values, which vPIC never sends.
bool ScalarText(const Json& value, std::string* out) {
  switch (value.type()) {
    case Json::value_t::null:
      out->clear();
      return true;
    case Json::value_t::string:
      *out = std::string(
          absl::StripAsciiWhitespace(value.get_ref<const std::string&>()));
      return true;
    case Json::value_t::boolean:
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      *out = value.dump();
      return true;
    default:
      return false;
  }
}

// Splits "N - text" into its code and text. Returns false when `item` does
// not start with a number followed by a dash.
bool SplitErrorTextItem(absl::string_view item, std::string* code,
                        std::string* text) {
  size_t digits = 0;
  while (digits < item.size() &&
         absl::ascii_isdigit(static_cast<unsigned char>(item[digits]))) {
    ++digits;
  }
  if (digits == 0) return false;
  absl::string_view rest =
      absl::StripLeadingAsciiWhitespace(item.substr(digits));
  if (rest.empty() || rest.front() != '-') return false;
  *code = std::string(item.substr(0, digits));
  *text = std::string(absl::StripAsciiWhitespace(rest.substr(1)));
  return true;
}

// ErrorText ("1 - text; 8 - text") as code -> text. A piece that does not
// start with "N -" belongs to the previous item (its text held a ';').
std::map<std::string, std::string> ErrorTexts(absl::string_view error_text) {
  std::map<std::string, std::string> texts;
  std::string* last = nullptr;
  for (absl::string_view piece : absl::StrSplit(error_text, ';')) {
    piece = absl::StripAsciiWhitespace(piece);
    if (piece.empty()) continue;
    std::string code, text;
    if (SplitErrorTextItem(piece, &code, &text)) {
      auto inserted = texts.emplace(code, std::move(text));
      last = inserted.second ? &inserted.first->second : nullptr;
    } else if (last != nullptr) {
      absl::StrAppend(last, "; ", piece);
    }
  }
  return texts;
}

// One note per ErrorCode item ("1,8"), with its ErrorText message.
std::vector<Note> MakeNotes(absl::string_view error_code,
                            absl::string_view error_text) {
  std::vector<Note> notes;
  if (error_code.empty()) return notes;
  const std::map<std::string, std::string> texts = ErrorTexts(error_text);
  for (absl::string_view code : absl::StrSplit(error_code, ',')) {
    code = absl::StripAsciiWhitespace(code);
    if (code.empty()) continue;
    Note note;
    note.code = std::string(code);
    auto it = texts.find(note.code);
    if (it != texts.end()) note.message = it->second;
    notes.push_back(std::move(note));
  }
  return notes;
}

absl::Status NotVpicBatch(absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("vPIC answer is not DecodeVINValuesBatch JSON: ", what));
}

// The `Results` array of a vPIC answer, or why the body is not vPIC JSON.
// `doc` keeps the parsed body alive.
absl::StatusOr<const Json*> Results(absl::string_view body, Json* doc,
                                    absl::Status (*not_vpic)(absl::string_view)) {
  if (absl::StripAsciiWhitespace(body).empty()) {
    return not_vpic("the body is empty");
  }
  *doc = Json::parse(body.data(), body.data() + body.size(), nullptr, false);
  if (doc->is_discarded()) {
    return not_vpic(absl::StrCat("the body is not valid JSON (it starts with \"",
                                 Excerpt(body), "\")"));
  }
  if (!doc->is_object()) {
    return not_vpic(absl::StrCat("the top level is a JSON ", doc->type_name(),
                                 ", not an object"));
  }
  auto results = doc->find("Results");
  if (results == doc->end()) return not_vpic("it has no \"Results\" field");
  if (!results->is_array()) {
    return not_vpic(absl::StrCat("\"Results\" is a JSON ",
                                 results->type_name(), ", not an array"));
  }
  if (results->empty()) return not_vpic("\"Results\" is empty");
  return &*results;
}

// One result object (the variables of one VIN) as a vehicle and notes.
absl::StatusOr<Decoded> ParseResult(const Json& result, absl::string_view which,
                                    absl::Status (*not_vpic)(absl::string_view)) {
  if (!result.is_object()) {
    return not_vpic(absl::StrCat(which, " is a JSON ", result.type_name(),
                                 ", not an object"));
  }
  Decoded decoded;
  std::string error_code, error_text;
  for (const auto& [name, value] : result.items()) {
    std::string text;
    if (!ScalarText(value, &text)) {
      return not_vpic(absl::StrCat("variable \"", name, "\" is a JSON ",
                                   value.type_name(), ", not a string or null"));
    }
    if (name == kErrorCode) {
      error_code = std::move(text);
    } else if (name == kErrorText) {
      error_text = std::move(text);
    } else if (!text.empty()) {
      decoded.vehicle.attributes[name] = std::move(text);
    }
  }
  FillTypedFields(&decoded.vehicle);
  decoded.notes = MakeNotes(error_code, error_text);
  return decoded;
}

absl::StatusOr<Decoded> Parse(absl::string_view body) {
  Json doc;
  auto results = Results(body, &doc, NotVpic);
  if (!results.ok()) return results.status();
  return ParseResult((*results)->front(), "the first result", NotVpic);
}

absl::StatusOr<std::vector<BatchResult>> ParseBatch(absl::string_view body) {
  Json doc;
  auto results = Results(body, &doc, NotVpicBatch);
  if (!results.ok()) return results.status();
  std::vector<BatchResult> out;
  out.reserve((*results)->size());
  size_t index = 0;
  for (const Json& result : **results) {
    const std::string which = absl::StrCat("result ", index++);
    BatchResult r;
    if (result.is_object()) {
      auto vin = result.find("VIN");
      if (vin != result.end()) ScalarText(*vin, &r.vin);
      absl::AsciiStrToUpper(&r.vin);
    }
    // A result without a VIN cannot be matched to a request: it is dropped,
    // and the VIN it was for counts as missing from the answer.
    if (r.vin.empty()) continue;
    r.decoded = ParseResult(result, which, NotVpicBatch);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

// The non-throwing parse and the type checks above should leave nothing to
// throw; this is the last guard for untrusted upstream bytes.
template <typename Fn>
auto Guarded(Fn parse) -> decltype(parse()) {
  try {
    return parse();
  } catch (const nlohmann::json::exception& e) {
    return NotVpic(e.what());
  } catch (const std::exception& e) {
    return absl::InternalError(
        absl::StrCat("parsing the vPIC answer failed: ", e.what()));
  }
}

absl::StatusOr<Decoded> ParseDecodeVinValues(absl::string_view body) {
  return Guarded([&] { return Parse(body); });
}

absl::StatusOr<std::vector<BatchResult>> ParseDecodeVinValuesBatch(
    absl::string_view body) {
  return Guarded([&] { return ParseBatch(body); });
}

}  // namespace vpic
