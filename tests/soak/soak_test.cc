// The chaos soak: the real vin-server binary in front of the fake vPIC,
// which answers every request with a fault drawn at random (503, 429 with
// Retry-After, resets, hangs past the attempt timeout, HTML 200s, truncated
// JSON, sparse 200s, slow answers) or with the normal answer, under a load
// of clients that behave as real ones do: unary calls with short deadlines,
// DecodeBatch streams that half-close early, cancel mid-stream, stop reading
// for a while, have no deadline, or (vinctl processes) are killed outright;
// repeated VINs, distinct ones and invalid ones; SIGHUP reloads meanwhile.
//
// It fails on any violation of what a user is promised: one terminal event
// per item read (or an error status for a client that went away), no event
// after it, QUEUED first, no upstream request for a VIN after its last
// caller left (beyond one attempt already under way), RSS flat after the
// warm-up, nothing left in flight, scheduled or in a window at the end, and
// exit 0 on SIGTERM.
//
// VIN_SOAK_SECONDS (default 60) sets the length of the load, VIN_SOAK_SEED
// (default: from the clock, printed) its randomness; scripts/soak.sh runs it
// for longer.
//
// The parts: ledger.h (what the load saw, every violation), soak_client.*
// (the client threads), soak_run.* (the fake, the server, the load),
// soak_checks.* (the checks once the load is over, and the report).
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "soak/ledger.h"
#include "soak/soak_checks.h"
#include "soak/soak_run.h"

namespace soak {
namespace {

TEST(ChaosSoak, EveryPromiseHoldsUnderRandomFaultsAndMisbehavingClients) {
  const SoakConfig config = ConfigFromEnvironment();
  auto fake = StartChaosFake(config.seed);
  ASSERT_TRUE(fake.ok()) << fake.status();
  ServerUnderTest server;
  ASSERT_NO_FATAL_FAILURE(StartServer((*fake)->base_url(), &server));

  Ledger ledger;
  const LoadRun load = RunLoad(config, &server, &ledger);

  ASSERT_NO_FATAL_FAILURE(ExpectNothingLeftBehind(&server));
  const UpstreamTally upstream =
      CheckUpstreamRequests((*fake)->Requests(), &ledger);
  const RssSummary rss = SummarizeRss(load);
  ExpectRssFlat(rss);
  ExpectCleanExit(&server, load.sighups, &ledger);
  PrintReport(ledger, upstream, load, rss);

  EXPECT_EQ(ledger.violation_count(), 0)
      << absl::StrJoin(ledger.violations(), "\n");
  EXPECT_GT(ledger.count("done"), 0);
  EXPECT_GT(upstream.faults, 0);
}

}  // namespace
}  // namespace soak
