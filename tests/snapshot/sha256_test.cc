#include "snapshot/sha256.h"

#include <string>

#include "gtest/gtest.h"

namespace snapshot {
namespace {

struct Case {
  std::string input;
  const char* want;
};

TEST(Sha256, KnownAnswers) {
  const Case cases[] = {
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc",
       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      {std::string(1000, 'a'),
       "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"},
  };
  for (const Case& c : cases) {
    Sha256 h;
    h.Update(c.input);
    EXPECT_EQ(h.HexDigest(), c.want) << "input of " << c.input.size();
  }
}

TEST(Sha256, IncrementalEqualsOneShot) {
  const std::string data(777, 'x');
  Sha256 one;
  one.Update(data);
  Sha256 pieces;
  for (size_t i = 0; i < data.size(); i += 13) {
    pieces.Update(absl::string_view(data).substr(i, 13));
  }
  EXPECT_EQ(one.HexDigest(), pieces.HexDigest());
}

TEST(Sha256File, MissingFileIsNotFound) {
  EXPECT_EQ(Sha256File("/nonexistent/vpic.lite.db").status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace snapshot
