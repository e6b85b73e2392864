// /openapi.json (docs/openapi.json, written by hand: no packaged generator
// serves) held to the proto: every google.api.http route of
// VinDecoderService is described with its request and response messages,
// every message's schema has exactly the message's JSON fields with their
// types, every enum its values; every described path is one the gateway
// routes; every vPIC endpoint the gateway serves is described, the
// reference ones with the arguments of their table (vpic_endpoints.cc), and
// every vPIC path with its formats, source preference and provenance
// headers. And the gateway serves the repository's copy, and the page.
#include <google/protobuf/descriptor.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "google/api/annotations.pb.h"
#include "gtest/gtest.h"
#include "server/http/routes.h"
#include "server/http/vpic_document.h"
#include "server/http/vpic_endpoints.h"
#include "testing/http_client.h"
#include "testing/server_fixture.h"
#include "vin/v1/admin.pb.h"
#include "vin/v1/jobs.pb.h"
#include "vin/v1/vin.pb.h"

namespace server {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::EnumDescriptor;
using google::protobuf::FieldDescriptor;
using Json = nlohmann::json;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Json OpenApi() { return Json::parse(ReadFile(VIN_OPENAPI_PATH)); }

std::string Ref(const std::string& name) {
  return absl::StrCat("#/components/schemas/", name);
}

class SchemaCheck {
 public:
  explicit SchemaCheck(const Json& doc) : schemas_(doc["components"]["schemas"]) {}

  void Message(const Descriptor* m) {
    if (!seen_.insert(m->full_name()).second) return;
    SCOPED_TRACE(m->full_name());
    ASSERT_TRUE(schemas_.contains(m->name())) << "no schema " << m->name();
    const Json& props = schemas_[m->name()]["properties"];
    std::set<std::string> want, have;
    for (int i = 0; i < m->field_count(); ++i) want.insert(m->field(i)->json_name());
    for (const auto& [k, v] : props.items()) have.insert(k);
    EXPECT_EQ(have, want) << "the properties of " << m->name();
    for (int i = 0; i < m->field_count(); ++i) {
      const FieldDescriptor* f = m->field(i);
      if (props.contains(f->json_name())) Field(f, props[f->json_name()]);
    }
  }

  void Enum(const EnumDescriptor* e) {
    SCOPED_TRACE(e->full_name());
    ASSERT_TRUE(schemas_.contains(e->name())) << "no schema " << e->name();
    std::vector<std::string> want;
    for (int i = 0; i < e->value_count(); ++i) want.push_back(e->value(i)->name());
    EXPECT_EQ(schemas_[e->name()]["enum"].get<std::vector<std::string>>(), want);
    EXPECT_EQ(schemas_[e->name()]["type"], "string");
  }

  std::set<std::string> seen() const { return seen_; }

 private:
  void Field(const FieldDescriptor* f, const Json& p) {
    SCOPED_TRACE(f->full_name());
    if (f->is_map()) {
      EXPECT_EQ(p["type"], "object");
      EXPECT_EQ(p["additionalProperties"]["type"], "string");
      return;
    }
    if (f->is_repeated()) {
      EXPECT_EQ(p["type"], "array");
      return Single(f, p["items"]);
    }
    Single(f, p);
  }

  void Single(const FieldDescriptor* f, const Json& p) {
    switch (f->type()) {
      case FieldDescriptor::TYPE_STRING:
        EXPECT_EQ(p["type"], "string");
        return;
      case FieldDescriptor::TYPE_INT32:
        EXPECT_EQ(p["type"], "integer");
        EXPECT_EQ(p["format"], "int32");
        return;
      case FieldDescriptor::TYPE_INT64:  // a string in protobuf's JSON
        EXPECT_EQ(p["type"], "string");
        EXPECT_EQ(p["format"], "int64");
        return;
      case FieldDescriptor::TYPE_BOOL:
        EXPECT_EQ(p["type"], "boolean");
        return;
      case FieldDescriptor::TYPE_DOUBLE:
        EXPECT_EQ(p["type"], "number");
        return;
      case FieldDescriptor::TYPE_ENUM:
        EXPECT_EQ(p["$ref"], Ref(f->enum_type()->name()));
        Enum(f->enum_type());
        return;
      case FieldDescriptor::TYPE_MESSAGE: {
        const std::string& full = f->message_type()->full_name();
        if (full == "google.protobuf.Timestamp") {
          EXPECT_EQ(p["format"], "date-time");
        } else if (full == "google.protobuf.Duration") {
          EXPECT_EQ(p["format"], "duration");
        } else {
          EXPECT_EQ(p["$ref"], Ref(f->message_type()->name()));
          Message(f->message_type());
        }
        return;
      }
      default:
        ADD_FAILURE() << "a field type the check does not know: " << f->type_name();
    }
  }

  const Json& schemas_;
  std::set<std::string> seen_;
};

TEST(HttpOpenApi, EveryRouteOfTheProtoIsDescribedWithItsMessages) {
  const Json doc = OpenApi();
  EXPECT_EQ(doc["openapi"], "3.0.3");
  const google::protobuf::ServiceDescriptor* service =
      vin::v1::DecodeRequest::descriptor()->file()->FindServiceByName(
          "VinDecoderService");
  ASSERT_NE(service, nullptr);
  SchemaCheck check(doc);
  for (int i = 0; i < service->method_count(); ++i) {
    const google::protobuf::MethodDescriptor* m = service->method(i);
    SCOPED_TRACE(m->full_name());
    ASSERT_TRUE(m->options().HasExtension(google::api::http))
        << "no google.api.http route";
    const google::api::HttpRule& rule = m->options().GetExtension(google::api::http);
    ASSERT_EQ(rule.pattern_case(), google::api::HttpRule::kPost);
    EXPECT_EQ(rule.body(), "*");
    ASSERT_TRUE(doc["paths"].contains(rule.post())) << rule.post();
    const Json& op = doc["paths"][rule.post()]["post"];
    EXPECT_EQ(op["operationId"], m->full_name());
    // A stream's lines are NDJSON; a unary call's body is JSON.
    const std::string type = m->client_streaming() ? "application/x-ndjson"
                                                   : "application/json";
    EXPECT_EQ(op["requestBody"]["content"][type]["schema"]["$ref"],
              Ref(m->input_type()->name()));
    EXPECT_EQ(op["responses"]["200"]["content"][type]["schema"]["$ref"],
              Ref(m->output_type()->name()));
    EXPECT_EQ(op["responses"]["default"]["content"]["application/json"]["schema"]["$ref"],
              Ref("Status"));
    check.Message(m->input_type());
    check.Message(m->output_type());
  }
  // The jobs' routes (rule 20): each annotated method at its path and
  // verb, answering its resource (WatchJob is gRPC only).
  const google::protobuf::ServiceDescriptor* jobs =
      vin::v1::Job::descriptor()->file()->FindServiceByName("VinJobService");
  ASSERT_NE(jobs, nullptr);
  for (int i = 0; i < jobs->method_count(); ++i) {
    const google::protobuf::MethodDescriptor* m = jobs->method(i);
    SCOPED_TRACE(m->full_name());
    if (!m->options().HasExtension(google::api::http)) {
      EXPECT_EQ(m->name(), "WatchJob");
      continue;
    }
    const google::api::HttpRule& rule =
        m->options().GetExtension(google::api::http);
    const std::string verb = rule.has_get()       ? "get"
                             : rule.has_post()    ? "post"
                             : rule.has_delete_() ? "delete"
                                                  : "?";
    const std::string path = rule.has_get()    ? rule.get()
                             : rule.has_post() ? rule.post()
                                               : rule.delete_();
    ASSERT_TRUE(doc["paths"].contains(path)) << path;
    ASSERT_TRUE(doc["paths"][path].contains(verb)) << path << " " << verb;
    const Json& op = doc["paths"][path][verb];
    EXPECT_EQ(op["operationId"], m->full_name());
    EXPECT_EQ(op["responses"]["default"]["content"]["application/json"]
                ["schema"]["$ref"],
              Ref("Status"));
    if (m->name() == "ListJobResults") {  // NDJSON of its results
      const auto* result = vin::v1::JobResult::descriptor();
      EXPECT_EQ(op["responses"]["200"]["content"]["application/x-ndjson"]
                  ["schema"]["$ref"],
                Ref(result->name()));
      check.Message(result);
      continue;
    }
    EXPECT_EQ(
        op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"],
        Ref(m->output_type()->name()));
    check.Message(m->output_type());
    if (m->name() == "CreateJob") {  // NDJSON of its items
      EXPECT_EQ(op["requestBody"]["content"]["application/x-ndjson"]["schema"]
                  ["$ref"],
                Ref("DecodeBatchRequest"));
    }
  }
  // The operators' route (rule 21): GetParity at its path, answering the
  // report.
  const google::protobuf::ServiceDescriptor* admin =
      vin::v1::ParityReport::descriptor()->file()->FindServiceByName(
          "VinAdminService");
  ASSERT_NE(admin, nullptr);
  for (int i = 0; i < admin->method_count(); ++i) {
    const google::protobuf::MethodDescriptor* m = admin->method(i);
    SCOPED_TRACE(m->full_name());
    ASSERT_TRUE(m->options().HasExtension(google::api::http));
    const std::string path = m->options().GetExtension(google::api::http).get();
    ASSERT_TRUE(doc["paths"].contains(path)) << path;
    const Json& op = doc["paths"][path]["get"];
    EXPECT_EQ(op["operationId"], m->full_name());
    EXPECT_EQ(op["responses"]["default"]["content"]["application/json"]
                ["schema"]["$ref"],
              Ref("Status"));
    EXPECT_EQ(
        op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"],
        Ref(m->output_type()->name()));
    check.Message(m->output_type());
  }
  // Nothing described that the proto does not have (beside vPIC's shapes
  // and the errors).
  const std::set<std::string> others = {"Status", "VpicAnswer", "VpicVariables",
                                        "VpicReferenceAnswer", "GatewayError"};
  std::set<std::string> described_messages;
  for (const auto& [name, schema] : doc["components"]["schemas"].items()) {
    if (others.count(name) || schema.contains("enum")) continue;
    described_messages.insert(absl::StrCat("vin.v1.", name));
  }
  EXPECT_EQ(described_messages, check.seen());
}

constexpr absl::string_view kVpic = "/api/vehicles/";

// `p`, or what its $ref points at.
const Json& Resolved(const Json& doc, const Json& p) {
  if (!p.contains("$ref")) return p;
  return doc.at(Json::json_pointer(p["$ref"].get<std::string>().substr(1)));
}

// The parameter `name` of `op` in `in` (path, query, header); null when none.
const Json* ParamOf(const Json& doc, const Json& op, absl::string_view in,
                    absl::string_view name) {
  if (!op.contains("parameters")) return nullptr;
  for (const Json& raw : op["parameters"]) {
    const Json& p = Resolved(doc, raw);
    if (p.value("in", "") == in && p.value("name", "") == name) return &p;
  }
  return nullptr;
}

// The described paths of vPIC's endpoint `name` (as spelled): the path
// /api/vehicles/<name> and those below it.
std::vector<std::string> PathsOf(const Json& doc, absl::string_view name) {
  const std::string base = absl::StrCat(kVpic, name);
  std::vector<std::string> out;
  for (const auto& [path, item] : doc["paths"].items()) {
    if (path == base || absl::StartsWith(path, base + "/")) out.push_back(path);
  }
  return out;
}

// `text` percent-encoded, as a path segment or a query value.
std::string Encoded(absl::string_view text) {
  std::string out;
  for (char c : text) {
    if (absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' ||
        c == '_' || c == '.' || c == '~') {
      out.push_back(c);
    } else {
      absl::StrAppendFormat(&out, "%%%02X", static_cast<unsigned char>(c));
    }
  }
  return out;
}

// A value of parameter `p` for a request: its example, or its first choice.
std::string ExampleOf(const Json& p) {
  const Json& schema = p.at("schema");
  if (!p.contains("example") && !schema.contains("enum")) {
    ADD_FAILURE() << "no example for " << p.value("name", "");
    return "";
  }
  const Json& v = p.contains("example") ? p["example"] : schema["enum"][0];
  return Encoded(v.is_string() ? v.get<std::string>() : v.dump());
}

// A request of `op` at `path`: each {name} its parameter's example, and
// the required query parameters with theirs.
std::string TargetOf(const Json& doc, const std::string& path, const Json& op) {
  std::string target;
  size_t from = 0;
  for (size_t open; (open = path.find('{', from)) != std::string::npos;) {
    const size_t close = path.find('}', open);
    const std::string name = path.substr(open + 1, close - open - 1);
    const Json* p = ParamOf(doc, op, "path", name);
    if (p == nullptr) ADD_FAILURE() << path << ": no path parameter " << name;
    absl::StrAppend(&target, path.substr(from, open - from),
                    p == nullptr ? name : ExampleOf(*p));
    from = close + 1;
  }
  target += path.substr(from);
  const char* sep = "?";
  if (!op.contains("parameters")) return target;
  for (const Json& raw : op["parameters"]) {
    const Json& p = Resolved(doc, raw);
    if (p.value("in", "") != "query" || !p.value("required", false)) continue;
    absl::StrAppend(&target, sep, p.value("name", ""), "=", ExampleOf(p));
    sep = "&";
  }
  return target;
}

TEST(HttpOpenApi, EveryDescribedPathIsOneTheGatewayRoutes) {
  const Json doc = OpenApi();
  for (const auto& [path, item] : doc["paths"].items()) {
    for (const auto& [verb, op] : item.items()) {
      const std::string method = absl::AsciiStrToUpper(verb);
      const std::string target = TargetOf(doc, path, op);
      const http::Route r = http::RouteOf(method, target);
      EXPECT_NE(r.kind, http::Route::Kind::kError)
          << method << " " << target << ": " << r.message;
    }
  }
}

// The type an argument of `kind` is described with.
std::string TypeOf(http::ArgKind kind) {
  return kind == http::ArgKind::kId || kind == http::ArgKind::kYear ||
                 kind == http::ArgKind::kPage
             ? "integer"
             : "string";
}

// `p` is described as the table's `spec` says (`required` as it applies).
void CheckParam(const Json* p, const http::ParamSpec& spec, bool required) {
  SCOPED_TRACE(std::string(spec.name));
  ASSERT_NE(p, nullptr) << "not described";
  EXPECT_EQ(p->value("required", false), required);
  EXPECT_EQ(p->at("schema").value("type", ""), TypeOf(spec.kind));
  if (spec.kind != http::ArgKind::kChoice) return;
  const std::vector<std::string> choices = absl::StrSplit(spec.choices, '|');
  EXPECT_EQ(p->at("schema").value("enum", std::vector<std::string>()), choices);
}

// `tail` (what follows the endpoint's name) is one path argument /{x},
// described as `kind`.
void CheckPathArg(const Json& doc, const Json& op, const std::string& tail,
                  http::ArgKind kind) {
  ASSERT_TRUE(absl::StartsWith(tail, "/{") && absl::EndsWith(tail, "}") &&
              tail.find('/', 1) == std::string::npos)
      << "not one path argument: " << tail;
  const Json* p = ParamOf(doc, op, "path", tail.substr(2, tail.size() - 3));
  ASSERT_NE(p, nullptr) << "no path parameter in " << tail;
  EXPECT_EQ(p->at("schema").value("type", ""), TypeOf(kind));
}

// Whether `path` has the segments <spec.name>/{x}; {x} described as its kind.
bool HasSegment(const Json& doc, const Json& op, const std::string& path,
                const http::ParamSpec& spec) {
  const std::string segment = absl::StrCat("/", spec.name, "/{");
  const size_t at = path.find(segment);
  if (at == std::string::npos) return false;
  const size_t from = at + segment.size();
  const std::string name = path.substr(from, path.find('}', from) - from);
  const Json* p = ParamOf(doc, op, "path", name);
  EXPECT_NE(p, nullptr) << spec.name << ": no path parameter " << name;
  if (p != nullptr) {
    EXPECT_EQ(p->at("schema").value("type", ""), TypeOf(spec.kind));
  }
  return true;
}

// The described GET paths of `e` take its arguments as its table entry says:
// none, one path argument, or name/value segments (the first in every path,
// each of the others in one); its query parameters with `required` (every
// key for all_keys), and format.
void CheckEndpoint(const Json& doc, const http::VpicEndpoint& e) {
  using Path = http::VpicEndpoint::Path;
  SCOPED_TRACE(std::string(e.name));
  const std::vector<std::string> paths = PathsOf(doc, e.name);
  ASSERT_FALSE(paths.empty()) << "no path " << kVpic << e.name;
  std::set<absl::string_view> segments;
  for (const std::string& path : paths) {
    SCOPED_TRACE(path);
    ASSERT_TRUE(doc["paths"][path].contains("get"));
    const Json& op = doc["paths"][path]["get"];
    const std::string tail = path.substr(kVpic.size() + e.name.size());
    if (e.path == Path::kNone) EXPECT_EQ(tail, "");
    if (e.path == Path::kArg || e.path == Path::kOptArg) {
      CheckPathArg(doc, op, tail, e.path_kind);
    }
    EXPECT_NE(ParamOf(doc, op, "query", "format"), nullptr) << "no format";
    for (const http::ParamSpec& spec : e.params) {
      if (spec.name.empty()) continue;
      if (e.path != Path::kSegments) {
        CheckParam(ParamOf(doc, op, "query", spec.name), spec,
                   spec.required || e.all_keys);
      } else if (HasSegment(doc, op, path, spec)) {
        segments.insert(spec.name);
      } else {
        EXPECT_FALSE(spec.required) << "no segment " << spec.name;
      }
    }
  }
  for (const http::ParamSpec& spec : e.params) {
    if (e.path != Path::kSegments || spec.name.empty()) continue;
    EXPECT_TRUE(segments.count(spec.name))
        << "no path has segment " << spec.name;
  }
}

TEST(HttpOpenApi, EveryVpicReferenceEndpointIsDescribedWithItsArguments) {
  const Json doc = OpenApi();
  const std::vector<std::string> names =
      absl::StrSplit(http::VpicEndpointNames(), ", ", absl::SkipEmpty());
  ASSERT_FALSE(names.empty());
  for (const std::string& name : names) {
    const http::VpicEndpoint* e = http::FindVpicEndpoint(name);
    ASSERT_NE(e, nullptr) << name;
    CheckEndpoint(doc, *e);
  }
}

// The decodes too: every endpoint the gateway's 404 names as served.
TEST(HttpOpenApi, EveryVpicEndpointTheGatewayNamesIsDescribed) {
  const Json doc = OpenApi();
  const http::Route r = http::RouteOf("GET", "/api/vehicles/NoSuchEndpoint");
  const std::string answers = "it answers ";
  const size_t at = r.message.find(answers);
  ASSERT_NE(at, std::string::npos) << r.message;
  const std::vector<std::string> names = absl::StrSplit(
      r.message.substr(at + answers.size()), ", ", absl::SkipEmpty());
  EXPECT_GT(names.size(), 5u) << r.message;
  for (const std::string& name : names) {
    EXPECT_FALSE(PathsOf(doc, name).empty()) << "no path " << kVpic << name;
  }
}

// Every vPIC path takes X-Vin-Source-Preference, a GET its format (the
// batch form has its own); a 200 comes in each format with the provenance
// headers.
TEST(HttpOpenApi, EveryVpicPathTakesTheSourcePreferenceAndFormats) {
  const Json doc = OpenApi();
  const std::vector<std::string> formats = {"json", "xml", "csv"};
  int described = 0;
  for (const auto& [path, item] : doc["paths"].items()) {
    if (!absl::StartsWith(path, kVpic)) continue;
    for (const auto& [verb, op] : item.items()) {
      SCOPED_TRACE(absl::StrCat(verb, " ", path));
      ++described;
      const Json* preference =
          ParamOf(doc, op, "header", "X-Vin-Source-Preference");
      ASSERT_NE(preference, nullptr) << "no X-Vin-Source-Preference";
      EXPECT_EQ(preference->at("schema").at("enum"),
                Json({"live_only", "snapshot_only", "live_then_snapshot"}));
      if (verb == "get") {
        const Json* format = ParamOf(doc, op, "query", "format");
        ASSERT_NE(format, nullptr) << "no format";
        EXPECT_EQ(
            format->at("schema").value("enum", std::vector<std::string>()),
            formats);
      }
      const Json& ok = op.at("responses").at("200");
      for (const std::string& f : formats) {
        absl::StatusOr<http::VpicFormat> parsed =
            http::ParseVpicFormat(f, true);
        ASSERT_TRUE(parsed.ok()) << f;
        const std::vector<std::string> type =
            absl::StrSplit(http::ContentTypeOf(*parsed), ';');
        EXPECT_TRUE(ok.at("content").contains(type[0])) << type[0];
      }
      for (const char* h : {"X-Vin-Source", "X-Vin-Stale", "X-Vin-Note",
                            "Cache-Control", "ETag"}) {
        EXPECT_TRUE(ok.at("headers").contains(h)) << h;
      }
    }
  }
  EXPECT_GT(described, 0);
}

class HttpStaticTest : public testing_util::ServerFixture {};

// The gateway serves the repository's copy at /openapi.json, the page at /,
// each revalidated by its ETag.
TEST_F(HttpStaticTest, ServesTheOpenApiDescriptionAndThePage) {
  ServerOptions o = Defaults();
  o.http.listen = "127.0.0.1:0";
  StartServer(o);
  const int port = server_->http_port();
  testing_util::HttpResponse api = testing_util::HttpGet(port, "/openapi.json");
  EXPECT_EQ(api.status, 200);
  EXPECT_EQ(api.Header("Content-Type"), "application/json");
  EXPECT_EQ(api.body, ReadFile(VIN_OPENAPI_PATH));
  const std::string etag = api.Header("ETag");
  ASSERT_FALSE(etag.empty());
  EXPECT_EQ(testing_util::HttpGet(port, "/openapi.json", {"If-None-Match: " + etag})
                .status,
            304);
  testing_util::HttpResponse page = testing_util::HttpGet(port, "/");
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.Header("Content-Type"), "text/html; charset=utf-8");
  EXPECT_EQ(page.body, ReadFile(VIN_PAGE_PATH));
  EXPECT_EQ(testing_util::HttpCall(port, "POST", "/", "x").status, 405);
}

}  // namespace
}  // namespace server
