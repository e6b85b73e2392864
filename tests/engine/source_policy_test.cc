// The source preference's pure rules, without a snapshot: which preference
// a request gets, and after which failures the snapshot may answer.
#include "engine/source_policy.h"

#include "gtest/gtest.h"

namespace engine {
namespace {

using P = SourcePreference;
using R = FailureReason;

TEST(ResolveSource, TheRequestsThenTheServersThenWhetherASnapshotIsLoaded) {
  struct Case {
    P requested, server_default;
    bool loaded;
    P want;
  };
  const Case cases[] = {
      {P::kLiveOnly, P::kLiveThenSnapshot, true, P::kLiveOnly},
      {P::kSnapshotOnly, P::kUnspecified, false, P::kSnapshotOnly},
      {P::kUnspecified, P::kLiveOnly, true, P::kLiveOnly},
      {P::kUnspecified, P::kSnapshotOnly, false, P::kSnapshotOnly},
      {P::kUnspecified, P::kUnspecified, true, P::kLiveThenSnapshot},
      {P::kUnspecified, P::kUnspecified, false, P::kLiveOnly},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ResolveSource(c.requested, c.server_default, c.loaded), c.want)
        << static_cast<int>(c.requested) << " "
        << static_cast<int>(c.server_default) << " " << c.loaded;
  }
}

TEST(SnapshotAnswersAfter, OnlyLiveThenSnapshotAndOnlyWhenLiveFailedForGood) {
  for (R r : {R::kUpstreamUnavailable, R::kUpstreamRejected,
              R::kDeadlineExceeded}) {
    EXPECT_TRUE(SnapshotAnswersAfter(P::kLiveThenSnapshot, r))
        << static_cast<int>(r);
    EXPECT_FALSE(SnapshotAnswersAfter(P::kLiveOnly, r)) << static_cast<int>(r);
  }
  for (R r : {R::kCancelled, R::kShuttingDown, R::kOverloaded,
              R::kInvalidVin, R::kInvalidRequest, R::kNoSnapshot}) {
    EXPECT_FALSE(SnapshotAnswersAfter(P::kLiveThenSnapshot, r))
        << static_cast<int>(r);
  }
}

}  // namespace
}  // namespace engine
