// The chaos soak's client threads (soak_client.h).
#include "soak/soak_client.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <thread>

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "testing/subprocess.h"
#include "testing/vin_gen.h"

namespace soak {

using vin::v1::DecodeBatchRequest;
using vin::v1::DecodeBatchResponse;
using vin::v1::FailureReason;

namespace {
constexpr int kPoolSize = 300;  // VINs many callers ask for
}  // namespace

Client::Client(uint64_t seed, int index, const std::string& target,
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

void Client::Run() {
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

int Client::Uniform(int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng_);
}

Client::Item Client::NextItem() {
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

vin::v1::SourcePreference Client::NextSource() {
  const int pick = Uniform(0, 9);
  if (pick < 7) return vin::v1::SOURCE_PREFERENCE_LIVE_ONLY;
  if (pick < 9) return vin::v1::SOURCE_PREFERENCE_LIVE_THEN_SNAPSHOT;
  return vin::v1::SOURCE_PREFERENCE_SNAPSHOT_ONLY;
}

void Client::Unary() {
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

void Client::CheckResult(const vin::v1::DecodeResult& r,
                         const std::string& vin, const std::string& where) {
  const std::string& make = r.vehicle().make();
  if (r.vin() != vin || r.source() == vin::v1::SOURCE_UNSPECIFIED ||
      (r.source() != vin::v1::SOURCE_SNAPSHOT && !make.empty() &&
       make != "HONDA")) {
    ledger_->Violation(absl::StrCat(where, ": result for ", vin, " is ",
                                    r.ShortDebugString()));
  }
}

std::string Client::StatusName(grpc::StatusCode code) {
  return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
}

const char* Client::KindName(Kind kind) {
  switch (kind) {
    case Kind::kHalfClose: return "half-close";
    case Kind::kSlowReader: return "slow-reader";
    case Kind::kCancel: return "cancel";
    case Kind::kNoDeadline: return "no-deadline";
    case Kind::kShortDeadline: return "short-deadline";
  }
  return "?";
}

void Client::Stream(Kind kind) {
  std::vector<Item> items(static_cast<size_t>(Uniform(1, 120)));
  for (Item& item : items) {
    item = NextItem();
    item.source = NextSource();
  }
  grpc::ClientContext ctx;
  SetStreamDeadline(kind, &ctx);
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
  const std::string where = absl::StrCat(KindName(kind), " stream ", index_);
  StreamReads reads = ReadEvents(kind, items, cancel_after, pause_after,
                                 where, stream.get(), &ctx);
  writer.join();
  const grpc::Status status = stream->Finish();
  live_->Remove(&ctx);
  if (reads.left == absl::InfiniteFuture()) reads.left = absl::Now();
  CheckStreamEnd(kind, items, reads, status, where);
}

void Client::SetStreamDeadline(Kind kind, grpc::ClientContext* ctx) {
  if (kind == Kind::kShortDeadline) {
    ctx->set_deadline(absl::ToChronoTime(
        absl::Now() + absl::Milliseconds(Uniform(300, 3000))));
  } else if (kind != Kind::kNoDeadline) {
    ctx->set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(120)));
  }
}

Client::StreamReads Client::ReadEvents(Kind kind, const std::vector<Item>& items,
                                       size_t cancel_after, size_t pause_after,
                                       const std::string& where,
                                       BatchStream* stream,
                                       grpc::ClientContext* ctx) {
  StreamReads reads;
  // Per item: events seen, and whether a terminal one came.
  std::vector<int> events(items.size(), 0);
  reads.terminal.assign(items.size(), false);
  DecodeBatchResponse resp;
  while (stream->Read(&resp)) {
    ++reads.read;
    size_t i = 0;
    if (!absl::SimpleAtoi(resp.request_id(), &i) || i >= items.size()) {
      ledger_->Violation(absl::StrCat(where, ": event for unknown item \"",
                                      resp.request_id(), "\""));
      continue;
    }
    CheckEvent(resp, items[i], events[i], reads.terminal[i], where);
    ++events[i];
    if (resp.has_done() || resp.has_failed()) reads.terminal[i] = true;
    if (kind == Kind::kCancel && reads.read == cancel_after) {
      ctx->TryCancel();
      reads.left = absl::Now();
    }
    if (kind == Kind::kSlowReader && reads.read == pause_after) {
      // The client stops reading for a while (its behaviour, not a wait
      // for the server).
      absl::SleepFor(absl::Milliseconds(Uniform(500, 3000)));
    }
  }
  return reads;
}

void Client::CheckStreamEnd(Kind kind, const std::vector<Item>& items,
                            const StreamReads& reads,
                            const grpc::Status& status,
                            const std::string& where) {
  ledger_->Count(absl::StrCat("stream ", KindName(kind), " ",
                              StatusName(status.error_code())));
  ledger_->Count("events", static_cast<int64_t>(reads.read));
  ledger_->Count("stream items", static_cast<int64_t>(items.size()));
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].type == Item::Type::kDistinct) {
      ledger_->Left(items[i].vin, reads.left);
    }
    if (status.ok() && !reads.terminal[i]) {
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

void Client::CheckEvent(const DecodeBatchResponse& resp, const Item& item,
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

void Client::KilledVinctl() {
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

}  // namespace soak
