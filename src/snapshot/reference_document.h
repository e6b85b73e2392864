// vPIC's JSON answer as the snapshot writes it (reference_data.cc):
// Count, Message, SearchCriteria and Results, in that order, each result an
// object written field by field. Internal to src/snapshot/.
#ifndef VIN_SNAPSHOT_REFERENCE_DOCUMENT_H_
#define VIN_SNAPSHOT_REFERENCE_DOCUMENT_H_

#include <functional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "util/escape.h"

namespace snapshot {
namespace reference {

class Document {
 public:
  explicit Document(absl::string_view message) : message_(message) {}
  // One result object: `fields` appends "name":value pairs (Field, NullOr).
  void Add(const std::function<void(std::string*)>& fields) {
    body_.append(count_++ > 0 ? ",{" : "{");
    fields(&body_);
    body_.push_back('}');
  }
  // The whole answer; SearchCriteria is null when `null_criteria`.
  std::string Finish(absl::string_view criteria, bool null_criteria) const {
    std::string out = absl::StrCat("{\"Count\":", count_, ",\"Message\":");
    util::AppendJsonString(message_, &out);
    out.append(",\"SearchCriteria\":");
    if (null_criteria) {
      out.append("null");
    } else {
      util::AppendJsonString(criteria, &out);
    }
    absl::StrAppend(&out, ",\"Results\":[", body_, "]}");
    return out;
  }

 private:
  std::string message_;
  std::string body_;
  size_t count_ = 0;
};

// "name":value, then ',' unless `last`.
inline void Field(std::string* out, absl::string_view name,
                  absl::string_view value, bool last = false) {
  util::AppendJsonString(name, out);
  out->push_back(':');
  util::AppendJsonString(value, out);
  if (!last) out->push_back(',');
}
inline void Field(std::string* out, absl::string_view name, int value,
                  bool last = false) {
  util::AppendJsonString(name, out);
  absl::StrAppend(out, ":", value, last ? "" : ",");
}
// A string field that is null when empty (vPIC's nullable text).
inline void NullOr(std::string* out, absl::string_view name,
                   absl::string_view value, bool last = false) {
  if (!value.empty()) return Field(out, name, value, last);
  util::AppendJsonString(name, out);
  absl::StrAppend(out, ":null", last ? "" : ",");
}

// "name":json, `json` written as given (a list, an object).
inline void RawField(std::string* out, absl::string_view name,
                     absl::string_view json, bool last = false) {
  util::AppendJsonString(name, out);
  absl::StrAppend(out, ":", json, last ? "" : ",");
}

inline constexpr char kResponse[] = "Response returned successfully";
inline constexpr char kResults[] = "Results returned successfully";

}  // namespace reference
}  // namespace snapshot

#endif  // VIN_SNAPSHOT_REFERENCE_DOCUMENT_H_
