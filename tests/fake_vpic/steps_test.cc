// The fake vPIC's scripted steps as text (steps.cc): the forms --script,
// --chaos and the tests write, and what is refused.
#include "fake_vpic/fake_vpic.h"

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace fakevpic {
namespace {

TEST(StepTest, WeightedStepListParsesWeightsAndRejectsBadOnes) {
  auto list = WeightedStep::ParseList("60*ok,2*429:1, delay:2s");
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ((*list)[0].weight, 60);
  EXPECT_EQ((*list)[1].step.retry_after, "1");
  EXPECT_EQ((*list)[2].weight, 1);
  EXPECT_EQ((*list)[2].step.delay, absl::Seconds(2));
  for (const char* bad : {"x*ok", "-1*ok", "3*nope"}) {
    EXPECT_FALSE(WeightedStep::ParseList(bad).ok()) << bad;
  }
}

TEST(StepTest, ParsesTextualForms) {
  EXPECT_EQ(Step::Parse("ok")->kind, Step::Kind::kOk);
  EXPECT_EQ(Step::Parse(" Reset ")->kind, Step::Kind::kReset);
  EXPECT_EQ(Step::Parse("hang")->kind, Step::Kind::kHang);
  EXPECT_EQ(Step::Parse("html")->kind, Step::Kind::kHtml);
  EXPECT_EQ(Step::Parse("sparse")->kind, Step::Kind::kSparse);
  EXPECT_EQ(Step::Parse("truncated")->kind, Step::Kind::kTruncated);
  EXPECT_EQ(Step::Parse("empty")->kind, Step::Kind::kEmptyResults);
  absl::StatusOr<Step> status = Step::Parse("504");
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->kind, Step::Kind::kStatus);
  EXPECT_EQ(status->status, 504);
  absl::StatusOr<Step> limited = Step::Parse("429:120");
  ASSERT_TRUE(limited.ok());
  EXPECT_EQ(limited->kind, Step::Kind::kTooManyRequests);
  EXPECT_EQ(limited->retry_after, "120");
  absl::StatusOr<Step> delay = Step::Parse("delay:500ms");
  ASSERT_TRUE(delay.ok());
  EXPECT_EQ(delay->kind, Step::Kind::kDelay);
  EXPECT_EQ(delay->delay, absl::Milliseconds(500));
}

TEST(StepTest, RejectsUnknownText) {
  for (const char* bad : {"", "nope", "42", "5033", "099", "429:", "delay:x"}) {
    EXPECT_FALSE(Step::Parse(bad).ok()) << bad;
  }
  EXPECT_FALSE(Step::ParseList("503,bogus").ok());
}

TEST(StepTest, ParseListKeepsCommasOfAnHttpDate) {
  auto steps = Step::ParseList("429:Wed, 21 Oct 2015 07:28:00 GMT,ok");
  ASSERT_TRUE(steps.ok()) << steps.status();
  ASSERT_EQ(steps->size(), 2u);
  EXPECT_EQ((*steps)[0].retry_after, "Wed, 21 Oct 2015 07:28:00 GMT");
  EXPECT_EQ((*steps)[1].kind, Step::Kind::kOk);
}

}  // namespace
}  // namespace fakevpic
