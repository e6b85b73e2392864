// vPIC's answers as data in its three formats (server/http/vpic_document.h):
// JSON typed as vPIC types it, XML with the answer's element names, CSV
// as a header row and one row per result; and vPIC's `format` parameter.
#include "server/http/vpic_document.h"

#include <string>

#include "gtest/gtest.h"

namespace server {
namespace http {
namespace {

VpicDocument Makes() {
  VpicDocument doc;
  doc.count = 2;
  doc.message = "Response returned successfully";
  doc.search_criteria = "";
  doc.result_element = "AllVehicleMakes";
  doc.results.push_back({VpicField::Number("Make_ID", 440),
                         VpicField::String("Make_Name", "ASTON MARTIN")});
  doc.results.push_back({VpicField::Number("Make_ID", 441),
                         VpicField::String("Make_Name", "A \"B\" & <C>, D")});
  return doc;
}

TEST(VpicDocument, JsonKeepsVpicsTypesAndOrder) {
  VpicDocument doc = Makes();
  doc.results[1].push_back(VpicField::Null("Note"));
  EXPECT_EQ(Render(doc, VpicFormat::kJson),
            "{\"Count\":2,\"Message\":\"Response returned successfully\","
            "\"SearchCriteria\":\"\",\"Results\":["
            "{\"Make_ID\":440,\"Make_Name\":\"ASTON MARTIN\"},"
            "{\"Make_ID\":441,\"Make_Name\":\"A \\\"B\\\" & <C>, D\","
            "\"Note\":null}]}");
}

TEST(VpicDocument, XmlAsVpicWritesIt) {
  VpicDocument doc = Makes();
  doc.search_criteria = "";
  doc.results[0].push_back(VpicField::Null("Note"));
  doc.results[1].push_back(VpicField::String("Note", ""));
  doc.xml_order = {1, 0, 2};  // (vPIC's XML has its own order)
  EXPECT_EQ(Render(doc, VpicFormat::kXml),
            "<Response xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" "
            "xmlns:xsd=\"http://www.w3.org/2001/XMLSchema\">"
            "<Count>2</Count><Message>Response returned successfully</Message>"
            "<SearchCriteria /><Results>"
            "<AllVehicleMakes><Make_Name>ASTON MARTIN</Make_Name>"
            "<Make_ID>440</Make_ID></AllVehicleMakes>"
            "<AllVehicleMakes><Make_Name>A \"B\" &amp; &lt;C&gt;, D</Make_Name>"
            "<Make_ID>441</Make_ID><Note /></AllVehicleMakes>"
            "</Results></Response>")
      << "no declaration, no whitespace; a null left out, \"\" as <X />";
}

TEST(VpicDocument, CsvIsALowerCaseHeaderRowAndARowPerResult) {
  EXPECT_EQ(Render(Makes(), VpicFormat::kCsv),
            "make_id,make_name\r\n"
            "440,ASTON MARTIN\r\n"
            "441,\"A \"\"B\"\" & <C>, D\"\r\n");
  EXPECT_EQ(Render(VpicDocument{}, VpicFormat::kCsv), "");
}

TEST(VpicDocument, FormatParameterAsVpicTakesIt) {
  EXPECT_EQ(*ParseVpicFormat("", false), VpicFormat::kXml);
  EXPECT_EQ(*ParseVpicFormat(" JSON ", true), VpicFormat::kJson);
  EXPECT_EQ(*ParseVpicFormat("Csv", true), VpicFormat::kCsv);
  EXPECT_EQ(*ParseVpicFormat("xml", true), VpicFormat::kXml);
  const auto bad = ParseVpicFormat("", true);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("json, xml or csv"), std::string::npos);
  EXPECT_EQ(std::string(ContentTypeOf(VpicFormat::kCsv)),
            "text/csv; charset=utf-8");
}

}  // namespace
}  // namespace http
}  // namespace server
