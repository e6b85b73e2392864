#include "util/utf8.h"

#include <string>

#include "gtest/gtest.h"

namespace util {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";

TEST(Utf8, ValidityTable) {
  const struct {
    std::string text;
    bool valid;
  } cases[] = {
      {"", true},
      {"acme", true},
      {"M\xC3\xBCller", true},      // ü
      {"\xE2\x82\xAC", true},       // €
      {"\xF0\x9F\x9A\x97", true},   // 🚗
      {"\xEF\xBB\xBF", true},       // BOM, a character like any
      {"\xFF\xFE", false},          // never in UTF-8
      {"\x80", false},              // a stray continuation byte
      {"\xC3", false},              // cut
      {"\xE2\x82", false},          // cut
      {"\xC0\xAF", false},          // overlong '/'
      {"\xE0\x80\xAF", false},      // overlong
      {"\xED\xA0\x80", false},      // a surrogate
      {"\xF4\x90\x80\x80", false},  // past U+10FFFF
      {"\xF5\x80\x80\x80", false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(IsValidUtf8(c.text), c.valid) << c.text;
  }
}

TEST(Utf8, SafeTextReplacesWhatIsNotTextAndCutsOnABoundary) {
  EXPECT_EQ(SafeText("acme", 128), "acme");
  EXPECT_EQ(SafeText("\xFF\xFE", 128), kFffd + kFffd);
  EXPECT_EQ(SafeText("a\nb\tc\x7F", 128),
            "a" + kFffd + "b" + kFffd + "c" + kFffd);
  EXPECT_EQ(SafeText("a\nb", 128, " "), "a b");
  EXPECT_EQ(SafeText("\xC2\x85x", 128), kFffd + "x") << "a C1 control";
  // 127 ASCII bytes then a 2-byte character: the character does not fit
  // in 128 and is left out whole.
  const std::string cut = std::string(127, 'a') + "\xC3\xBC";
  EXPECT_EQ(SafeText(cut, 128), std::string(127, 'a'));
  EXPECT_EQ(SafeText(cut, 129), cut);
  // Whatever goes in, what comes out is valid and bounded.
  for (int b = 0; b < 256; ++b) {
    const std::string in(200, static_cast<char>(b));
    const std::string out = SafeText(in, 128);
    EXPECT_TRUE(IsValidUtf8(out)) << b;
    EXPECT_LE(out.size(), 128u) << b;
  }
}

}  // namespace
}  // namespace util
