// One DecodeBatch stream: a bidirectional reactor on gRPC's callback API.
//
// Each request read becomes an item, a waiter of the engine. Its events
// (QUEUED, RETRYING..., DONE or FAILED) are queued and written one at a time.
// At most `window` items are outstanding (read but terminal event not yet
// written); while the window is full the reactor does not read, so gRPC flow
// control pushes back on the sender and memory stays bounded.
//
// Thread model: gRPC reactions and engine events (on the engine's loop) both
// enter through methods that take `mu_`. StartRead/StartWrite are issued
// under `mu_` (gRPC never runs their reactions inline); Finish is called
// after `mu_` is released, as the last act, since OnDone may run inline and
// delete the call.
#ifndef VIN_SERVER_BATCH_CALL_H_
#define VIN_SERVER_BATCH_CALL_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <deque>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/optional.h"
#include "engine/engine.h"
#include "metrics/metrics.h"
#include "server/call_registry.h"
#include "server/common/item_window.h"
#include "vin/v1/vin.pb.h"

namespace server {

// Counters shared by every stream of a service, for operators and tests.
struct BatchCounters {
  std::atomic<int64_t> streams{0};
  std::atomic<int64_t> items_read{0};
  std::atomic<int64_t> items_outstanding{0};  // all streams together
  std::atomic<int64_t> peak_stream_outstanding{0};  // largest of one stream
  // Streams whose window is full of answers their client has not read yet
  // (a paused or slow reader): they read no more items until it does.
  std::atomic<int64_t> streams_held_by_reader{0};
};

// Served raw (gRPC ByteBuffers; see server/batch_events.h): requests are
// parsed here, and a DONE splices in its result's shared bytes.
// RegisteredCall first: its `delete this` then needs no pointer adjustment
// (GCC's -Wfree-nonheap-object warned of one, wrongly, at offset 128).
class BatchCall final
    : public RegisteredCall,
      public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  // `metrics` (not owned) may be null. The call adds itself to `registry`
  // and leaves it in OnDone.
  BatchCall(engine::Engine* engine, grpc::CallbackServerContext* context,
            int window, BatchCounters* counters,
            metrics::ServiceMetrics* metrics, CallRegistry<BatchCall>* registry,
            std::string tenant, bool interactive_allowed);

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

  // The server is stopping: read no more items; end the stream (with
  // UNAVAILABLE unless the client had half-closed) right after the last
  // terminal event is written, at once for an idle stream.
  void Drain();

 private:
  class Item;
  struct Pending {
    grpc::ByteBuffer bytes;
    bool terminal = false;
  };
  // Why the stream reads no more items (kOpen: it reads them).
  enum class Input {
    kOpen,
    kHalfClosed,  // the client half-closed: ends OK
    kMalformed,   // a message did not parse: ends INVALID_ARGUMENT
    kRefused,     // the engine refused an item, shutting down: UNAVAILABLE
    kDraining,    // the server drains: UNAVAILABLE, also with a read out
  };
  // Where the events go.
  enum class Output {
    kOpen,        // to the client
    kClientGone,  // it cancelled, or a write failed: events are dropped
    kFinished,    // Finish was called (after its last event was written)
  };
  // What moves the states; Transition is the one place they change.
  enum class Event {
    kHalfClose,
    kMalformed,
    kEngineRefused,
    kDrain,
    kClientGone,
    kFinish,
  };
  void TransitionLocked(Event event) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The status the stream ends with, once every item is answered.
  grpc::Status FinalStatusLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Admit(const vin::v1::DecodeBatchRequest& request, uint64_t index);
  // Queues an item's event; a terminal event also retires the item.
  void Emit(Item* item, grpc::ByteBuffer bytes, bool terminal);
  void CancelAllLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // An item's terminal event left the queue (written, or dropped; or was
  // never queued, its client gone): its place in the window is free.
  void RetireLocked(bool was_queued) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::optional<grpc::Status> AdvanceLocked()
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  engine::Engine* const engine_;
  const absl::Time deadline_;
  BatchCounters* const counters_;
  metrics::ServiceMetrics* const metrics_;
  CallRegistry<BatchCall>* const registry_;
  const std::string peer_;  // "ipv4:127.0.0.1:40172", for the log
  const std::string tenant_;  // rule 17: who asks, for every item
  // Rule 19: whether its items may be interactive (--interactive_tenants).
  const bool interactive_allowed_;
  // Set at the end of the constructor, read first by every reaction: gRPC
  // hands the new reactor to the threads that run its reactions inside its
  // (uninstrumented) core; this release/acquire pair shows TSan that order.
  std::atomic<bool> constructed_{false};
  void Arrived() const { (void)constructed_.load(std::memory_order_acquire); }
  // Protects everything below. Lock order: may be held while taking the
  // engine's loop::EventLoop lock (Engine::Cancel posts under it); never
  // held across Engine::Submit, whose cache hit calls this call's listener
  // (which takes mu_) before it returns. The engine holds no lock while it
  // calls a listener.
  absl::Mutex mu_;
  grpc::ByteBuffer request_;  // the read buffer; one read at a time
  ItemWindow window_ ABSL_GUARDED_BY(mu_);
  Input input_ ABSL_GUARDED_BY(mu_) = Input::kOpen;
  Output output_ ABSL_GUARDED_BY(mu_) = Output::kOpen;
  // The operations in flight, at most one of each.
  bool read_out_ ABSL_GUARDED_BY(mu_) = false;
  bool write_out_ ABSL_GUARDED_BY(mu_) = false;
  // An item read and not yet handed to the engine: the next read waits for
  // it, so that a stream's items reach the engine (and join flights) in the
  // order they were sent, whatever thread's write completion asks for the
  // next read meanwhile.
  bool admitting_ ABSL_GUARDED_BY(mu_) = false;
  // Counted in streams_held_by_reader (ItemWindow::HeldByReader).
  bool held_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<Pending> queue_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<Item*, std::unique_ptr<Item>> items_ ABSL_GUARDED_BY(mu_);
};

}  // namespace server

#endif  // VIN_SERVER_BATCH_CALL_H_
