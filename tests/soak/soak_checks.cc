#include "soak/soak_checks.h"

#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "testing/eventually.h"
#include "testing/scrape.h"

namespace soak {
namespace {

// How long a caller's leaving may take to reach the engine (through gRPC and
// the engine's loop): an attempt started meanwhile is not a violation.
// Sanitizer builds run many times slower.
#ifdef VIN_SANITIZED
const absl::Duration kLeaveNoticed = absl::Seconds(2);
#else
const absl::Duration kLeaveNoticed = absl::Milliseconds(250);
#endif

int64_t Median(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

void PrintCounts(const Ledger& ledger, const UpstreamTally& upstream,
                 int sighups) {
  const auto counts = ledger.counts();
  int64_t unary = 0, streams = 0;
  for (const auto& [k, v] : counts) {
    if (k.rfind("unary ", 0) == 0) unary += v;
    if (k.rfind("stream ", 0) == 0 && k != "stream items") streams += v;
  }
  std::printf(
      "soak: items %lld (unary %lld, %lld streams with %lld items, vinctl "
      "%lld items), events %lld, done %lld, retrying %lld\n",
      static_cast<long long>(unary + ledger.count("stream items") +
                             ledger.count("vinctl items")),
      static_cast<long long>(unary), static_cast<long long>(streams),
      static_cast<long long>(ledger.count("stream items")),
      static_cast<long long>(ledger.count("vinctl items")),
      static_cast<long long>(ledger.count("events")),
      static_cast<long long>(ledger.count("done")),
      static_cast<long long>(ledger.count("retrying events")));
  std::printf("soak: upstream requests %zu (%lld VINs), faults injected %lld:",
              upstream.requests, static_cast<long long>(upstream.vins_requested),
              static_cast<long long>(upstream.faults));
  for (const auto& [k, v] : upstream.served) {
    std::printf(" %s=%lld", k.c_str(), static_cast<long long>(v));
  }
  std::printf("\nsoak: requests after a caller left %lld (over %zu VINs left), "
              "SIGHUP reloads %d\n",
              static_cast<long long>(upstream.late_requests),
              ledger.left().size(), sighups);
  std::printf("soak: calls:");
  for (const auto& [k, v] : counts) {
    if (k.rfind("unary ", 0) == 0 || k.rfind("stream ", 0) == 0 ||
        k.rfind("failed ", 0) == 0 || k.rfind("vinctl ", 0) == 0) {
      std::printf(" [%s]=%lld", k.c_str(), static_cast<long long>(v));
    }
  }
  std::printf("\n");
}

void PrintRss(const LoadRun& load, const RssSummary& rss) {
  std::printf(
      "soak: server RSS start %.1f MiB, peak %.1f MiB, end %.1f MiB "
      "(medians: middle third %.1f, last third %.1f; floors %.1f, "
      "%.1f)\n",
      Mib(rss.start), Mib(rss.peak), Mib(rss.end), Mib(rss.mid), Mib(rss.late),
      Mib(rss.mid_floor), Mib(rss.late_floor));
  // The RSS trajectory: the sample nearest each tenth of the run.
  std::printf("soak: server RSS by tenths of the run (MiB):");
  for (int tenth = 0; tenth <= 10 && !load.rss.empty(); ++tenth) {
    const size_t i = std::min(load.rss.size() - 1, load.rss.size() * tenth / 10);
    std::printf(" %.0f", Mib(load.rss[i].bytes));
  }
  std::printf("\n");
}

}  // namespace

void ExpectNothingLeftBehind(ServerUnderTest* server) {
  // A hung attempt ends within its timeout; the bound is generous for a
  // loaded machine.
  const std::vector<std::string> gauges = {
      "vin_flights_in_progress", "vin_scheduler_pending",
      "vin_waiting_for_rate", "vin_batch_items_in_window",
      "vin_batch_streams_open"};
  testing_util::Samples samples;
  bool answered = true;
  testing_util::Eventually(
      [&] {
        std::string body;
        answered = testing_util::HttpGet(server->metrics_port, "/metrics",
                                         &body) == 200;
        if (!answered) return true;  // nothing more to wait for
        samples = testing_util::ParseSamples(body);
        bool settled = true;
        for (const std::string& g : gauges) {
          settled = settled && samples.count(g) == 1 && samples[g] == 0;
        }
        return settled;
      },
      kAttemptTimeout + absl::Seconds(20), absl::Milliseconds(100));
  if (!answered) {
    const absl::optional<int> exit = server->process.Wait(absl::Seconds(5));
    FAIL() << "the server does not answer its metrics port (exit "
           << (exit ? absl::StrCat(*exit) : std::string("none yet"))
           << "); its output:\n"
           << absl::StrJoin(server->process.lines(), "\n");
  }
  for (const std::string& g : gauges) {
    EXPECT_EQ(testing_util::Sum(samples, g), 0) << g << " at the end";
    EXPECT_EQ(samples.count(g), 1u) << g << " is not exported";
  }
}

UpstreamTally CheckUpstreamRequests(
    const std::vector<fakevpic::RequestRecord>& log, Ledger* ledger) {
  UpstreamTally tally;
  tally.requests = log.size();
  std::unordered_map<std::string, std::vector<absl::Time>> asked;
  for (const fakevpic::RequestRecord& r : log) {
    ++tally.served[r.served];
    if (r.is_batch()) {
      for (const auto& [vin, year] : r.batch) asked[vin].push_back(r.time);
      tally.vins_requested += static_cast<int64_t>(r.batch.size());
    } else if (!r.vin.empty()) {
      asked[r.vin].push_back(r.time);
      ++tally.vins_requested;
    }
  }
  for (const auto& [k, v] : tally.served) tally.faults += k == "ok" ? 0 : v;
  for (const auto& [vin, left] : ledger->left()) {
    auto it = asked.find(vin);
    if (it == asked.end()) continue;
    const auto after = std::count_if(it->second.begin(), it->second.end(),
                                     [&](absl::Time t) { return t > left; });
    const auto noticed_after =
        std::count_if(it->second.begin(), it->second.end(),
                      [&](absl::Time t) { return t > left + kLeaveNoticed; });
    tally.late_requests += after;
    if (after > 1 && noticed_after > 0) {
      ledger->Violation(absl::StrCat(after, " upstream requests for ", vin,
                                     " after its caller left"));
    }
  }
  for (const std::string& vin : ledger->invalid()) {
    if (asked.count(vin) != 0) {
      ledger->Violation("invalid VIN " + vin + " was sent upstream");
    }
  }
  return tally;
}

// After a warm-up of the first third, the last third is not above the
// middle one (medians, with room for allocator noise and a snapshot being
// reloaded).
RssSummary SummarizeRss(const LoadRun& load) {
  RssSummary rss;
  std::vector<int64_t> mid, late;
  for (const RssSample& s : load.rss) {
    rss.peak = std::max(rss.peak, s.bytes);
    const double at = absl::FDivDuration(s.time - load.start, load.end - load.start);
    if (at >= 1.0 / 3 && at < 2.0 / 3) mid.push_back(s.bytes);
    if (at >= 2.0 / 3) late.push_back(s.bytes);
  }
  if (!load.rss.empty()) {
    rss.start = load.rss.front().bytes;
    rss.end = load.rss.back().bytes;
  }
  rss.mid = Median(mid);
  rss.late = Median(late);
  if (!mid.empty()) rss.mid_floor = *std::min_element(mid.begin(), mid.end());
  if (!late.empty()) {
    rss.late_floor = *std::min_element(late.begin(), late.end());
  }
  return rss;
}

// Sanitizer builds measure their own shadow memory and quarantine, not the
// server's: the numbers are printed, not judged.
void ExpectRssFlat(const RssSummary& rss) {
#ifndef VIN_SANITIZED
  EXPECT_LE(rss.late_floor,
            rss.mid_floor + rss.mid_floor / 10 + (int64_t{8} << 20))
      << "server RSS grew after the warm-up: middle third's floor "
      << Mib(rss.mid_floor) << " MiB, last third's " << Mib(rss.late_floor)
      << " MiB";
#else
  (void)rss;
#endif
}

void ExpectCleanExit(ServerUnderTest* server, int sighups, Ledger* ledger) {
  testing_util::Subprocess& process = server->process;
  process.Signal(SIGTERM);
  const absl::optional<int> exit = process.Wait(absl::Seconds(30));
  EXPECT_EQ(exit, 0) << absl::StrJoin(process.lines(), "\n");
  for (const std::string& line : process.lines()) {
    if (line.find("Sanitizer") != std::string::npos ||
        line.find("runtime error") != std::string::npos) {
      ledger->Violation("server: " + line);
    }
  }
  if (server->have_snapshot) {
    int reloaded = 0;
    for (const std::string& line : process.lines()) {
      reloaded += line.find("SIGHUP received") != std::string::npos;
    }
    EXPECT_EQ(reloaded, sighups) << "SIGHUPs sent vs reloads the server logged";
  }
}

void PrintReport(const Ledger& ledger, const UpstreamTally& upstream,
                 const LoadRun& load, const RssSummary& rss) {
  PrintCounts(ledger, upstream, load.sighups);
  PrintRss(load, rss);
  std::printf("soak: violations %lld\n",
              static_cast<long long>(ledger.violation_count()));
  std::fflush(stdout);
}

}  // namespace soak
