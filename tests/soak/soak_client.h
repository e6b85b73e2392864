// The chaos soak's load (soak_test.cc): one client thread that, until the
// load ends, picks a behaviour at random as real clients do: runs of unary
// calls with short deadlines, DecodeBatch streams that half-close, read
// slowly, cancel mid-stream, have no deadline or a short one, and vinctl
// processes killed mid-feed. It checks every answer against what a user is
// promised and writes what it saw to the Ledger.
#ifndef VIN_TESTS_SOAK_SOAK_CLIENT_H_
#define VIN_TESTS_SOAK_SOAK_CLIENT_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <grpcpp/client_context.h>

#include "absl/time/time.h"
#include "soak/ledger.h"
#include "vin/v1/vin.grpc.pb.h"

namespace soak {

class Client {
 public:
  Client(uint64_t seed, int index, const std::string& target,
         std::atomic<uint64_t>* next_distinct, Ledger* ledger,
         LiveCalls* live, absl::Time end);

  void Run();

 private:
  enum class Kind { kHalfClose, kSlowReader, kCancel, kNoDeadline, kShortDeadline };

  struct Item {
    std::string vin;
    enum class Type { kPool, kDistinct, kInvalid } type;
    vin::v1::SourcePreference source = vin::v1::SOURCE_PREFERENCE_LIVE_ONLY;
  };

  // What the client read of one stream.
  struct StreamReads {
    size_t read = 0;              // events
    std::vector<bool> terminal;   // per item: a terminal event came
    absl::Time left = absl::InfiniteFuture();  // when it cancelled
  };

  using BatchStream =
      grpc::ClientReaderWriter<vin::v1::DecodeBatchRequest,
                               vin::v1::DecodeBatchResponse>;

  int Uniform(int lo, int hi);
  Item NextItem();
  vin::v1::SourcePreference NextSource();

  void Unary();
  // A DONE result is the VIN asked for, from a real source, and what the fake
  // says of it (the generated Honda, or nothing for a sparse answer).
  void CheckResult(const vin::v1::DecodeResult& r, const std::string& vin,
                   const std::string& where);
  static std::string StatusName(grpc::StatusCode code);
  static const char* KindName(Kind kind);

  // One DecodeBatch stream of `kind`: writes its items on a thread of its
  // own while this one reads, then checks how it ended.
  void Stream(Kind kind);
  void SetStreamDeadline(Kind kind, grpc::ClientContext* ctx);
  // Reads the stream to its end, checking every event; cancels after
  // `cancel_after` events (kCancel) or pauses after `pause_after`
  // (kSlowReader).
  StreamReads ReadEvents(Kind kind, const std::vector<Item>& items,
                         size_t cancel_after, size_t pause_after,
                         const std::string& where, BatchStream* stream,
                         grpc::ClientContext* ctx);
  void CheckEvent(const vin::v1::DecodeBatchResponse& resp, const Item& item,
                  int seen, bool terminal, const std::string& where);
  // Counts the stream, notes when its callers left, and checks that every
  // item of an OK stream finished and that the status suits `kind`.
  void CheckStreamEnd(Kind kind, const std::vector<Item>& items,
                      const StreamReads& reads, const grpc::Status& status,
                      const std::string& where);

  // vinctl streams a feed and is killed mid-stream: the server sees its
  // connection drop without a goodbye.
  void KilledVinctl();

  std::mt19937_64 rng_;  // the client thread's only (not its writer's)
  const int index_;
  const std::string target_;
  std::atomic<uint64_t>* next_distinct_;
  Ledger* ledger_;
  LiveCalls* live_;
  const absl::Time end_;
  std::unique_ptr<vin::v1::VinDecoderService::Stub> stub_;
};

}  // namespace soak

#endif  // VIN_TESTS_SOAK_SOAK_CLIENT_H_
