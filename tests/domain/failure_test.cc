#include "domain/failure.h"

#include <string>

#include "gtest/gtest.h"
#include "metrics/metrics.h"

namespace domain {
namespace {

using C = absl::StatusCode;
using R = FailureReason;

// The API contract's unary statuses (docs/DESIGN.md "Unary Decode statuses")
// and whether a caller may try again, one row per reason.
TEST(FailureTraits, EachReasonsStatusRetryabilityAndLabel) {
  struct Case {
    R reason;
    C code;
    bool retryable;
    const char* label;
  };
  const Case cases[] = {
      {R::kInvalidVin, C::kInvalidArgument, false, "invalid_vin"},
      {R::kUpstreamUnavailable, C::kUnavailable, true, "upstream_unavailable"},
      {R::kUpstreamRejected, C::kFailedPrecondition, false,
       "upstream_rejected"},
      {R::kCancelled, C::kCancelled, false, "cancelled"},
      {R::kShuttingDown, C::kUnavailable, true, "shutting_down"},
      {R::kOverloaded, C::kResourceExhausted, true, "overloaded"},
      {R::kDeadlineExceeded, C::kDeadlineExceeded, true, "deadline_exceeded"},
      {R::kNoSnapshot, C::kFailedPrecondition, false, "no_snapshot"},
      {R::kInvalidRequest, C::kInvalidArgument, false, "invalid_request"},
  };
  ASSERT_EQ(sizeof(cases) / sizeof(cases[0]), kFailureReasons);
  for (const Case& c : cases) {
    const FailureTraits& t = TraitsOf(c.reason);
    EXPECT_EQ(t.code, c.code) << c.label;
    EXPECT_EQ(t.retryable, c.retryable) << c.label;
    EXPECT_STREQ(t.label, c.label);
  }
}

// The metrics module keeps its own label enum (it is a leaf); it must list
// the reasons in the same order with the same names.
TEST(FailureTraits, MetricLabelsAreTheTablesLabels) {
  ASSERT_EQ(metrics::N<metrics::Reason>(), kFailureReasons);
  for (size_t i = 0; i < kFailureReasons; ++i) {
    EXPECT_STREQ(metrics::Name(static_cast<metrics::Reason>(i)),
                 TraitsOf(static_cast<R>(i)).label);
  }
}

TEST(FailureOf, TakesRetryabilityFromTheTable) {
  const Failure busy = FailureOf(R::kOverloaded, "busy");
  EXPECT_EQ(busy.reason, R::kOverloaded);
  EXPECT_EQ(busy.message, "busy");
  EXPECT_TRUE(busy.retryable);
  EXPECT_FALSE(FailureOf(R::kInvalidRequest, "x").retryable);
}

}  // namespace
}  // namespace domain
