#include "server/http/vpic_document.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace server {
namespace http {
namespace {

// vPIC's XML (tests/fixtures/vpic/SHAPES.md, section 1): no declaration,
// no whitespace between elements, the .NET serializer's envelope; an empty
// string is `<X />`, a null is left out.
constexpr absl::string_view kXmlOpen =
    "<Response xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" "
    "xmlns:xsd=\"http://www.w3.org/2001/XMLSchema\">";
constexpr absl::string_view kXmlClose = "</Response>";

// As vPIC escapes text: &, < and >; quotes and apostrophes as they are.
void AppendXmlText(absl::string_view text, std::string* out) {
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    switch (c) {
      case '&':
        out->append("&amp;");
        break;
      case '<':
        out->append("&lt;");
        break;
      case '>':
        out->append("&gt;");
        break;
      default:
        // XML 1.0 has no character for the C0 controls but tab, LF, CR: a
        // space stands in (vPIC's data holds none).
        out->push_back(u < 0x20 && c != '\t' && c != '\n' && c != '\r' ? ' '
                                                                       : c);
    }
  }
}

void AppendXmlElement(absl::string_view name, absl::string_view text,
                      std::string* out) {
  if (text.empty()) {
    absl::StrAppend(out, "<", name, " />");
    return;
  }
  absl::StrAppend(out, "<", name, ">");
  AppendXmlText(text, out);
  absl::StrAppend(out, "</", name, ">");
}

void AppendJsonList(const std::vector<std::vector<VpicField>>& items,
                    std::string* out);

void AppendJsonFields(const std::vector<VpicField>& fields, std::string* out) {
  out->push_back('{');
  bool first = true;
  for (const VpicField& f : fields) {
    if (!first) out->push_back(',');
    first = false;
    AppendJsonString(f.name, out);
    out->push_back(':');
    switch (f.type) {
      case VpicField::Type::kString:
        AppendJsonString(f.text, out);
        break;
      case VpicField::Type::kNumber:
      case VpicField::Type::kBool:
        out->append(f.text);
        break;
      case VpicField::Type::kNull:
        out->append("null");
        break;
      case VpicField::Type::kList:
        AppendJsonList(f.items, out);
        break;
    }
  }
  out->push_back('}');
}

void AppendJsonList(const std::vector<std::vector<VpicField>>& items,
                    std::string* out) {
  out->push_back('[');
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out->push_back(',');
    AppendJsonFields(items[i], out);
  }
  out->push_back(']');
}

std::string RenderJson(const VpicDocument& doc) {
  std::string out;
  out.reserve(512 + doc.results.size() * 4096);
  absl::StrAppend(&out, "{\"Count\":", doc.count, ",\"Message\":");
  AppendJsonString(doc.message, &out);
  out.append(",\"SearchCriteria\":");
  if (doc.search_criteria_null) {
    out.append("null");
  } else {
    AppendJsonString(doc.search_criteria, &out);
  }
  out.append(",\"Results\":[");
  for (size_t i = 0; i < doc.results.size(); ++i) {
    if (i > 0) out.push_back(',');
    AppendJsonFields(doc.results[i], &out);
  }
  out.append("]}");
  return out;
}

// One object's fields in XML, in `order` (indices) when given, then any
// field the order does not list; nulls left out, as vPIC.
void AppendXmlFields(const std::vector<VpicField>& fields,
                     const std::vector<size_t>& order, std::string* out) {
  const bool ordered = order.size() == fields.size();
  for (size_t k = 0; k < fields.size(); ++k) {
    const VpicField& f = fields[ordered ? order[k] : k];
    switch (f.type) {
      case VpicField::Type::kNull:
        break;
      case VpicField::Type::kList:
        if (f.items.empty()) {
          absl::StrAppend(out, "<", f.name, " />");
          break;
        }
        absl::StrAppend(out, "<", f.name, ">");
        for (const auto& item : f.items) {
          absl::StrAppend(out, "<", f.item_element, ">");
          AppendXmlFields(item, {}, out);
          absl::StrAppend(out, "</", f.item_element, ">");
        }
        absl::StrAppend(out, "</", f.name, ">");
        break;
      default:
        AppendXmlElement(f.name, f.text, out);
    }
  }
}

std::string RenderXml(const VpicDocument& doc) {
  std::string out;
  out.reserve(512 + doc.results.size() * 6144);
  out.append(kXmlOpen.data(), kXmlOpen.size());
  AppendXmlElement("Count", absl::StrCat(doc.count), &out);
  AppendXmlElement("Message", doc.message, &out);
  if (!doc.search_criteria_null) {
    AppendXmlElement("SearchCriteria", doc.search_criteria, &out);
  }
  if (doc.results.empty()) {
    out.append("<Results />");
  } else {
    out.append("<Results>");
    for (const auto& result : doc.results) {
      absl::StrAppend(&out, "<", doc.result_element, ">");
      AppendXmlFields(result, doc.xml_order, &out);
      absl::StrAppend(&out, "</", doc.result_element, ">");
    }
    out.append("</Results>");
  }
  out.append(kXmlClose.data(), kXmlClose.size());
  return out;
}

// RFC 4180: a value with a comma, a quote or a line break is quoted, its
// quotes doubled.
void AppendCsvValue(absl::string_view text, std::string* out) {
  if (text.find_first_of(",\"\r\n") == absl::string_view::npos) {
    out->append(text.data(), text.size());
    return;
  }
  out->push_back('"');
  for (char c : text) {
    if (c == '"') out->push_back('"');
    out->push_back(c);
  }
  out->push_back('"');
}

// A header row of the first result's field names in lower case, as vPIC
// writes them (every result of an answer has the same fields), then one
// row per result.
std::string RenderCsv(const VpicDocument& doc) {
  std::string out;
  if (doc.results.empty()) return out;
  bool first = true;
  for (const VpicField& f : doc.results[0]) {
    if (!first) out.push_back(',');
    first = false;
    AppendCsvValue(absl::AsciiStrToLower(f.name), &out);
  }
  out.append("\r\n");
  for (const auto& result : doc.results) {
    first = true;
    for (const VpicField& f : result) {
      if (!first) out.push_back(',');
      first = false;
      if (f.type == VpicField::Type::kList) {
        // A list of objects in one cell: its JSON (this service's choice;
        // vPIC documents CSV for its flat decodes only).
        std::string json;
        AppendJsonList(f.items, &json);
        AppendCsvValue(json, &out);
      } else {
        AppendCsvValue(f.text, &out);
      }
    }
    out.append("\r\n");
  }
  return out;
}

}  // namespace

absl::StatusOr<VpicFormat> ParseVpicFormat(absl::string_view text, bool given) {
  if (!given) return VpicFormat::kXml;
  const absl::string_view f = absl::StripAsciiWhitespace(text);
  if (absl::EqualsIgnoreCase(f, "json")) return VpicFormat::kJson;
  if (absl::EqualsIgnoreCase(f, "xml")) return VpicFormat::kXml;
  if (absl::EqualsIgnoreCase(f, "csv")) return VpicFormat::kCsv;
  return absl::InvalidArgumentError(absl::StrCat(
      "format \"", text.size() > 64 ? text.substr(0, 64) : text,
      "\" is not one of vPIC's: json, xml or csv (xml when none is given)"));
}

const char* ContentTypeOf(VpicFormat format) {
  switch (format) {
    case VpicFormat::kJson:
      return "application/json; charset=utf-8";
    case VpicFormat::kXml:
      return "application/xml; charset=utf-8";
    case VpicFormat::kCsv:
      return "text/csv; charset=utf-8";
  }
  return "application/octet-stream";
}

std::string Render(const VpicDocument& doc, VpicFormat format) {
  switch (format) {
    case VpicFormat::kJson:
      return RenderJson(doc);
    case VpicFormat::kXml:
      return RenderXml(doc);
    case VpicFormat::kCsv:
      return RenderCsv(doc);
  }
  return {};
}

}  // namespace http
}  // namespace server
