// vPIC's answers as data, and their three formats (DESIGN rule 18): every
// vPIC answer is an envelope (Count, Message, SearchCriteria) around a list
// of results, each an ordered list of named fields typed as vPIC's JSON
// types them (a string, a number, a boolean, null, a list of objects). One
// document renders as vPIC's JSON, its XML (the results' element named per
// endpoint, the fields in the XML's own order, nulls left out) or CSV (a header
// row of the fields' names in lower case, one row per result). Pure: no I/O.
// The shapes, and what of them is evidenced: tests/fixtures/vpic/SHAPES.md.
#ifndef VIN_SERVER_HTTP_VPIC_DOCUMENT_H_
#define VIN_SERVER_HTTP_VPIC_DOCUMENT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "util/escape.h"

namespace server {
namespace http {

enum class VpicFormat { kJson, kXml, kCsv };

// vPIC's `format` parameter (any case, surrounding spaces ignored): json,
// xml or csv; vPIC's default, XML, when `given` is false. Anything else is
// an error naming the formats served.
absl::StatusOr<VpicFormat> ParseVpicFormat(absl::string_view text, bool given);

// The Content-Type of an answer in `format`.
const char* ContentTypeOf(VpicFormat format);

// One field of a result.
struct VpicField {
  // kList: a list of objects (GetAllManufacturers' VehicleTypes).
  enum class Type { kString, kNumber, kNull, kBool, kList };
  absl::string_view name;  // static, or the document's to keep alive
  Type type = Type::kString;
  std::string text;  // a number's digits, "true"/"false"; nothing when null
  // kList: its objects, each an element named `item_element` in XML
  // (vPIC's class: VehicleTypes holds VehicleType elements).
  std::vector<std::vector<VpicField>> items;
  std::string item_element;

  static VpicField String(absl::string_view name, absl::string_view text) {
    return VpicField{name, Type::kString, std::string(text)};
  }
  static VpicField Number(absl::string_view name, int64_t n) {
    return VpicField{name, Type::kNumber, std::to_string(n)};
  }
  static VpicField Null(absl::string_view name) {
    return VpicField{name, Type::kNull, ""};
  }
};

struct VpicDocument {
  int64_t count = 0;
  std::string message;
  std::string search_criteria;  // written "" when empty, as vPIC does
  // GetAllMakes' and others': null in JSON, left out of the XML.
  bool search_criteria_null = false;
  // The XML element of each result (DecodeVinValues' "DecodedVINValues").
  std::string result_element;
  // The fields' order in XML, as indices into each result (vPIC's XML has
  // its classes' order, its JSON the names sorted); empty: the same.
  std::vector<size_t> xml_order;
  std::vector<std::vector<VpicField>> results;
  // What the fields' names point into, when they are not static (a parsed
  // answer's keys).
  std::shared_ptr<const void> names;
};

// The document in `format`.
std::string Render(const VpicDocument& doc, VpicFormat format);

// `text` as a JSON string (util/escape.h).
using util::AppendJsonString;

}  // namespace http
}  // namespace server

#endif  // VIN_SERVER_HTTP_VPIC_DOCUMENT_H_
