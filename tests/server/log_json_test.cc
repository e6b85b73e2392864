// The JSON log lines' strings (server::log::JsonString): plain text takes
// a short path; every string reads back as itself, escaped as a JSON
// library escapes it.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "server/common/log.h"

namespace server::log {
namespace {

std::string Reference(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false,
                                nlohmann::json::error_handler_t::replace);
}

TEST(LogJsonString, IsWhatAJsonLibraryWritesForEveryByteAndCommonValues) {
  std::vector<std::string> cases = {"",
                                    "1HGCM82633A004352",
                                    "ipv4:127.0.0.1:50514",
                                    "#17",
                                    "say \"hi\"",
                                    "back\\slash",
                                    "tab\there",
                                    "line\nbreak",
                                    std::string("nul\0byte", 8),
                                    "caf\xc3\xa9",
                                    "bad \xff utf-8",
                                    "del \x7f"};
  for (int b = 0; b < 256; ++b) cases.emplace_back(1, static_cast<char>(b));
  for (const std::string& s : cases) {
    const std::string quoted = JsonString(s);
    EXPECT_EQ(quoted, Reference(s)) << "for \"" << s << "\"";
    const nlohmann::json back = nlohmann::json::parse(quoted);
    ASSERT_TRUE(back.is_string()) << quoted;
    if (nlohmann::json(s).dump(-1, ' ', false,
                               nlohmann::json::error_handler_t::ignore) ==
        quoted) {
      EXPECT_EQ(back.get<std::string>(), s) << "valid UTF-8 reads back as sent";
    }
  }
}

}  // namespace
}  // namespace server::log
