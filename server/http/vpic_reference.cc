#include "server/http/vpic_reference.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "server/http/connection.h"
#include "server/http/http_status.h"
#include "server/http/vpic_decode.h"

namespace server {
namespace http {
namespace {

using Json = nlohmann::ordered_json;

// The element of a list's items: vPIC's class, the list's name without its
// plural 's' (VehicleTypes holds VehicleType elements).
std::string ItemElement(absl::string_view list) {
  if (list.size() > 1 && list.back() == 's') {
    return std::string(list.substr(0, list.size() - 1));
  }
  return absl::StrCat(list, "Item");
}

std::vector<VpicField> FieldsOf(const Json& object);
std::vector<size_t> XmlOrder(const std::vector<VpicField>& fields,
                             absl::string_view order);

// The XML order of a list's items (vPIC's classes), where SHAPES.md has it.
absl::string_view ItemOrder(absl::string_view item_element) {
  if (item_element == "VehicleType") return "Name,IsPrimary,GVWRFrom,GVWRTo";
  return "";
}

// `fields` in `order` (XmlOrder's), physically: a list's items have no
// order of their own in the document.
void Reorder(std::vector<VpicField>* fields, absl::string_view order) {
  const std::vector<size_t> idx = XmlOrder(*fields, order);
  if (idx.empty()) return;
  std::vector<VpicField> out;
  out.reserve(fields->size());
  for (size_t i : idx) out.push_back(std::move((*fields)[i]));
  *fields = std::move(out);
}

VpicField FieldOf(absl::string_view name, const Json& v) {
  VpicField f;
  f.name = name;
  switch (v.type()) {
    case Json::value_t::string:
      f.text = v.get_ref<const std::string&>();
      break;
    case Json::value_t::boolean:
      f.type = VpicField::Type::kBool;
      f.text = v.get<bool>() ? "true" : "false";
      break;
    case Json::value_t::null:
      f.type = VpicField::Type::kNull;
      break;
    case Json::value_t::array:
    case Json::value_t::object:
      f.type = VpicField::Type::kList;
      f.item_element = ItemElement(name);
      if (v.is_object()) {
        f.items.push_back(FieldsOf(v));
      } else {
        for (const Json& item : v) {
          f.items.push_back(item.is_object() ? FieldsOf(item)
                                             : std::vector<VpicField>{
                                                   FieldOf("Value", item)});
        }
      }
      for (auto& item : f.items) Reorder(&item, ItemOrder(f.item_element));
      break;
    default:  // a number, as vPIC wrote it
      f.type = VpicField::Type::kNumber;
      f.text = v.dump();
  }
  return f;
}

std::vector<VpicField> FieldsOf(const Json& object) {
  std::vector<VpicField> fields;
  fields.reserve(object.size());
  for (auto it = object.begin(); it != object.end(); ++it) {
    fields.push_back(FieldOf(it.key(), it.value()));
  }
  return fields;
}

// Indices of `fields` in the endpoint's XML order: the fields it lists, in
// its order, then the others as the JSON has them.
std::vector<size_t> XmlOrder(const std::vector<VpicField>& fields,
                             absl::string_view order) {
  std::vector<size_t> out;
  if (order.empty()) return out;
  std::vector<bool> used(fields.size(), false);
  for (absl::string_view name : absl::StrSplit(order, ',')) {
    for (size_t i = 0; i < fields.size(); ++i) {
      if (!used[i] && fields[i].name == name) {
        out.push_back(i);
        used[i] = true;
        break;
      }
    }
  }
  for (size_t i = 0; i < fields.size(); ++i) {
    if (!used[i]) out.push_back(i);
  }
  return out;
}

}  // namespace

absl::StatusOr<VpicDocument> ReferenceDocument(absl::string_view json,
                                               const VpicEndpoint& endpoint) {
  auto parsed = std::make_shared<Json>(Json::parse(json, nullptr, false));
  const Json& j = *parsed;
  if (!j.is_object() || !j.contains("Results") || !j["Results"].is_array()) {
    return absl::InvalidArgumentError(
        "vPIC's answer is not a JSON object with a Results list");
  }
  VpicDocument doc;
  if (auto c = j.find("Count"); c != j.end() && c->is_number()) {
    doc.count = c->get<int64_t>();
  }
  if (auto m = j.find("Message"); m != j.end() && m->is_string()) {
    doc.message = m->get<std::string>();
  }
  auto sc = j.find("SearchCriteria");
  if (sc == j.end() || sc->is_null()) {
    doc.search_criteria_null = true;
  } else if (sc->is_string()) {
    doc.search_criteria = sc->get<std::string>();
  } else {
    doc.search_criteria = sc->dump();
  }
  doc.result_element = std::string(endpoint.result_element);
  for (const Json& r : j["Results"]) {
    doc.results.push_back(r.is_object()
                              ? FieldsOf(r)
                              : std::vector<VpicField>{FieldOf("Value", r)});
  }
  if (!doc.results.empty()) {
    doc.xml_order = XmlOrder(doc.results.front(), endpoint.xml_order);
  }
  doc.names = std::move(parsed);
  return doc;
}

absl::StatusOr<std::string> RenderReference(absl::string_view json,
                                            const VpicEndpoint& endpoint,
                                            VpicFormat format) {
  if (format == VpicFormat::kJson) return std::string(json);
  absl::StatusOr<VpicDocument> doc = ReferenceDocument(json, endpoint);
  if (!doc.ok()) return doc.status();
  return Render(*doc, format);
}

namespace internal {

void VpicReference::Start() {
  auto preference = SourcePreferenceHeader(c_->request());
  if (!preference.ok()) {
    return c_->Fail(400, domain::ErrorReason::kMalformedRequest,
                    preference.status().message(), false);
  }
  engine::DecodeRequest r;
  r.reference = c_->route().reference;
  r.source_preference = *preference;
  r.timeout = c_->timeout();
  r.tenant = c_->tenant();
  Submit({r});
}

void VpicReference::Answer(std::vector<Outcome>& outcomes) {
  const Outcome& o = outcomes[0];
  if (!o.done) return SendVpicFailure(c_, o.failure, o.failure.message);
  const Route& route = c_->route();
  const engine::DecodeResult& answer = *o.answer;
  Gateway::Impl* gateway = c_->gateway();
  std::shared_ptr<const Rendered> r =
      gateway->FindRendered(answer, route.reference, route.format);
  if (r == nullptr) {
    absl::StatusOr<std::string> body =
        RenderReference(*answer.document, *route.endpoint, route.format);
    if (!body.ok()) {  // (cannot happen: the engine checked the document)
      return SendVpicFailure(
          c_,
          domain::FailureOf(engine::FailureReason::kUpstreamUnavailable,
                            std::string(body.status().message())),
          body.status().message());
    }
    auto fresh = std::make_shared<Rendered>();
    fresh->encoded = answer.document;
    fresh->searched = route.reference;
    fresh->format = route.format;
    fresh->body = *std::move(body);
    fresh->etag = ETagOf(fresh->body);
    // The document is one object for every caller of its key: the live
    // answer's waiters, and the cache entry made from it, share it (the
    // snapshot keeps its own per key).
    gateway->KeepRendered(fresh);
    r = std::move(fresh);
  }
  auto res = c_->MakeResponse(200);
  res->set(bhttp::field::content_type, ContentTypeOf(route.format));
  Provenance provenance;
  provenance.Add(answer);
  provenance.Set(c_->options().reference_ttl, res.get());
  // (The body shared with the kept rendering: no copy per response.)
  c_->SendTagged(std::move(res),
                 std::shared_ptr<const std::string>(r, &r->body), r->etag);
}

}  // namespace internal
}  // namespace http
}  // namespace server
