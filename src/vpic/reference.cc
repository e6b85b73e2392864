#include "vpic/reference.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "simdjson.h"

namespace vpic {

std::string ReferenceUrl(absl::string_view base_url,
                         absl::string_view reference) {
  return absl::StrCat(absl::StripSuffix(base_url, "/"), "/", reference,
                      absl::StrContains(reference, '?') ? "&" : "?",
                      "format=json");
}

absl::Status CheckReferenceDocument(absl::string_view body) {
  auto not_vpic = [](absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("vPIC answer is not a vPIC JSON document: ", what));
  };
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(body.data(), body.size()).get(doc) != simdjson::SUCCESS) {
    return not_vpic("not JSON");
  }
  simdjson::dom::object top;
  if (doc.get_object().get(top) != simdjson::SUCCESS) {
    return not_vpic("not an object");
  }
  simdjson::dom::element count;
  if (top.at_key("Count").get(count) != simdjson::SUCCESS ||
      !count.is_number()) {
    return not_vpic("no number \"Count\"");
  }
  simdjson::dom::array results;
  if (top.at_key("Results").get_array().get(results) != simdjson::SUCCESS) {
    return not_vpic("no array \"Results\"");
  }
  for (simdjson::dom::element r : results) {
    if (!r.is_object()) return not_vpic("a result that is not an object");
  }
  return absl::OkStatus();
}

}  // namespace vpic
