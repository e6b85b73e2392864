// The chaos soak's checks once the load is over (soak_test.cc), and its
// report.
#ifndef VIN_TESTS_SOAK_SOAK_CHECKS_H_
#define VIN_TESTS_SOAK_SOAK_CHECKS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fake_vpic/fake_vpic.h"
#include "soak/ledger.h"
#include "soak/soak_run.h"

namespace soak {

// Nothing left behind: no flight, wake-up, rate wait, window slot or stream
// once every caller is gone (waits up to kAttemptTimeout + 20 s for the
// gauges to reach 0). Fatal failure when the server stops answering its
// metrics port: call it in ASSERT_NO_FATAL_FAILURE.
void ExpectNothingLeftBehind(ServerUnderTest* server);

// What the fake vPIC was asked.
struct UpstreamTally {
  size_t requests = 0;
  int64_t vins_requested = 0;
  std::map<std::string, int64_t> served;  // requests by what they got
  int64_t faults = 0;                     // requests not served "ok"
  int64_t late_requests = 0;              // for a VIN after its caller left
};

// Notes in `ledger` the upstream requests for a VIN after its caller left,
// beyond one attempt already under way and those started before the server
// could know, and every VIN that fails validation yet was sent upstream.
UpstreamTally CheckUpstreamRequests(
    const std::vector<fakevpic::RequestRecord>& log, Ledger* ledger);

struct RssSummary {
  int64_t start = 0, peak = 0, end = 0;
  int64_t mid = 0, late = 0;  // medians of the middle and last thirds
  // The lowest of each: what the server holds between SIGHUP reloads (a
  // reload holds two snapshots for a while, a saw-tooth of some 50 MiB).
  int64_t mid_floor = 0, late_floor = 0;
};
RssSummary SummarizeRss(const LoadRun& load);

// RSS flat after the warm-up: the last third's floor no higher than the
// middle third's (a leak raises the floor; a reload's second snapshot only
// the peaks). Not judged in sanitizer builds.
void ExpectRssFlat(const RssSummary& rss);

// SIGTERM: exit 0, no sanitizer report, one reload logged per SIGHUP.
void ExpectCleanExit(ServerUnderTest* server, int sighups, Ledger* ledger);

void PrintReport(const Ledger& ledger, const UpstreamTally& upstream,
                 const LoadRun& load, const RssSummary& rss);

}  // namespace soak

#endif  // VIN_TESTS_SOAK_SOAK_CHECKS_H_
