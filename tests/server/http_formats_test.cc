// vPIC's formats on its decode paths (DESIGN rule 18): XML when no format
// is given, as vPIC answers; json, xml and csv the same content; one
// upstream decode whatever format each caller asked; the batch form's own
// format field wins over the query's.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "testing/http_client.h"
#include "testing/vin_gen.h"
#include "tests/server/http_fixture.h"

namespace server {
namespace {

using testing_http::HttpGatewayTest;
using testing_http::Json;
using testing_http::kFord;
using testing_util::HttpCall;
using testing_util::HttpResponse;
using testing_util::ValidVin;

std::string XmlEscaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

// `<name>value</name>`, or `<name />` for an empty or null value.
std::string XmlElement(const std::string& name, const Json& value) {
  const std::string text = value.is_null()     ? ""
                           : value.is_string() ? value.get<std::string>()
                                               : value.dump();
  if (text.empty()) return absl::StrCat("<", name, " />");
  return absl::StrCat("<", name, ">", XmlEscaped(text), "</", name, ">");
}

// RFC 4180 rows (quoted fields, doubled quotes, CRLF between rows).
std::vector<std::vector<std::string>> ParseCsv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field.push_back('"');
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field.push_back(c);
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(field);
      field.clear();
    } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      rows.back().push_back(field);
      field.clear();
      rows.emplace_back();
      ++i;
    } else {
      field.push_back(c);
    }
  }
  if (rows.back().empty() && field.empty()) rows.pop_back();
  return rows;
}

// Every field of the JSON results is in the XML as its element inside its
// result's `element` (a null one left out), the results in order.
void ExpectXmlHolds(const std::string& xml, const Json& json,
                    const std::string& element) {
  EXPECT_EQ(xml.rfind("<Response ", 0), 0u) << xml.substr(0, 200);
  EXPECT_NE(xml.find(XmlElement("Count", json["Count"])), std::string::npos);
  EXPECT_NE(xml.find(XmlElement("Message", json["Message"])),
            std::string::npos);
  EXPECT_NE(xml.find(XmlElement("SearchCriteria", json["SearchCriteria"])),
            std::string::npos);
  size_t at = 0;
  for (const Json& result : json["Results"]) {
    at = xml.find(absl::StrCat("<", element, ">"), at);
    ASSERT_NE(at, std::string::npos) << "a result per JSON result";
    const size_t end = xml.find(absl::StrCat("</", element, ">"), at);
    ASSERT_NE(end, std::string::npos);
    const std::string one = xml.substr(at, end - at);
    for (auto it = result.begin(); it != result.end(); ++it) {
      if (it.value().is_null()) {
        EXPECT_EQ(one.find(absl::StrCat("<", it.key(), ">")),
                  std::string::npos);
        EXPECT_EQ(one.find(absl::StrCat("<", it.key(), " />")),
                  std::string::npos);
        continue;
      }
      EXPECT_NE(one.find(XmlElement(it.key(), it.value())), std::string::npos)
          << XmlElement(it.key(), it.value());
    }
    at = end;
  }
}

void ExpectCsvHolds(const std::string& csv, const Json& json) {
  const auto rows = ParseCsv(csv);
  ASSERT_EQ(rows.size(), json["Results"].size() + 1) << csv.substr(0, 300);
  std::vector<std::string> keys;
  std::vector<std::string> header;
  for (auto it = json["Results"][0].begin(); it != json["Results"][0].end();
       ++it) {
    keys.push_back(it.key());
    header.push_back(absl::AsciiStrToLower(it.key()));
  }
  EXPECT_EQ(rows[0], header) << "the fields' names in lower case, in order";
  for (size_t r = 0; r < json["Results"].size(); ++r) {
    std::vector<std::string> want;
    for (const std::string& k : keys) {
      const Json& v = json["Results"][r][k];
      want.push_back(v.is_null()     ? ""
                     : v.is_string() ? v.get<std::string>()
                                     : v.dump());
    }
    EXPECT_EQ(rows[r + 1], want) << "row " << r + 1;
  }
}

TEST_F(HttpGatewayTest, NoFormatIsXmlAndEachFormatHasTheSameContent) {
  StartHttp();
  const std::string path =
      absl::StrCat("/api/vehicles/DecodeVinValues/", kFord);
  const HttpResponse xml = Get(path);
  ASSERT_EQ(xml.status, 200) << xml.body;
  EXPECT_EQ(xml.Header("Content-Type"), "application/xml; charset=utf-8");
  EXPECT_EQ(xml.Header("X-Vin-Source"), "vpic");
  const HttpResponse json = Get(path + "?format=json");
  ASSERT_EQ(json.status, 200);
  EXPECT_EQ(json.Header("Content-Type"), "application/json; charset=utf-8");
  const HttpResponse csv = Get(path + "?format=CSV");
  ASSERT_EQ(csv.status, 200);
  EXPECT_EQ(csv.Header("Content-Type"), "text/csv; charset=utf-8");
  EXPECT_EQ(csv.Header("X-Vin-Source"), "cache");
  const Json j = Body(json);
  EXPECT_EQ(j["Results"][0]["Make"], "FORD");
  ExpectXmlHolds(xml.body, j, "DecodedVINValues");
  ExpectCsvHolds(csv.body, j);
  EXPECT_EQ(Get(path + "?format=xml").body, xml.body);
  EXPECT_NE(xml.Header("ETag"), json.Header("ETag")) << "one tag per body";
  EXPECT_EQ(fake_->TotalRequests(), 1) << "one decode for every format";
  const HttpResponse bad = Get(path + "?format=yaml");
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("json, xml or csv"), std::string::npos) << bad.body;
}

TEST_F(HttpGatewayTest, DecodeVinAndItsExtendedFormInEachFormat) {
  StartHttp();
  const std::string path = absl::StrCat("/api/vehicles/DecodeVin/", kFord);
  const Json j = Body(Get(path + "?format=json"));
  ASSERT_EQ(j["Results"].size(), 134u);
  const std::string xml = Get(path).body;
  ExpectXmlHolds(xml, j, "DecodedVariable");
  // vPIC's XML order, not its JSON's (captured: tests/fixtures/vpic/xml/).
  EXPECT_NE(
      xml.find(
          "<DecodedVariable><VariableId>142</VariableId><Variable>"
          "Suggested VIN</Variable><ValueId /><Value /></DecodedVariable>"),
      std::string::npos)
      << xml.substr(0, 800);
  ExpectCsvHolds(Get(path + "?format=csv").body, j);
  const HttpResponse ext = Get(
      absl::StrCat("/api/vehicles/DecodeVinExtended/", kFord, "?format=json"));
  ASSERT_EQ(ext.status, 200) << ext.body;
  EXPECT_EQ(Body(ext), j);
  EXPECT_EQ(fake_->TotalRequests(), 1);
}

// As vPIC: the batch's format is the form's; one in the query is not read.
TEST_F(HttpGatewayTest, TheBatchTakesItsFormatFromTheFormOnly) {
  StartHttp();
  const std::string a = ValidVin(201), b = ValidVin(202);
  const std::string data = absl::StrCat("data=", a, ";", b);
  const HttpResponse json =
      HttpCall(port_, "POST", "/api/vehicles/DecodeVINValuesBatch/",
               absl::StrCat("format=json&", data));
  ASSERT_EQ(json.status, 200) << json.body;
  const Json j = Body(json);
  ASSERT_EQ(j["Results"].size(), 2u);
  const int decoded = fake_->TotalRequests();
  const HttpResponse csv =
      HttpCall(port_, "POST", "/api/vehicles/DecodeVINValuesBatch/?format=json",
               absl::StrCat("Format=csv&", data));
  ASSERT_EQ(csv.status, 200) << csv.body;
  EXPECT_EQ(csv.Header("Content-Type"), "text/csv; charset=utf-8");
  ExpectCsvHolds(csv.body, j);
  const HttpResponse xml = HttpCall(
      port_, "POST", "/api/vehicles/DecodeVINValuesBatch/?format=json", data);
  ASSERT_EQ(xml.status, 200) << xml.body;
  EXPECT_EQ(xml.Header("Content-Type"), "application/xml; charset=utf-8");
  ExpectXmlHolds(xml.body, j, "DecodedVINValues");
  EXPECT_NE(
      xml.body.find("<SearchCriteria /><Results><DecodedVINValues><MakeID"),
      std::string::npos)
      << xml.body.substr(0, 600);
  EXPECT_EQ(fake_->TotalRequests(), decoded) << "the other formats: the cache";
}

}  // namespace
}  // namespace server
