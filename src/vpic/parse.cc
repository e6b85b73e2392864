#include "vpic/parse.h"

#include <exception>
#include <limits>
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

// A vPIC answer read in one pass, without building a document: the types
// of the top level and of its "Results", and the scalar variables of the
// first `max_results` results, in order. Never stops early, so that an
// answer that is not valid JSON is reported as such whatever its shape.
// Keeps no stack: nesting is counted, so any depth is safe.
class AnswerSax {
 public:
  struct Result {
    const char* type = "";  // the JSON type of the result
    std::vector<std::pair<std::string, std::string>> variables;
    std::string bad_name;          // the first variable that is no scalar,
    const char* bad_type = nullptr;  // and its type
  };

  explicit AnswerSax(size_t max_results) : max_results_(max_results) {}

  const char* top_type = nullptr;
  bool has_results = false;
  const char* results_type = nullptr;
  size_t results_count = 0;
  std::vector<Result> results;

  // nlohmann's SAX interface.
  bool null() { return Scalar("null", std::string()); }
  bool boolean(bool v) { return Scalar("boolean", v ? "true" : "false"); }
  bool number_integer(Json::number_integer_t v) {
    return Scalar("number", absl::StrCat(v));
  }
  bool number_unsigned(Json::number_unsigned_t v) {
    return Scalar("number", absl::StrCat(v));
  }
  bool number_float(Json::number_float_t, const std::string& text) {
    return Scalar("number", text);
  }
  bool string(std::string& v) {
    absl::StripAsciiWhitespace(&v);
    return Scalar("string", std::move(v));
  }
  bool binary(Json::binary_t&) { return Scalar("binary", std::string()); }
  bool start_object(size_t) { return Open("object"); }
  bool start_array(size_t) { return Open("array"); }
  bool end_object() { return Close(); }
  bool end_array() { return Close(); }
  bool key(std::string& k) {
    if (depth_ == 1) {
      next_is_results_ = k == "Results";
    } else if (depth_ == 3 && current_ != nullptr) {
      key_ = std::move(k);
    }
    return true;
  }
  bool parse_error(size_t, const std::string&, const nlohmann::detail::exception&) {
    return false;
  }

 private:
  // Where a value that starts now stands.
  enum class Slot { kTop, kResults, kResult, kVariable, kOther };
  Slot SlotOfValue() const {
    if (depth_ == 0) return Slot::kTop;
    if (depth_ == 1 && next_is_results_) return Slot::kResults;
    if (depth_ == 2 && in_results_) return Slot::kResult;
    if (depth_ == 3 && current_ != nullptr) return Slot::kVariable;
    return Slot::kOther;
  }
  // The top value and "Results" are noted whatever their kind; returns
  // whether `slot` was one of them.
  bool NoteTopOrResults(Slot slot, const char* type) {
    if (slot == Slot::kTop) {
      top_type = type;
      return true;
    }
    if (slot == Slot::kResults) {
      has_results = true;
      results_type = type;
      next_is_results_ = false;
      return true;
    }
    return false;
  }
  bool Scalar(const char* type, std::string text) {
    const Slot slot = SlotOfValue();
    if (NoteTopOrResults(slot, type)) return true;
    switch (slot) {
      case Slot::kResult:
        if (results_count++ < max_results_) results.push_back({type});
        break;
      case Slot::kVariable:
        current_->variables.emplace_back(std::move(key_), std::move(text));
        break;
      default:
        break;
    }
    return true;
  }
  bool Open(const char* type) {
    const Slot slot = SlotOfValue();
    if (NoteTopOrResults(slot, type)) {
      if (slot == Slot::kResults) in_results_ = type[0] == 'a';
    } else if (slot == Slot::kResult) {
      if (results_count++ < max_results_) {
        results.push_back({type});
        if (type[0] == 'o') current_ = &results.back();
      }
    } else if (slot == Slot::kVariable && current_->bad_type == nullptr) {
      current_->bad_name = key_;
      current_->bad_type = type;
    }
    ++depth_;
    return true;
  }
  bool Close() {
    --depth_;
    if (depth_ == 2) current_ = nullptr;        // a result ended
    if (depth_ == 1) in_results_ = false;       // "Results" ended
    return true;
  }

  const size_t max_results_;
  size_t depth_ = 0;
  bool next_is_results_ = false;
  bool in_results_ = false;
  Result* current_ = nullptr;  // the result object being read
  std::string key_;
};

// Reads `body`; an error when it is not vPIC JSON with a non-empty Results.
absl::Status ReadAnswer(absl::string_view body, AnswerSax* sax,
                        absl::Status (*not_vpic)(absl::string_view)) {
  if (absl::StripAsciiWhitespace(body).empty()) {
    return not_vpic("the body is empty");
  }
  if (!Json::sax_parse(body.data(), body.data() + body.size(), sax)) {
    return not_vpic(absl::StrCat("the body is not valid JSON (it starts with \"",
                                 Excerpt(body), "\")"));
  }
  if (std::string(sax->top_type) != "object") {
    return not_vpic(absl::StrCat("the top level is a JSON ", sax->top_type,
                                 ", not an object"));
  }
  if (!sax->has_results) return not_vpic("it has no \"Results\" field");
  if (std::string(sax->results_type) != "array") {
    return not_vpic(absl::StrCat("\"Results\" is a JSON ", sax->results_type,
                                 ", not an array"));
  }
  if (sax->results_count == 0) return not_vpic("\"Results\" is empty");
  return absl::OkStatus();
}

// One result (the variables of one VIN) as a vehicle and notes.
absl::StatusOr<Decoded> ToDecoded(AnswerSax::Result& result,
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
    } else if (!text.empty()) {
      decoded.vehicle.attributes[std::move(name)] = std::move(text);
    }
  }
  FillTypedFields(&decoded.vehicle);
  decoded.notes = MakeNotes(error_code, error_text);
  return decoded;
}

absl::StatusOr<Decoded> Parse(absl::string_view body) {
  AnswerSax sax(1);
  if (absl::Status s = ReadAnswer(body, &sax, NotVpic); !s.ok()) return s;
  return ToDecoded(sax.results.front(), "the first result", NotVpic);
}

absl::StatusOr<std::vector<BatchResult>> ParseBatch(absl::string_view body) {
  AnswerSax sax(std::numeric_limits<size_t>::max());
  if (absl::Status s = ReadAnswer(body, &sax, NotVpicBatch); !s.ok()) return s;
  std::vector<BatchResult> out;
  out.reserve(sax.results.size());
  size_t index = 0;
  for (AnswerSax::Result& result : sax.results) {
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
