// hiredis's reader with its replies bounded (fleet/bounded_reader.h):
// what a lying Redis (or whoever answers in its place) sends cannot make
// one reply cost unbounded memory.
#include "fleet/bounded_reader.h"

#include <hiredis/hiredis.h>

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace fleet {
namespace {

class BoundedReaderTest : public ::testing::Test {
 protected:
  BoundedReaderTest() : reader_(CreateBoundedReader(&budget_)) {}
  ~BoundedReaderTest() override { redisReaderFree(reader_); }

  // Feeds `resp`; the reply's status: REDIS_OK with *reply set (or null
  // when incomplete), or REDIS_ERR.
  int Feed(const std::string& resp, redisReply** reply) {
    EXPECT_EQ(redisReaderFeed(reader_, resp.data(), resp.size()), REDIS_OK);
    void* raw = nullptr;
    const int rc = redisReaderGetReply(reader_, &raw);
    *reply = static_cast<redisReply*>(raw);
    return rc;
  }

  ReplyBudget budget_;
  redisReader* reader_;
};

TEST_F(BoundedReaderTest, RepliesWithinTheBoundsParseAsHiredisParsesThem) {
  redisReply* r = nullptr;
  ASSERT_EQ(Feed("*3\r\n$3\r\nabc\r\n:42\r\n$-1\r\n", &r), REDIS_OK);
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(r->type, REDIS_REPLY_ARRAY);
  ASSERT_EQ(r->elements, 3u);
  EXPECT_EQ(std::string(r->element[0]->str, r->element[0]->len), "abc");
  EXPECT_EQ(r->element[1]->integer, 42);
  EXPECT_EQ(r->element[2]->type, REDIS_REPLY_NIL);
  freeReplyObject(r);
  EXPECT_EQ(budget_.elements, 3u);
  EXPECT_EQ(budget_.bytes, 3u);
  EXPECT_FALSE(budget_.exceeded);
}

TEST_F(BoundedReaderTest, AHugeArrayHeaderFailsBeforeAnythingIsAllocated) {
  // A billion elements announced: hiredis alone would allocate 8 GB of
  // pointers for it.
  redisReply* r = nullptr;
  EXPECT_EQ(Feed("*1000000000\r\n", &r), REDIS_ERR);
  EXPECT_EQ(r, nullptr);
  EXPECT_TRUE(budget_.exceeded);
  EXPECT_NE(budget_.Describe().find("more than 65536 elements"),
            std::string::npos)
      << budget_.Describe();
}

TEST_F(BoundedReaderTest, NestedArraysAreCountedTogether) {
  // 2 arrays of 40,000: each alone would pass, the reply does not.
  redisReply* r = nullptr;
  EXPECT_EQ(Feed("*2\r\n*40000\r\n", &r), REDIS_OK);
  EXPECT_EQ(r, nullptr) << "incomplete so far";
  std::string ints;
  for (int i = 0; i < 40000; ++i) ints += ":1\r\n";
  EXPECT_EQ(Feed(ints + "*40000\r\n", &r), REDIS_ERR);
  EXPECT_TRUE(budget_.exceeded);
  EXPECT_EQ(budget_.elements, 40002u);
}

// hiredis 0.14 keeps an array's length as an int: 2^32 would be an array
// of no element that the parser fills, 2^31 a negative length. Each fails
// before an element is written (ASan would see the overflow otherwise).
TEST_F(BoundedReaderTest, ALengthOverIntMaxFailsBeforeAnElementIsWritten) {
  for (const char* resp : {"*4294967296\r\n:1\r\n:2\r\n",
                           "*2147483648\r\n:1\r\n",
                           "*4294967298\r\n$1\r\na\r\n$1\r\nb\r\n:3\r\n"}) {
    ReplyBudget budget;
    redisReader* reader = CreateBoundedReader(&budget);
    ASSERT_EQ(redisReaderFeed(reader, resp, strlen(resp)), REDIS_OK);
    void* raw = nullptr;
    int rc = redisReaderGetReply(reader, &raw);
    if (rc == REDIS_OK && raw != nullptr) {
      // 2^32 + 2 is 2 as an int: a whole array of 2, then garbage after.
      auto* r = static_cast<redisReply*>(raw);
      EXPECT_EQ(r->elements, 2u) << resp;
      freeReplyObject(r);
      rc = redisReaderGetReply(reader, &raw);
      if (rc == REDIS_OK && raw != nullptr) freeReplyObject(raw);
      redisReaderFree(reader);
      continue;
    }
    EXPECT_EQ(rc, REDIS_ERR) << resp;
    // Refused by our functions, or by a hiredis that checks the length
    // itself ("Multi-bulk length out of range").
    EXPECT_TRUE(budget.malformed || reader->err == REDIS_ERR_PROTOCOL)
        << resp << ": " << reader->errstr;
    if (budget.malformed) {
      EXPECT_NE(budget.Describe().find("do not fit"), std::string::npos);
    }
    redisReaderFree(reader);
  }
}

TEST_F(BoundedReaderTest, StringsAreBoundedInBytesPerReply) {
  const std::string mib(1 << 20, 'x');
  std::string resp = absl::StrCat("*65\r\n");
  for (int i = 0; i < 65; ++i) {
    absl::StrAppend(&resp, "$", mib.size(), "\r\n", mib, "\r\n");
  }
  redisReply* r = nullptr;
  EXPECT_EQ(Feed(resp, &r), REDIS_ERR) << "65 MiB of strings in one reply";
  EXPECT_TRUE(budget_.exceeded);
  EXPECT_EQ(budget_.bytes, size_t{64} << 20);
}

}  // namespace
}  // namespace fleet
