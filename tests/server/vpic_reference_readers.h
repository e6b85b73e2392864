// Readers of the gateway's XML and CSV answers for the reference tests: an
// XML reader of vPIC's compact XML (elements, text, the three escapes; no
// attributes but the root's) and an RFC 4180 CSV reader, written here and
// not shared with the code they check, and the checks that an answer holds
// the content of vPIC's JSON answer.
#ifndef VIN_TESTS_SERVER_VPIC_REFERENCE_READERS_H_
#define VIN_TESTS_SERVER_VPIC_REFERENCE_READERS_H_

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace server {
namespace testing_http {

struct XmlNode {
  std::string name;
  std::string text;
  std::vector<XmlNode> children;
  const XmlNode* Child(const std::string& n) const {
    for (const XmlNode& c : children) {
      if (c.name == n) return &c;
    }
    return nullptr;
  }
};

// Reads one element at `*at` (after any text); false on anything else.
inline bool ReadXml(const std::string& s, size_t* at, XmlNode* out) {
  if (*at >= s.size() || s[*at] != '<') return false;
  const size_t close = s.find('>', *at);
  if (close == std::string::npos) return false;
  std::string head = s.substr(*at + 1, close - *at - 1);
  *at = close + 1;
  const bool empty = !head.empty() && head.back() == '/';
  if (empty)
    head = std::string(
        absl::StripTrailingAsciiWhitespace(head.substr(0, head.size() - 1)));
  out->name = head.substr(0, head.find(' '));
  if (empty) return true;
  while (*at < s.size()) {
    if (s.compare(*at, 2, "</") == 0) {
      const size_t end = s.find('>', *at);
      if (end == std::string::npos ||
          s.substr(*at + 2, end - *at - 2) != out->name) {
        return false;
      }
      *at = end + 1;
      out->text = absl::StrReplaceAll(
          out->text, {{"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}});
      return true;
    }
    if (s[*at] == '<') {
      out->children.emplace_back();
      if (!ReadXml(s, at, &out->children.back())) return false;
    } else {
      out->text.push_back(s[(*at)++]);
    }
  }
  return false;
}

// A JSON scalar as the XML and CSV write it.
inline std::string TextOf(const nlohmann::ordered_json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return v.dump();
}

// `node` holds `object`'s fields: each non-null scalar as an element with
// its text, each list as an element of items holding theirs; nulls absent.
inline void ExpectSameFields(const nlohmann::ordered_json& object,
                             const XmlNode& node, const std::string& where) {
  size_t present = 0;
  for (auto it = object.begin(); it != object.end(); ++it) {
    const XmlNode* c = node.Child(it.key());
    if (it.value().is_null()) {
      EXPECT_EQ(c, nullptr) << where << "." << it.key() << ": null is left out";
      continue;
    }
    ++present;
    if (c == nullptr) {
      ADD_FAILURE() << where << " lacks " << it.key();
      continue;
    }
    if (it.value().is_array()) {
      ASSERT_EQ(c->children.size(), it.value().size())
          << where << "." << it.key();
      for (size_t i = 0; i < c->children.size(); ++i) {
        ExpectSameFields(
            it.value()[i], c->children[i],
            where + "." + it.key() + "[" + std::to_string(i) + "]");
      }
    } else {
      EXPECT_EQ(c->text, TextOf(it.value())) << where << "." << it.key();
    }
  }
  EXPECT_EQ(node.children.size(), present) << where << ": nothing else";
}

// `xml` is vPIC's XML of `want` (vPIC's JSON answer), its results `element`.
inline void ExpectXmlHolds(const nlohmann::ordered_json& want,
                           const std::string& xml, const std::string& element) {
  ASSERT_EQ(xml.rfind("<Response xmlns:xsi=", 0), 0u) << xml.substr(0, 100);
  XmlNode root;
  size_t at = 0;
  ASSERT_TRUE(ReadXml(xml, &at, &root)) << "not XML: " << xml.substr(0, 200);
  EXPECT_EQ(at, xml.size()) << "one element, nothing after it";
  ASSERT_EQ(root.name, "Response");
  ASSERT_NE(root.Child("Count"), nullptr);
  EXPECT_EQ(root.Child("Count")->text, TextOf(want["Count"]));
  EXPECT_EQ(root.Child("Message")->text, TextOf(want["Message"]));
  if (want["SearchCriteria"].is_null()) {
    EXPECT_EQ(root.Child("SearchCriteria"), nullptr);
  } else {
    ASSERT_NE(root.Child("SearchCriteria"), nullptr);
    EXPECT_EQ(root.Child("SearchCriteria")->text,
              TextOf(want["SearchCriteria"]));
  }
  const XmlNode* results = root.Child("Results");
  ASSERT_NE(results, nullptr);
  ASSERT_EQ(results->children.size(), want["Results"].size());
  for (size_t i = 0; i < results->children.size(); ++i) {
    EXPECT_EQ(results->children[i].name, element);
    ExpectSameFields(want["Results"][i], results->children[i],
                     "result " + std::to_string(i));
  }
}

// RFC 4180 rows (CRLF or LF line ends; quoted fields with "" for ").
inline std::vector<std::vector<std::string>> ReadCsv(const std::string& s) {
  std::vector<std::vector<std::string>> rows(1, std::vector<std::string>(1));
  bool quoted = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (quoted) {
      if (c == '"' && i + 1 < s.size() && s[i + 1] == '"') {
        rows.back().back().push_back('"');
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        rows.back().back().push_back(c);
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().emplace_back();
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ++i;
      rows.emplace_back(1);
    } else {
      rows.back().back().push_back(c);
    }
  }
  if (rows.back().size() == 1 && rows.back()[0].empty()) rows.pop_back();
  return rows;
}

// `csv` is a header of `want`'s result fields (lower case) and one row per
// result with their values (a list as its JSON).
inline void ExpectCsvHolds(const nlohmann::ordered_json& want,
                           const std::string& csv) {
  const auto rows = ReadCsv(csv);
  const auto& results = want["Results"];
  ASSERT_EQ(rows.size(), results.empty() ? 0u : results.size() + 1);
  if (results.empty()) return;
  std::vector<std::string> header;
  for (auto it = results[0].begin(); it != results[0].end(); ++it) {
    header.push_back(absl::AsciiStrToLower(it.key()));
  }
  EXPECT_EQ(rows[0], header);
  for (size_t i = 0; i < results.size(); ++i) {
    ASSERT_EQ(rows[i + 1].size(), header.size()) << "row " << i;
    size_t k = 0;
    for (auto it = results[i].begin(); it != results[i].end(); ++it, ++k) {
      if (it.value().is_array()) {
        EXPECT_EQ(nlohmann::ordered_json::parse(rows[i + 1][k]).size(),
                  it.value().size())
            << "row " << i << " " << it.key();
      } else {
        EXPECT_EQ(rows[i + 1][k], TextOf(it.value()))
            << "row " << i << " " << it.key();
      }
    }
  }
}

}  // namespace testing_http
}  // namespace server

#endif  // VIN_TESTS_SERVER_VPIC_REFERENCE_READERS_H_
