#include "vpic/parse.h"

#include <exception>
#include <limits>
#include <charconv>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "simdjson.h"

namespace vpic {
namespace {

constexpr absl::string_view kErrorCode = "ErrorCode";
constexpr absl::string_view kErrorText = "ErrorText";

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

// A vPIC answer as far as the parse needs it: the JSON types of the top
// level and of its "Results", and the scalar variables of the first
// `max_results` results, in order. simdjson validates the whole body (JSON
// syntax, UTF-8, depth) before anything is read from it.
struct Answer {
  struct Result {
    const char* type = "";  // the JSON type of the result
    std::vector<std::pair<std::string, std::string>> variables;
    // Variables whose text vPIC padded with whitespace, as vPIC wrote them.
    std::vector<std::pair<std::string, std::string>> untrimmed;
    std::string bad_name;            // the first variable that is no scalar,
    const char* bad_type = nullptr;  // and its type
  };
  const char* top_type = nullptr;
  bool has_results = false;
  const char* results_type = nullptr;
  size_t results_count = 0;
  std::vector<Result> results;
};

using simdjson::dom::element;
using simdjson::dom::element_type;

const char* TypeName(element_type type) {
  switch (type) {
    case element_type::ARRAY: return "array";
    case element_type::OBJECT: return "object";
    case element_type::STRING: return "string";
    case element_type::BOOL: return "boolean";
    case element_type::NULL_VALUE: return "null";
    default: return "number";
  }
}

// A scalar variable's text: a string without its surrounding whitespace,
// null as "", a boolean or a number as JSON writes it (a fraction in its
// shortest form).
std::string ScalarText(element value) {
  switch (value.type()) {
    case element_type::STRING: {
      const std::string_view v = value.get_string().value_unsafe();
      return std::string(
          absl::StripAsciiWhitespace(absl::string_view(v.data(), v.size())));
    }
    case element_type::BOOL:
      return value.get_bool().value_unsafe() ? "true" : "false";
    case element_type::INT64:
      return absl::StrCat(value.get_int64().value_unsafe());
    case element_type::UINT64:
      return absl::StrCat(value.get_uint64().value_unsafe());
    case element_type::DOUBLE: {
      char buf[32];
      const auto r = std::to_chars(buf, buf + sizeof(buf),
                                   value.get_double().value_unsafe());
      return std::string(buf, r.ptr);
    }
    default:
      return std::string();
  }
}

void ReadResult(element value, Answer::Result* result) {
  result->type = TypeName(value.type());
  if (value.type() != element_type::OBJECT) return;
  const simdjson::dom::object variables = value.get_object().value_unsafe();
  for (simdjson::dom::key_value_pair variable : variables) {
    const element_type type = variable.value.type();
    if (type == element_type::OBJECT || type == element_type::ARRAY) {
      if (result->bad_type == nullptr) {
        result->bad_name = std::string(variable.key);
        result->bad_type = TypeName(type);
      }
      continue;
    }
    std::string text = ScalarText(variable.value);
    // An empty variable is "not provided": nothing reads it, so it is not
    // kept (most of a vPIC answer's variables are empty).
    if (text.empty()) continue;
    if (type == element_type::STRING) {
      const std::string_view raw = variable.value.get_string().value_unsafe();
      if (raw.size() != text.size()) {
        result->untrimmed.emplace_back(std::string(variable.key),
                                       std::string(raw));
      }
    }
    result->variables.emplace_back(std::string(variable.key), std::move(text));
  }
}

// Reads `body`; an error when it is not vPIC JSON with a non-empty Results.
absl::Status ReadAnswer(absl::string_view body, size_t max_results,
                        Answer* answer,
                        absl::Status (*not_vpic)(absl::string_view)) {
  if (absl::StripAsciiWhitespace(body).empty()) {
    return not_vpic("the body is empty");
  }
  // One parser per thread keeps its buffers from one answer to the next.
  thread_local simdjson::dom::parser parser;
  element doc;
  if (parser.parse(body.data(), body.size()).get(doc) != simdjson::SUCCESS) {
    return not_vpic(absl::StrCat("the body is not valid JSON (it starts with \"",
                                 Excerpt(body), "\")"));
  }
  answer->top_type = TypeName(doc.type());
  if (doc.type() == element_type::OBJECT) {
    const simdjson::dom::object top = doc.get_object().value_unsafe();
    for (simdjson::dom::key_value_pair field : top) {
      if (field.key != "Results") continue;
      answer->has_results = true;
      answer->results_type = TypeName(field.value.type());
      if (field.value.type() != element_type::ARRAY) continue;
      const simdjson::dom::array results = field.value.get_array().value_unsafe();
      for (element result : results) {
        if (answer->results_count++ >= max_results) continue;
        ReadResult(result, &answer->results.emplace_back());
      }
    }
  }
  if (std::string(answer->top_type) != "object") {
    return not_vpic(absl::StrCat("the top level is a JSON ", answer->top_type,
                                 ", not an object"));
  }
  if (!answer->has_results) return not_vpic("it has no \"Results\" field");
  if (std::string(answer->results_type) != "array") {
    return not_vpic(absl::StrCat("\"Results\" is a JSON ",
                                 answer->results_type, ", not an array"));
  }
  if (answer->results_count == 0) return not_vpic("\"Results\" is empty");
  return absl::OkStatus();
}

// One result (the variables of one VIN) as a vehicle and notes.
absl::StatusOr<Decoded> ToDecoded(Answer::Result& result,
                                  absl::string_view which,
                                  absl::Status (*not_vpic)(absl::string_view)) {
  if (std::string(result.type) != "object") {
    return not_vpic(absl::StrCat(which, " is a JSON ", result.type,
                                 ", not an object"));
  }
  if (result.bad_type != nullptr) {
    return not_vpic(absl::StrCat("variable \"", result.bad_name,
                                 "\" is a JSON ", result.bad_type,
                                 ", not a string or null"));
  }
  Decoded decoded;
  std::string error_code, error_text;
  for (auto& [name, text] : result.variables) {
    if (name == kErrorCode) {
      error_code = std::move(text);
    } else if (name == kErrorText) {
      error_text = std::move(text);
    } else {
      decoded.vehicle.attributes[std::move(name)] = std::move(text);
    }
  }
  for (auto& [name, raw] : result.untrimmed) {
    if (name != kErrorCode && name != kErrorText) {
      decoded.vehicle.untrimmed[std::move(name)] = std::move(raw);
    }
  }
  FillTypedFields(&decoded.vehicle);
  decoded.notes = MakeNotes(error_code, error_text);
  return decoded;
}

absl::StatusOr<Decoded> Parse(absl::string_view body) {
  Answer answer;
  if (absl::Status s = ReadAnswer(body, 1, &answer, NotVpic); !s.ok()) {
    return s;
  }
  return ToDecoded(answer.results.front(), "the first result", NotVpic);
}

absl::StatusOr<std::vector<BatchResult>> ParseBatch(absl::string_view body) {
  Answer answer;
  if (absl::Status s = ReadAnswer(body, std::numeric_limits<size_t>::max(),
                                  &answer, NotVpicBatch);
      !s.ok()) {
    return s;
  }
  std::vector<BatchResult> out;
  out.reserve(answer.results.size());
  size_t index = 0;
  for (Answer::Result& result : answer.results) {
    const std::string which = absl::StrCat("result ", index++);
    BatchResult r;
    for (const auto& [name, text] : result.variables) {
      if (name == "VIN") r.vin = absl::AsciiStrToUpper(text);
    }
    // A result without a VIN cannot be matched to a request: it is dropped,
    // and the VIN it was for counts as missing from the answer.
    if (r.vin.empty()) continue;
    r.decoded = ToDecoded(result, which, NotVpicBatch);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

// The error-code parse and the type checks above should leave nothing to
// throw but a failed allocation; this is the last guard for untrusted
// upstream bytes.
template <typename Fn>
auto Guarded(Fn parse) -> decltype(parse()) {
  try {
    return parse();
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
