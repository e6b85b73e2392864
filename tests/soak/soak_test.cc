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
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "fake_vpic/fake_vpic.h"
#include "gtest/gtest.h"
#include "testing/scrape.h"
#include "testing/subprocess.h"
#include "testing/vin_gen.h"
#include "vin/v1/vin.grpc.pb.h"

namespace {

using vin::v1::DecodeBatchRequest;
using vin::v1::DecodeBatchResponse;
using vin::v1::FailureReason;

// What the fake answers, by weight: about half of all requests fail.
constexpr char kChaos[] =
    "50*ok,10*503,3*429:1,6*reset,3*hang,6*html,6*truncated,6*sparse,"
    "6*delay:300ms,4*delay:1500ms";
constexpr int kPoolSize = 300;       // VINs many callers ask for
constexpr int kClientThreads = 8;
const absl::Duration kAttemptTimeout = absl::Seconds(1);
// How long a caller's leaving may take to reach the engine (through gRPC and
// the engine's loop): an attempt started meanwhile is not a violation.
// Sanitizer builds run many times slower.
#ifdef VIN_SANITIZED
const absl::Duration kLeaveNoticed = absl::Seconds(2);
#else
const absl::Duration kLeaveNoticed = absl::Milliseconds(250);
#endif

int64_t EnvInt(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  int64_t out = 0;
  return v != nullptr && absl::SimpleAtoi(v, &out) ? out : fallback;
}

// VmRSS of `pid` in bytes (0 when it cannot be read).
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

int PortOf(const std::string& line) {
  const size_t at = line.find("(port ");
  return at == std::string::npos ? 0 : std::atoi(line.c_str() + at + 6);
}

double Mib(int64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

// Everything the load saw, and every violation of a promise.
class Ledger {
 public:
  void Violation(std::string what) {
    absl::MutexLock lock(&mu_);
    if (violations_.size() < 50) violations_.push_back(std::move(what));
    ++violation_count_;
  }
  // The caller of `vin` (a VIN no one else asks for) left at `when`.
  void Left(const std::string& vin, absl::Time when) {
    absl::MutexLock lock(&mu_);
    left_.emplace_back(vin, when);
  }
  void Count(const std::string& what, int64_t n = 1) {
    absl::MutexLock lock(&mu_);
    counts_[what] += n;
  }
  void NeverAsked(const std::string& vin) {
    absl::MutexLock lock(&mu_);
    invalid_.insert(vin);
  }

  std::vector<std::pair<std::string, absl::Time>> left() const {
    absl::MutexLock lock(&mu_);
    return left_;
  }
  std::set<std::string> invalid() const {
    absl::MutexLock lock(&mu_);
    return invalid_;
  }
  std::map<std::string, int64_t> counts() const {
    absl::MutexLock lock(&mu_);
    return counts_;
  }
  int64_t violation_count() const {
    absl::MutexLock lock(&mu_);
    return violation_count_;
  }
  std::vector<std::string> violations() const {
    absl::MutexLock lock(&mu_);
    return violations_;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<std::string> violations_ ABSL_GUARDED_BY(mu_);
  int64_t violation_count_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::pair<std::string, absl::Time>> left_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> invalid_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int64_t> counts_ ABSL_GUARDED_BY(mu_);
};

// The contexts of calls under way, so that a stuck one can be cancelled
// (and reported) instead of hanging the test.
class LiveCalls {
 public:
  void Add(grpc::ClientContext* c) {
    absl::MutexLock lock(&mu_);
    calls_.insert(c);
  }
  void Remove(grpc::ClientContext* c) {
    absl::MutexLock lock(&mu_);
    calls_.erase(c);
  }
  int CancelAll() {
    absl::MutexLock lock(&mu_);
    for (grpc::ClientContext* c : calls_) c->TryCancel();
    return static_cast<int>(calls_.size());
  }

 private:
  absl::Mutex mu_;
  std::set<grpc::ClientContext*> calls_ ABSL_GUARDED_BY(mu_);
};

// One client thread: picks a behaviour at random until the load ends.
class Client {
 public:
  Client(uint64_t seed, int index, const std::string& target,
         std::atomic<uint64_t>* next_distinct, Ledger* ledger,
         LiveCalls* live, absl::Time end)
      : rng_(seed),
        index_(index),
        target_(target),
        next_distinct_(next_distinct),
        ledger_(ledger),
        live_(live),
        end_(end) {
    // Each thread its own channel (and connection), as separate services.
    grpc::ChannelArguments args;
    args.SetInt("soak.client", index);
    stub_ = vin::v1::VinDecoderService::NewStub(grpc::CreateCustomChannel(
        target, grpc::InsecureChannelCredentials(), args));
  }

  void Run() {
    while (absl::Now() < end_) {
      const int pick = Uniform(0, 99);
      if (pick < 30) {
        for (int n = Uniform(5, 40); n > 0 && absl::Now() < end_; --n) Unary();
      } else if (pick < 45) {
        Stream(Kind::kHalfClose);
      } else if (pick < 57) {
        Stream(Kind::kSlowReader);
      } else if (pick < 72) {
        Stream(Kind::kCancel);
      } else if (pick < 82) {
        Stream(Kind::kNoDeadline);
      } else if (pick < 92) {
        Stream(Kind::kShortDeadline);
      } else {
        KilledVinctl();
      }
    }
  }

 private:
  enum class Kind { kHalfClose, kSlowReader, kCancel, kNoDeadline, kShortDeadline };

  struct Item {
    std::string vin;
    enum class Type { kPool, kDistinct, kInvalid } type;
    vin::v1::SourcePreference source = vin::v1::SOURCE_PREFERENCE_LIVE_ONLY;
  };

  int Uniform(int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng_);
  }

  Item NextItem() {
    const int pick = Uniform(0, 99);
    if (pick < 5) {
      // A check digit that is wrong: fails local validation.
      std::string v = testing_util::ValidVin(
          900000 + static_cast<uint64_t>(Uniform(0, 99999)));
      v[8] = v[8] == 'X' ? '0' : (v[8] == '9' ? 'X' : static_cast<char>(v[8] + 1));
      ledger_->NeverAsked(v);
      return {v, Item::Type::kInvalid};
    }
    if (pick < 55) {
      return {testing_util::ValidVin(static_cast<uint64_t>(Uniform(0, kPoolSize - 1))),
              Item::Type::kPool};
    }
    // Distinct: a VIN no other call asks for (serials from 1,000 up, in
    // other WMI-positions blocks for every 10^6).
    const uint64_t n = next_distinct_->fetch_add(1);
    return {testing_util::ValidVin(1000 + n % 899000 + (n / 899000) * 1000000),
            Item::Type::kDistinct};
  }

  vin::v1::SourcePreference NextSource() {
    const int pick = Uniform(0, 9);
    if (pick < 7) return vin::v1::SOURCE_PREFERENCE_LIVE_ONLY;
    if (pick < 9) return vin::v1::SOURCE_PREFERENCE_LIVE_THEN_SNAPSHOT;
    return vin::v1::SOURCE_PREFERENCE_SNAPSHOT_ONLY;
  }

  void Unary() {
    const Item item = NextItem();
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(
        absl::Now() + absl::Milliseconds(Uniform(20, 2000))));
    vin::v1::DecodeRequest req;
    req.set_vin(item.vin);
    req.set_source_preference(NextSource());
    vin::v1::DecodeResponse resp;
    const grpc::Status status = stub_->Decode(&ctx, req, &resp);
    const absl::Time returned = absl::Now();
    ledger_->Count(absl::StrCat("unary ", StatusName(status.error_code())));
    if (item.type == Item::Type::kDistinct) ledger_->Left(item.vin, returned);
    const bool invalid = item.type == Item::Type::kInvalid;
    // An invalid VIN is INVALID_ARGUMENT, unless the caller's deadline (as
    // short as 20 ms) passed first; a valid one never is.
    const bool rejected =
        status.error_code() == grpc::StatusCode::INVALID_ARGUMENT;
    if (invalid ? !rejected && status.error_code() !=
                                   grpc::StatusCode::DEADLINE_EXCEEDED
                : rejected) {
      ledger_->Violation(absl::StrCat("unary ", item.vin, ": status ",
                                      status.error_code(), " ",
                                      status.error_message()));
    }
    if (status.ok()) CheckResult(resp.result(), item.vin, "unary");
  }

  // A DONE result is the VIN asked for, from a real source, and what the fake
  // says of it (the generated Honda, or nothing for a sparse answer).
  void CheckResult(const vin::v1::DecodeResult& r, const std::string& vin,
                   const std::string& where) {
    const std::string& make = r.vehicle().make();
    if (r.vin() != vin || r.source() == vin::v1::SOURCE_UNSPECIFIED ||
        (r.source() != vin::v1::SOURCE_SNAPSHOT && !make.empty() &&
         make != "HONDA")) {
      ledger_->Violation(absl::StrCat(where, ": result for ", vin, " is ",
                                      r.ShortDebugString()));
    }
  }

  static std::string StatusName(grpc::StatusCode code) {
    return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
  }

  static const char* KindName(Kind kind) {
    switch (kind) {
      case Kind::kHalfClose: return "half-close";
      case Kind::kSlowReader: return "slow-reader";
      case Kind::kCancel: return "cancel";
      case Kind::kNoDeadline: return "no-deadline";
      case Kind::kShortDeadline: return "short-deadline";
    }
    return "?";
  }

  void Stream(Kind kind) {
    std::vector<Item> items(static_cast<size_t>(Uniform(1, 120)));
    for (Item& item : items) {
      item = NextItem();
      item.source = NextSource();
    }
    grpc::ClientContext ctx;
    if (kind == Kind::kShortDeadline) {
      ctx.set_deadline(absl::ToChronoTime(
          absl::Now() + absl::Milliseconds(Uniform(300, 3000))));
    } else if (kind != Kind::kNoDeadline) {
      ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(120)));
    }
    live_->Add(&ctx);
    auto stream = stub_->DecodeBatch(&ctx);
    // A cancelling client never half-closes: it leaves after reading
    // `cancel_after` events (each item has at least one, so they come).
    const bool half_close = kind != Kind::kCancel;
    const size_t cancel_after = static_cast<size_t>(
        Uniform(1, static_cast<int>(items.size())));
    const size_t pause_after = static_cast<size_t>(
        Uniform(0, static_cast<int>(items.size())));
    std::thread writer([&] {
      for (size_t i = 0; i < items.size(); ++i) {
        DecodeBatchRequest req;
        req.set_request_id(absl::StrCat(i));
        req.set_vin(items[i].vin);
        req.set_source_preference(items[i].source);
        if (!stream->Write(req)) return;
      }
      if (half_close) stream->WritesDone();
    });

    // Per item: events seen, and whether a terminal one came.
    std::vector<int> events(items.size(), 0);
    std::vector<bool> terminal(items.size(), false);
    size_t read = 0;
    absl::Time left = absl::InfiniteFuture();
    DecodeBatchResponse resp;
    const std::string where = absl::StrCat(KindName(kind), " stream ", index_);
    while (stream->Read(&resp)) {
      ++read;
      size_t i = 0;
      if (!absl::SimpleAtoi(resp.request_id(), &i) || i >= items.size()) {
        ledger_->Violation(absl::StrCat(where, ": event for unknown item \"",
                                        resp.request_id(), "\""));
        continue;
      }
      CheckEvent(resp, items[i], events[i], terminal[i], where);
      ++events[i];
      if (resp.has_done() || resp.has_failed()) terminal[i] = true;
      if (kind == Kind::kCancel && read == cancel_after) {
        ctx.TryCancel();
        left = absl::Now();
      }
      if (kind == Kind::kSlowReader && read == pause_after) {
        // The client stops reading for a while (its behaviour, not a wait
        // for the server).
        absl::SleepFor(absl::Milliseconds(Uniform(500, 3000)));
      }
    }
    writer.join();
    const grpc::Status status = stream->Finish();
    live_->Remove(&ctx);
    if (left == absl::InfiniteFuture()) left = absl::Now();
    ledger_->Count(absl::StrCat("stream ", KindName(kind), " ",
                                StatusName(status.error_code())));
    ledger_->Count("events", static_cast<int64_t>(read));
    ledger_->Count("stream items", static_cast<int64_t>(items.size()));
    for (size_t i = 0; i < items.size(); ++i) {
      if (items[i].type == Item::Type::kDistinct) {
        ledger_->Left(items[i].vin, left);
      }
      if (status.ok() && !terminal[i]) {
        ledger_->Violation(absl::StrCat(where, ": item ", i, " (",
                                        items[i].vin,
                                        ") has no terminal event, stream OK"));
      }
    }
    // An OK end is only for a stream whose every item finished; a client
    // that left sees its own status.
    if (kind == Kind::kCancel && !status.ok() &&
        status.error_code() != grpc::StatusCode::CANCELLED) {
      ledger_->Violation(absl::StrCat(where, ": ended ", status.error_code(),
                                      " ", status.error_message()));
    }
    if ((kind == Kind::kHalfClose || kind == Kind::kSlowReader ||
         kind == Kind::kNoDeadline) &&
        !status.ok()) {
      ledger_->Violation(absl::StrCat(where, ": ended ", status.error_code(),
                                      " ", status.error_message()));
    }
    if (kind == Kind::kShortDeadline && !status.ok() &&
        status.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED) {
      ledger_->Violation(absl::StrCat(where, ": ended ", status.error_code(),
                                      " ", status.error_message()));
    }
  }

  void CheckEvent(const DecodeBatchResponse& resp, const Item& item,
                  int seen, bool terminal, const std::string& where) {
    const std::string what =
        absl::StrCat(where, ": item ", resp.request_id(), " (", item.vin, ") ");
    if (terminal) {
      ledger_->Violation(what + "event after its terminal one: " +
                         resp.ShortDebugString());
      return;
    }
    if (resp.vin() != item.vin) {
      ledger_->Violation(what + "event names another VIN: " + resp.vin());
    }
    const bool invalid = item.type == Item::Type::kInvalid;
    if (seen == 0 && !resp.has_queued()) {
      // Only an item failed at once (local validation, overload) skips
      // QUEUED.
      const FailureReason reason =
          resp.has_failed() ? resp.failed().reason()
                            : vin::v1::FAILURE_REASON_UNSPECIFIED;
      if (reason != vin::v1::FAILURE_REASON_INVALID_VIN &&
          reason != vin::v1::FAILURE_REASON_OVERLOADED) {
        ledger_->Violation(what + "first event is not QUEUED: " +
                           resp.ShortDebugString());
      }
    }
    if (invalid && !(resp.has_failed() &&
                     resp.failed().reason() == vin::v1::FAILURE_REASON_INVALID_VIN)) {
      ledger_->Violation(what + "invalid VIN not failed INVALID_VIN: " +
                         resp.ShortDebugString());
    }
    if (!invalid && resp.has_failed() &&
        resp.failed().reason() == vin::v1::FAILURE_REASON_INVALID_VIN) {
      ledger_->Violation(what + "valid VIN failed INVALID_VIN");
    }
    if (resp.has_done()) CheckResult(resp.done().result(), item.vin, what);
    if (resp.has_failed()) {
      ledger_->Count(absl::StrCat("failed ", vin::v1::FailureReason_Name(
                                                 resp.failed().reason())));
    }
    if (resp.has_done()) ledger_->Count("done");
    if (resp.has_retrying()) ledger_->Count("retrying events");
  }

  // vinctl streams a feed and is killed mid-stream: the server sees its
  // connection drop without a goodbye.
  void KilledVinctl() {
    std::vector<Item> items(static_cast<size_t>(Uniform(20, 200)));
    const std::string feed = absl::StrCat(testing::TempDir(), "/soak-feed-",
                                          getpid(), "-", index_, ".txt");
    {
      std::ofstream out(feed, std::ios::trunc);
      for (Item& item : items) {
        item = NextItem();
        out << item.vin << "\n";
      }
    }
    testing_util::Subprocess vinctl;
    vinctl.DiscardLines();  // its output is not read
    if (!vinctl.Start({VINCTL_BIN, "batch", "--in=" + feed, "--out=/dev/null",
                       "--server=" + target_})) {
      ledger_->Violation("cannot start vinctl");
      return;
    }
    // How long the client lives is its behaviour, not a wait for the server.
    absl::SleepFor(absl::Milliseconds(Uniform(100, 2500)));
    vinctl.Signal(SIGKILL);
    const absl::optional<int> exit = vinctl.Wait(absl::Seconds(30));
    const absl::Time left = absl::Now();
    ledger_->Count(exit == -SIGKILL ? "vinctl killed" : "vinctl finished first");
    ledger_->Count("vinctl items", static_cast<int64_t>(items.size()));
    for (const Item& item : items) {
      if (item.type == Item::Type::kDistinct) ledger_->Left(item.vin, left);
    }
    std::remove(feed.c_str());
  }

  std::mt19937_64 rng_;  // the client thread's only (not its writer's)
  const int index_;
  const std::string target_;
  std::atomic<uint64_t>* next_distinct_;
  Ledger* ledger_;
  LiveCalls* live_;
  const absl::Time end_;
  std::unique_ptr<vin::v1::VinDecoderService::Stub> stub_;
};

struct RssSample {
  absl::Time time;
  int64_t bytes;
};

int64_t Median(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

TEST(ChaosSoak, EveryPromiseHoldsUnderRandomFaultsAndMisbehavingClients) {
  const absl::Duration length = absl::Seconds(EnvInt("VIN_SOAK_SECONDS", 60));
  const uint64_t seed = static_cast<uint64_t>(
      EnvInt("VIN_SOAK_SEED", absl::ToUnixMicros(absl::Now()) % 1000000));
  std::printf("soak: %s of load, seed %llu (VIN_SOAK_SEED=%llu repeats it)\n",
              absl::FormatDuration(length).c_str(),
              static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(seed));

  fakevpic::Options fake_options;
  auto chaos = fakevpic::WeightedStep::ParseList(kChaos);
  ASSERT_TRUE(chaos.ok()) << chaos.status();
  fake_options.chaos = *std::move(chaos);
  fake_options.chaos_seed = seed;
  auto fake = fakevpic::FakeVpic::Start(std::move(fake_options));
  ASSERT_TRUE(fake.ok()) << fake.status();

  const bool have_snapshot = std::ifstream(VIN_SNAPSHOT_PATH).good();
  std::vector<std::string> argv = {
      VIN_SERVER_BIN,
      "--listen=127.0.0.1:0",
      "--metrics_listen=127.0.0.1:0",
      "--vpic_base_url=" + (*fake)->base_url(),
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
  testing_util::Subprocess server;
  // Per-decode and per-retry lines are many and are not kept; every other
  // line is (the start, reloads, pushback, errors, a sanitizer's report).
  server.KeepLinesMatching(R"(^(?!\S+ (info|warn) (decode|retry) ))");
  ASSERT_TRUE(server.Start(argv));
  const auto listening = server.WaitForLine("listening on", absl::Seconds(60));
  ASSERT_TRUE(listening) << absl::StrJoin(server.lines(), "\n");
  const auto metrics_line = server.WaitForLine("metrics on", absl::Seconds(10));
  ASSERT_TRUE(metrics_line);
  const std::string target = absl::StrCat("127.0.0.1:", PortOf(*listening));
  const int metrics_port = PortOf(*metrics_line);
  if (have_snapshot) {
    ASSERT_TRUE(server.WaitForLine("offline snapshot loaded", absl::Seconds(60)));
  }

  Ledger ledger;
  LiveCalls live;
  std::atomic<uint64_t> next_distinct{0};
  const absl::Time start = absl::Now();
  const absl::Time end = start + length;

  // RSS, every 250 ms, until the load is over.
  std::vector<RssSample> rss;
  absl::Mutex rss_mu;
  std::atomic<bool> load_over{false};
  std::thread sampler([&] {
    while (!load_over.load()) {
      const int64_t bytes = RssBytes(server.pid());
      {
        absl::MutexLock lock(&rss_mu);
        rss.push_back({absl::Now(), bytes});
      }
      absl::SleepFor(absl::Milliseconds(250));
    }
  });
  // SIGHUP 2-4 s in (so that the warm-up holds a reload: the first one
  // leaves the old index's memory to the allocator), then every 5-15 s.
  int sighups = 0;
  std::thread reloader([&] {
    std::mt19937_64 rng(seed + 1);
    while (have_snapshot) {
      const absl::Time next =
          absl::Now() +
          absl::Milliseconds(std::uniform_int_distribution<int>(
              sighups == 0 ? 2000 : 5000, sighups == 0 ? 4000 : 15000)(rng));
      if (next >= end) break;
      absl::SleepFor(next - absl::Now());
      server.Signal(SIGHUP);
      ++sighups;
    }
  });

  std::vector<std::thread> clients;
  for (int i = 0; i < kClientThreads; ++i) {
    clients.emplace_back([&, i] {
      Client(seed * 31 + static_cast<uint64_t>(i), i, target, &next_distinct,
             &ledger, &live, end)
          .Run();
    });
  }
  // Every client ends its last call soon after `end`: its streams end when
  // their items do (the retry policy bounds each), so a call still open
  // well after that is stuck; it is cancelled and reported.
  std::atomic<int> clients_done{0};
  std::thread watchdog([&] {
    const absl::Time give_up = end + absl::Seconds(90);
    while (clients_done.load() < kClientThreads && absl::Now() < give_up) {
      absl::SleepFor(absl::Milliseconds(100));
    }
    if (clients_done.load() < kClientThreads) {
      ledger.Violation(absl::StrCat(live.CancelAll(),
                                    " calls still open 90 s after the load "
                                    "ended (cancelled)"));
    }
  });
  for (std::thread& t : clients) {
    t.join();
    ++clients_done;
  }
  watchdog.join();
  reloader.join();
  load_over = true;
  sampler.join();
  const absl::Time load_end = absl::Now();

  // Nothing left behind: no flight, wake-up, rate wait, window slot or
  // stream once every caller is gone (a hung attempt ends within its
  // timeout; the bound is generous for a loaded machine).
  const std::vector<std::string> gauges = {
      "vin_flights_in_progress", "vin_scheduler_pending",
      "vin_waiting_for_rate", "vin_batch_items_in_window",
      "vin_batch_streams_open"};
  testing_util::Samples samples;
  bool settled = false;
  const absl::Time settle_by = absl::Now() + kAttemptTimeout + absl::Seconds(20);
  while (!settled && absl::Now() < settle_by) {
    std::string body;
    if (testing_util::HttpGet(metrics_port, "/metrics", &body) != 200) {
      const absl::optional<int> exit = server.Wait(absl::Seconds(5));
      FAIL() << "the server does not answer its metrics port (exit "
             << (exit ? absl::StrCat(*exit) : std::string("none yet"))
             << "); its output:\n" << absl::StrJoin(server.lines(), "\n");
    }
    samples = testing_util::ParseSamples(body);
    settled = true;
    for (const std::string& g : gauges) {
      settled = settled && samples.count(g) == 1 && samples[g] == 0;
    }
    if (!settled) absl::SleepFor(absl::Milliseconds(100));
  }
  for (const std::string& g : gauges) {
    EXPECT_EQ(testing_util::Sum(samples, g), 0) << g << " at the end";
    EXPECT_EQ(samples.count(g), 1u) << g << " is not exported";
  }

  // No upstream request for a VIN after its caller left, beyond one
  // attempt already under way and those started before the server could
  // know (kLeaveNoticed); never one for a VIN that fails validation.
  std::unordered_map<std::string, std::vector<absl::Time>> asked;
  std::map<std::string, int64_t> served;
  int64_t vins_requested = 0;
  const std::vector<fakevpic::RequestRecord> log = (*fake)->Requests();
  for (const fakevpic::RequestRecord& r : log) {
    ++served[r.served];
    if (r.is_batch()) {
      for (const auto& [vin, year] : r.batch) asked[vin].push_back(r.time);
      vins_requested += static_cast<int64_t>(r.batch.size());
    } else if (!r.vin.empty()) {
      asked[r.vin].push_back(r.time);
      ++vins_requested;
    }
  }
  int64_t late_requests = 0;
  for (const auto& [vin, left] : ledger.left()) {
    auto it = asked.find(vin);
    if (it == asked.end()) continue;
    const auto after = std::count_if(it->second.begin(), it->second.end(),
                                     [&](absl::Time t) { return t > left; });
    const auto noticed_after =
        std::count_if(it->second.begin(), it->second.end(),
                      [&](absl::Time t) { return t > left + kLeaveNoticed; });
    late_requests += after;
    if (after > 1 && noticed_after > 0) {
      ledger.Violation(absl::StrCat(after, " upstream requests for ", vin,
                                    " after its caller left"));
    }
  }
  for (const std::string& vin : ledger.invalid()) {
    if (asked.count(vin) != 0) {
      ledger.Violation("invalid VIN " + vin + " was sent upstream");
    }
  }

  // RSS: after a warm-up of the first third, the last third is not above
  // the middle one (medians, with room for allocator noise and a snapshot
  // being reloaded). Sanitizer builds measure their own shadow memory and
  // quarantine, not the server's: the numbers are printed, not judged.
  int64_t rss_start = 0, rss_peak = 0, rss_end = 0, rss_mid = 0, rss_late = 0;
  {
    absl::MutexLock lock(&rss_mu);
    std::vector<int64_t> mid, late;
    for (const RssSample& s : rss) {
      rss_peak = std::max(rss_peak, s.bytes);
      const double at = absl::FDivDuration(s.time - start, load_end - start);
      if (at >= 1.0 / 3 && at < 2.0 / 3) mid.push_back(s.bytes);
      if (at >= 2.0 / 3) late.push_back(s.bytes);
    }
    if (!rss.empty()) {
      rss_start = rss.front().bytes;
      rss_end = rss.back().bytes;
    }
    rss_mid = Median(mid);
    rss_late = Median(late);
  }
#ifndef VIN_SANITIZED
  EXPECT_LE(rss_late, rss_mid + rss_mid / 10 + (int64_t{8} << 20))
      << "server RSS grew after the warm-up: middle third median "
      << Mib(rss_mid) << " MiB, last third " << Mib(rss_late) << " MiB";
#endif

  // The end: SIGTERM, exit 0.
  server.Signal(SIGTERM);
  const absl::optional<int> exit = server.Wait(absl::Seconds(30));
  EXPECT_EQ(exit, 0) << absl::StrJoin(server.lines(), "\n");
  for (const std::string& line : server.lines()) {
    if (line.find("Sanitizer") != std::string::npos ||
        line.find("runtime error") != std::string::npos) {
      ledger.Violation("server: " + line);
    }
  }
  if (have_snapshot) {
    int reloaded = 0;
    for (const std::string& line : server.lines()) {
      reloaded += line.find("SIGHUP received") != std::string::npos;
    }
    EXPECT_EQ(reloaded, sighups) << "SIGHUPs sent vs reloads the server logged";
  }

  const auto counts = ledger.counts();
  auto count = [&](const std::string& k) {
    auto it = counts.find(k);
    return it == counts.end() ? int64_t{0} : it->second;
  };
  int64_t unary = 0, streams = 0;
  for (const auto& [k, v] : counts) {
    if (k.rfind("unary ", 0) == 0) unary += v;
    if (k.rfind("stream ", 0) == 0 && k != "stream items") streams += v;
  }
  int64_t faults = 0;
  for (const auto& [k, v] : served) faults += k == "ok" ? 0 : v;
  std::printf(
      "soak: items %lld (unary %lld, %lld streams with %lld items, vinctl "
      "%lld items), events %lld, done %lld, retrying %lld\n",
      static_cast<long long>(unary + count("stream items") + count("vinctl items")),
      static_cast<long long>(unary), static_cast<long long>(streams),
      static_cast<long long>(count("stream items")),
      static_cast<long long>(count("vinctl items")),
      static_cast<long long>(count("events")), static_cast<long long>(count("done")),
      static_cast<long long>(count("retrying events")));
  std::printf("soak: upstream requests %zu (%lld VINs), faults injected %lld:",
              log.size(), static_cast<long long>(vins_requested),
              static_cast<long long>(faults));
  for (const auto& [k, v] : served) {
    std::printf(" %s=%lld", k.c_str(), static_cast<long long>(v));
  }
  std::printf("\nsoak: requests after a caller left %lld (over %zu VINs left), "
              "SIGHUP reloads %d\n",
              static_cast<long long>(late_requests), ledger.left().size(), sighups);
  std::printf("soak: calls:");
  for (const auto& [k, v] : counts) {
    if (k.rfind("unary ", 0) == 0 || k.rfind("stream ", 0) == 0 ||
        k.rfind("failed ", 0) == 0 || k.rfind("vinctl ", 0) == 0) {
      std::printf(" [%s]=%lld", k.c_str(), static_cast<long long>(v));
    }
  }
  std::printf("\nsoak: server RSS start %.1f MiB, peak %.1f MiB, end %.1f MiB "
              "(medians: middle third %.1f, last third %.1f)\n",
              Mib(rss_start), Mib(rss_peak), Mib(rss_end), Mib(rss_mid),
              Mib(rss_late));
  {
    // The RSS trajectory: the sample nearest each tenth of the run.
    absl::MutexLock lock(&rss_mu);
    std::printf("soak: server RSS by tenths of the run (MiB):");
    for (int tenth = 0; tenth <= 10 && !rss.empty(); ++tenth) {
      const size_t i = std::min(rss.size() - 1, rss.size() * tenth / 10);
      std::printf(" %.0f", Mib(rss[i].bytes));
    }
    std::printf("\n");
  }
  std::printf("soak: violations %lld\n",
              static_cast<long long>(ledger.violation_count()));
  std::fflush(stdout);

  EXPECT_EQ(ledger.violation_count(), 0)
      << absl::StrJoin(ledger.violations(), "\n");
  EXPECT_GT(count("done"), 0);
  EXPECT_GT(faults, 0);
}

}  // namespace
