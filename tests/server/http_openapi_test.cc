// /openapi.json (docs/openapi.json, written by hand: no packaged generator
// serves) held to the proto: every google.api.http route of
// VinDecoderService is described with its request and response messages,
// every message's schema has exactly the message's JSON fields with their
// types, every enum its values; every described path is one the gateway
// routes. And the gateway serves the repository's copy, and the page.
#include <google/protobuf/descriptor.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "google/api/annotations.pb.h"
#include "gtest/gtest.h"
#include "server/http/routes.h"
#include "testing/http_client.h"
#include "testing/server_fixture.h"
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
  // Nothing described that the proto does not have (beside vPIC's shapes
  // and the errors).
  const std::set<std::string> others = {"Status", "VpicAnswer", "VpicVariables",
                                        "GatewayError"};
  std::set<std::string> described_messages;
  for (const auto& [name, schema] : doc["components"]["schemas"].items()) {
    if (others.count(name) || schema.contains("enum")) continue;
    described_messages.insert(absl::StrCat("vin.v1.", name));
  }
  EXPECT_EQ(described_messages, check.seen());
}

TEST(HttpOpenApi, EveryDescribedPathIsOneTheGatewayRoutes) {
  const Json doc = OpenApi();
  for (const auto& [path, item] : doc["paths"].items()) {
    for (const auto& [verb, op] : item.items()) {
      const std::string method = absl::AsciiStrToUpper(verb);
      const std::string target =
          absl::StrReplaceAll(path, {{"{vin}", "1FTMW1T88MFA00001"}});
      const http::Route r = http::RouteOf(method, target);
      EXPECT_NE(r.kind, http::Route::Kind::kError)
          << method << " " << target << ": " << r.message;
    }
  }
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
