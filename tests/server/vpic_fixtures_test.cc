// The captured vPIC answers of the endpoints issue 31 serves next
// (tests/fixtures/vpic/json/, sources in SOURCES.md) are whole answers, not
// excerpts: each parses, its Count is its number of results, and every
// result has the fields of the first, as one endpoint's answer does. (Make
// names in them that look odd, such as LUX followed by three X's, are
// NHTSA's own.)
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace {

using Json = nlohmann::ordered_json;

std::vector<std::string> KeysOf(const Json& object) {
  std::vector<std::string> keys;
  for (auto it = object.begin(); it != object.end(); ++it)
    keys.push_back(it.key());
  return keys;
}

TEST(VpicFixtures, EveryCapturedAnswerIsWhole) {
  const std::filesystem::path dir =
      std::filesystem::path(VIN_FIXTURE_DIR) / "json";
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    SCOPED_TRACE(entry.path().string());
    ++files;
    std::ifstream in(entry.path());
    const Json answer = Json::parse(in, nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(answer.is_object());
    ASSERT_TRUE(answer.contains("SearchCriteria"));
    ASSERT_TRUE(answer["Message"].is_string());
    const Json& results = answer["Results"];
    ASSERT_TRUE(results.is_array());
    EXPECT_EQ(answer["Count"].get<size_t>(), results.size());
    for (const Json& r : results) EXPECT_EQ(KeysOf(r), KeysOf(results[0]));
  }
  EXPECT_EQ(files, 27) << "18 endpoints and 9 variants of their parameters";
}

}  // namespace
