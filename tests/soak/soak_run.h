// The chaos soak's set-up and load (soak_test.cc): its length and seed, the
// fake vPIC answering with random faults, the real vin-server in front of
// it, and the load itself (client threads, an RSS sampler, SIGHUP reloads, a
// watchdog for stuck calls).
#ifndef VIN_TESTS_SOAK_SOAK_RUN_H_
#define VIN_TESTS_SOAK_SOAK_RUN_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "fake_vpic/fake_vpic.h"
#include "soak/ledger.h"
#include "testing/subprocess.h"

namespace soak {

inline constexpr int kClientThreads = 8;
inline constexpr absl::Duration kAttemptTimeout = absl::Seconds(1);

struct SoakConfig {
  absl::Duration length;  // of the load
  uint64_t seed;          // of every random choice
};

// VIN_SOAK_SECONDS (default 60) and VIN_SOAK_SEED (default: from the
// clock); prints them.
SoakConfig ConfigFromEnvironment();

// The fake vPIC, answering about half of all requests with a fault drawn at
// random from `seed`.
absl::StatusOr<std::unique_ptr<fakevpic::FakeVpic>> StartChaosFake(
    uint64_t seed);

// The vin-server binary under test.
struct ServerUnderTest {
  testing_util::Subprocess process;
  bool have_snapshot = false;  // it was given the snapshot file
  std::string target;          // its gRPC address
  int metrics_port = 0;
};

// Starts the server in front of the fake at `vpic_base_url` and waits until
// it listens (and has loaded the snapshot, when there is one). Fatal
// failures when it does not come up: call it in ASSERT_NO_FATAL_FAILURE.
void StartServer(const std::string& vpic_base_url, ServerUnderTest* server);

int64_t EnvInt(const char* name, int64_t fallback);
int64_t RssBytes(pid_t pid);  // VmRSS of `pid` in bytes (0 if unreadable)
double Mib(int64_t bytes);

struct RssSample {
  absl::Time time;
  int64_t bytes;
};

struct LoadRun {
  absl::Time start;  // the load's
  absl::Time end;    // when the last client, the sampler and the reloader ended
  std::vector<RssSample> rss;  // the server's, every 250 ms
  int sighups = 0;             // sent to the server
};

// kClientThreads clients (soak_client.h) for config.length, with the
// server's RSS sampled, a SIGHUP 2-4 s in and then every 5-15 s (when it
// has a snapshot), and every call still open 90 s after the end cancelled
// and reported.
LoadRun RunLoad(const SoakConfig& config, ServerUnderTest* server,
                Ledger* ledger);

}  // namespace soak

#endif  // VIN_TESTS_SOAK_SOAK_RUN_H_
