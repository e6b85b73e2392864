#include "soak/soak_run.h"

#include <signal.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "soak/soak_client.h"
#include "testing/eventually.h"

namespace soak {
namespace {

// What the fake answers, by weight: about half of all requests fail.
constexpr char kChaos[] =
    "50*ok,10*503,3*429:1,6*reset,3*hang,6*html,6*truncated,6*sparse,"
    "6*delay:300ms,4*delay:1500ms";

int PortOf(const std::string& line) {
  const size_t at = line.find("(port ");
  return at == std::string::npos ? 0 : std::atoi(line.c_str() + at + 6);
}

std::vector<std::string> ServerArgv(const std::string& vpic_base_url,
                                    bool have_snapshot) {
  std::vector<std::string> argv = {
      VIN_SERVER_BIN,
      "--listen=127.0.0.1:0",
      "--metrics_listen=127.0.0.1:0",
      "--vpic_base_url=" + vpic_base_url,
      "--attempt_timeout=" + absl::FormatDuration(kAttemptTimeout),
      "--retry_base=50ms",
      "--retry_cap=1s",
      "--retry_after_max=2s",
      "--upstream_rate=6000",
      "--upstream_burst=20",
      "--cache_capacity=2000",
      "--batch_window=64",
      "--shutdown_grace=5s",
      "--log_level=info"};
  if (have_snapshot) argv.push_back(std::string("--snapshot_path=") + VIN_SNAPSHOT_PATH);
  return argv;
}

// RSS, every 250 ms, until `over`.
class RssSampler {
 public:
  RssSampler(pid_t pid, const std::atomic<bool>* over)
      : thread_([this, pid, over] {
          while (!over->load()) {
            const int64_t bytes = RssBytes(pid);
            {
              absl::MutexLock lock(&mu_);
              samples_.push_back({absl::Now(), bytes});
            }
            absl::SleepFor(absl::Milliseconds(250));
          }
        }) {}

  // Waits for the sampler to end and returns its samples.
  std::vector<RssSample> Join() {
    thread_.join();
    absl::MutexLock lock(&mu_);
    return std::move(samples_);
  }

 private:
  absl::Mutex mu_;
  std::vector<RssSample> samples_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;  // last: starts once the rest is built
};

// SIGHUP 2-4 s in (so that the warm-up holds a reload: the first one
// leaves the old index's memory to the allocator), then every 5-15 s, until
// `end`. Counts them in `sighups`.
std::thread StartReloader(uint64_t seed, absl::Time end,
                          ServerUnderTest* server, int* sighups) {
  return std::thread([seed, end, server, sighups] {
    std::mt19937_64 rng(seed + 1);
    while (server->have_snapshot) {
      const absl::Time next =
          absl::Now() +
          absl::Milliseconds(std::uniform_int_distribution<int>(
              *sighups == 0 ? 2000 : 5000, *sighups == 0 ? 4000 : 15000)(rng));
      if (next >= end) break;
      absl::SleepFor(next - absl::Now());
      // The server has taken the last one (a SIGHUP sent while another
      // waits merges with it: a reload slower than the interval, as in a
      // TSan build, would otherwise count fewer reloads than signals).
      if (!server->process.WaitForLines("SIGHUP received", *sighups, end) ||
          absl::Now() >= end) {
        break;
      }
      server->process.Signal(SIGHUP);
      ++*sighups;
    }
  });
}

// Every client ends its last call soon after `end`: its streams end when
// their items do (the retry policy bounds each), so a call still open well
// after that is stuck; it is cancelled and reported.
std::thread StartWatchdog(absl::Time end, const std::atomic<int>* clients_done,
                          LiveCalls* live, Ledger* ledger) {
  return std::thread([end, clients_done, live, ledger] {
    testing_util::Eventually(
        [&] { return clients_done->load() >= kClientThreads; },
        end + absl::Seconds(90) - absl::Now(), absl::Milliseconds(100));
    if (clients_done->load() < kClientThreads) {
      ledger->Violation(absl::StrCat(live->CancelAll(),
                                     " calls still open 90 s after the load "
                                     "ended (cancelled)"));
    }
  });
}

}  // namespace

int64_t EnvInt(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  int64_t out = 0;
  return v != nullptr && absl::SimpleAtoi(v, &out) ? out : fallback;
}

int64_t RssBytes(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      int64_t kb = 0;
      std::string digits;
      for (char c : line) {
        if (c >= '0' && c <= '9') digits += c;
      }
      if (absl::SimpleAtoi(digits, &kb)) return kb * 1024;
    }
  }
  return 0;
}

double Mib(int64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

SoakConfig ConfigFromEnvironment() {
  SoakConfig config;
  config.length = absl::Seconds(EnvInt("VIN_SOAK_SECONDS", 60));
  config.seed = static_cast<uint64_t>(
      EnvInt("VIN_SOAK_SEED", absl::ToUnixMicros(absl::Now()) % 1000000));
  std::printf("soak: %s of load, seed %llu (VIN_SOAK_SEED=%llu repeats it)\n",
              absl::FormatDuration(config.length).c_str(),
              static_cast<unsigned long long>(config.seed),
              static_cast<unsigned long long>(config.seed));
  return config;
}

absl::StatusOr<std::unique_ptr<fakevpic::FakeVpic>> StartChaosFake(
    uint64_t seed) {
  fakevpic::Options fake_options;
  auto chaos = fakevpic::WeightedStep::ParseList(kChaos);
  if (!chaos.ok()) return chaos.status();
  fake_options.chaos = *std::move(chaos);
  fake_options.chaos_seed = seed;
  return fakevpic::FakeVpic::Start(std::move(fake_options));
}

void StartServer(const std::string& vpic_base_url, ServerUnderTest* server) {
  server->have_snapshot = std::ifstream(VIN_SNAPSHOT_PATH).good();
  testing_util::Subprocess& process = server->process;
  // Per-decode and per-retry lines are many and are not kept; every other
  // line is (the start, reloads, pushback, errors, a sanitizer's report).
  process.KeepLinesMatching(R"(^(?!\S+ (info|warn) (decode|retry) ))");
  ASSERT_TRUE(process.Start(ServerArgv(vpic_base_url, server->have_snapshot)));
  const auto listening = process.WaitForLine("listening on", absl::Seconds(60));
  ASSERT_TRUE(listening) << absl::StrJoin(process.lines(), "\n");
  const auto metrics_line = process.WaitForLine("metrics on", absl::Seconds(10));
  ASSERT_TRUE(metrics_line);
  server->target = absl::StrCat("127.0.0.1:", PortOf(*listening));
  server->metrics_port = PortOf(*metrics_line);
  if (server->have_snapshot) {
    ASSERT_TRUE(process.WaitForLine("offline snapshot loaded", absl::Seconds(60)));
  }
}

LoadRun RunLoad(const SoakConfig& config, ServerUnderTest* server,
                Ledger* ledger) {
  LiveCalls live;
  std::atomic<uint64_t> next_distinct{0};
  LoadRun run;
  run.start = absl::Now();
  const absl::Time end = run.start + config.length;

  std::atomic<bool> load_over{false};
  RssSampler sampler(server->process.pid(), &load_over);
  std::thread reloader = StartReloader(config.seed, end, server, &run.sighups);
  std::vector<std::thread> clients;
  for (int i = 0; i < kClientThreads; ++i) {
    clients.emplace_back([&, i] {
      Client(config.seed * 31 + static_cast<uint64_t>(i), i, server->target,
             &next_distinct, ledger, &live, end)
          .Run();
    });
  }
  std::atomic<int> clients_done{0};
  std::thread watchdog = StartWatchdog(end, &clients_done, &live, ledger);
  for (std::thread& t : clients) {
    t.join();
    ++clients_done;
  }
  watchdog.join();
  reloader.join();
  load_over = true;
  run.rss = sampler.Join();
  run.end = absl::Now();
  return run;
}

}  // namespace soak
