#include "server/batch_call.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "domain/limits.h"
#include "server/batch_events.h"
#include "server/call_deadline.h"
#include "server/common/proto_mapping.h"
#include "server/common/status_mapping.h"
#include "server/common/tenant.h"
#include "server/decode_metrics.h"
#include "vin/vin.h"

namespace server {
namespace {

using vin::v1::DecodeBatchResponse;

// Longer request ids are refused (FAILED / INVALID_REQUEST): each event
// echoes the id, so it would be copied into every one.
using domain::kMaxRequestIdBytes;
// An input VIN longer than this is echoed cut, with its length.
constexpr size_t kMaxShownVinBytes = 64;
constexpr size_t kShownVinPrefixBytes = 24;

// The first `n` bytes of `s`, not cutting a UTF-8 sequence in two.
absl::string_view Utf8Prefix(absl::string_view s, size_t n) {
  if (s.size() <= n) return s;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

// Events carry the normalised VIN, or the input as sent when it cannot be
// shown normalised (non-printable or non-ASCII bytes); an oversized input
// is cut ("1HGCM826... (61440 bytes)").
std::string ShownVin(const std::string& input) {
  if (input.size() > kMaxShownVinBytes) {
    return absl::StrCat(Utf8Prefix(input, kShownVinPrefixBytes), "... (",
                        input.size(), " bytes)");
  }
  std::string normalised = vin::Normalize(input);
  for (char c : normalised) {
    if (!absl::ascii_isprint(static_cast<unsigned char>(c))) return input;
  }
  return normalised;
}

void RaisePeak(std::atomic<int64_t>& peak, int64_t value) {
  int64_t seen = peak.load();
  while (value > seen && !peak.compare_exchange_weak(seen, value)) {
  }
}

}  // namespace

// One batch item: a waiter of the engine that turns its events into
// responses. Each callback ends by handing its response to the call, which
// deletes the item on its terminal event; nothing follows that hand-off.
class BatchCall::Item final : public engine::DecodeListener {
 public:
  Item(BatchCall* call, std::string request_id, std::string vin,
       CallerExtras extras)
      : call_(call),
        request_id_(std::move(request_id)),
        vin_(std::move(vin)),
        extras_(std::move(extras)),
        asked_(absl::Now()) {}

  void OnQueued(const engine::Queued& queued) override {
    DecodeBatchResponse r = Base();
    ToProto(queued, r.mutable_queued());
    call_->Emit(this, EventBytes(r), false);
  }
  void OnRetrying(const engine::Retrying& retrying) override {
    DecodeBatchResponse r = Base();
    ToProto(retrying, r.mutable_retrying());
    call_->Emit(this, EventBytes(r), false);
  }
  void OnDone(std::shared_ptr<const engine::DecodeResult> result) override {
    CountDone(call_->metrics_, *result, absl::Now() - asked_);
    call_->Emit(this, DoneBytes(request_id_, vin_, *ForCaller(result, extras_)),
                true);
  }
  void OnFailed(const engine::Failure& failure) override {
    DecodeBatchResponse r = Base();
    ToProto(failure, r.mutable_failed());
    CountFailed(call_->metrics_, failure.reason, absl::Now() - asked_);
    call_->Emit(this, EventBytes(r), true);
  }

  engine::CallerInfo Caller() const override {
    return {call_->peer_, request_id_};
  }

  engine::Engine::WaiterId waiter = 0;  // guarded by the call's mu_

 private:
  DecodeBatchResponse Base() const {
    DecodeBatchResponse r;
    r.set_request_id(request_id_);
    r.set_vin(vin_);
    return r;
  }

  BatchCall* const call_;
  const std::string request_id_;
  const std::string vin_;
  const CallerExtras extras_;  // rule 21: explain, a barcode read
  const absl::Time asked_;
};

BatchCall::BatchCall(engine::Engine* engine,
                     grpc::CallbackServerContext* context, int window,
                     BatchCounters* counters, metrics::ServiceMetrics* metrics,
                     CallRegistry<BatchCall>* registry, std::string tenant,
                     bool interactive_allowed)
    : engine_(engine),
      deadline_(DeadlineOf(context)),
      counters_(counters),
      metrics_(metrics),
      registry_(registry),
      peer_(context->peer()),
      tenant_(std::move(tenant)),
      interactive_allowed_(interactive_allowed),
      window_(static_cast<size_t>(window)) {
  counters_->streams.fetch_add(1);
  registry_->Add(this);
  absl::optional<grpc::Status> finish;
  {
    absl::MutexLock lock(&mu_);
    finish = AdvanceLocked();
  }
  constructed_.store(true, std::memory_order_release);
  if (finish) Finish(*finish);
}

void BatchCall::OnReadDone(bool ok) {
  Arrived();
  vin::v1::DecodeBatchRequest request;
  uint64_t index = 0;
  {
    absl::MutexLock lock(&mu_);
    // Parse the request before anything can start the next read into it.
    const bool parsed = ok && ParseRequest(request_, &request);
    request_.Clear();
    read_out_ = false;
    if (output_ == Output::kFinished) {
      ok = false;  // read after the stream ended (a drain): not an item
    } else if (!ok) {
      TransitionLocked(Event::kHalfClose);
    } else if (!parsed) {
      ok = false;
      TransitionLocked(Event::kMalformed);
    } else {
      index = window_.Open();  // the item's place in the window
      admitting_ = true;
      RaisePeak(counters_->peak_stream_outstanding,
                static_cast<int64_t>(window_.open()));
    }
  }
  if (ok) {
    counters_->items_read.fetch_add(1);
    counters_->items_outstanding.fetch_add(1);
    Admit(request, index);
  }
  absl::optional<grpc::Status> finish;
  {
    absl::MutexLock lock(&mu_);
    admitting_ = false;
    finish = AdvanceLocked();
  }
  if (finish) Finish(*finish);
}

void BatchCall::Admit(const vin::v1::DecodeBatchRequest& request,
                      uint64_t index) {
  const std::string& id_sent = request.request_id();
  std::string request_id =
      id_sent.empty() ? absl::StrCat("#", index)
                      : std::string(Utf8Prefix(id_sent, kMaxRequestIdBytes));
  const absl::optional<std::string> scanned = vin::BarcodeRead(request.vin());
  auto owned = std::make_unique<Item>(
      this, std::move(request_id), ShownVin(scanned ? *scanned : request.vin()),
      ExtrasOf(request));
  Item* item = owned.get();
  {
    absl::MutexLock lock(&mu_);
    items_.emplace(item, std::move(owned));
  }
  if (id_sent.size() > kMaxRequestIdBytes) {
    item->OnFailed(domain::FailureOf(
        engine::FailureReason::kInvalidRequest,
        absl::StrCat("request_id is ", id_sent.size(),
                     " bytes, over the limit of ", kMaxRequestIdBytes,
                     " (echoed cut); the item was not decoded"),
        domain::ErrorReason::kFieldTooLong));
    return;
  }
  engine::DecodeRequest r = FromProto(request);
  r.timeout = ItemTimeoutOf(deadline_);  // the stream's, less a margin
  r.stagger = true;
  r.priority = interactive_allowed_
                   ? PriorityOf(request.priority(), domain::Priority::kBulk)
                   : domain::Priority::kBulk;
  r.tenant = tenant_;
  const engine::Admission admitted = engine_->Submit(r, item);
  if (!admitted.ok()) {
    if (admitted.failure().reason == engine::FailureReason::kShuttingDown) {
      absl::MutexLock lock(&mu_);
      TransitionLocked(Event::kEngineRefused);  // read no more items
    }
    item->OnFailed(admitted.failure());
    return;
  }
  absl::MutexLock lock(&mu_);
  // The item may already be answered (and gone), e.g. from the cache. Only
  // this thread creates items, so its address cannot have been reused.
  auto it = items_.find(item);
  if (it == items_.end()) return;
  item->waiter = admitted.id();
  if (output_ != Output::kOpen) engine_->Cancel(admitted.id());
}

void BatchCall::Emit(Item* item, grpc::ByteBuffer bytes, bool terminal) {
  absl::optional<grpc::Status> finish;
  {
    absl::MutexLock lock(&mu_);
    if (terminal) items_.erase(item);  // deletes the caller; see Item
    if (output_ != Output::kOpen) {
      if (terminal) RetireLocked(false);  // nobody to tell
    } else {
      queue_.push_back({std::move(bytes), terminal});
      if (terminal) window_.TerminalQueued();
    }
    finish = AdvanceLocked();
  }
  if (finish) Finish(*finish);
}

void BatchCall::OnWriteDone(bool ok) {
  Arrived();
  absl::optional<grpc::Status> finish;
  {
    absl::MutexLock lock(&mu_);
    write_out_ = false;
    if (queue_.front().terminal) RetireLocked(true);
    queue_.pop_front();
    if (!ok) TransitionLocked(Event::kClientGone);
    finish = AdvanceLocked();
  }
  if (finish) Finish(*finish);
}

void BatchCall::OnCancel() {
  Arrived();
  absl::optional<grpc::Status> finish;
  {
    absl::MutexLock lock(&mu_);
    TransitionLocked(Event::kClientGone);
    finish = AdvanceLocked();
  }
  if (finish) Finish(*finish);
}

void BatchCall::OnDone() {
  Arrived();
  // gRPC orders the reactions before OnDone in its (uninstrumented) core;
  // the lock makes that order plain to TSan too.
  {
    absl::MutexLock lock(&mu_);
    if (held_) counters_->streams_held_by_reader.fetch_sub(1);
    held_ = false;
  }
  registry_->Remove(this);
  counters_->streams.fetch_sub(1);
  Unref();  // gRPC's reference; a drain walking the registry may hold another
}

void BatchCall::Drain() {
  absl::optional<grpc::Status> finish;
  {
    absl::MutexLock lock(&mu_);
    TransitionLocked(Event::kDrain);
    finish = AdvanceLocked();
  }
  if (finish) Finish(*finish);
}

// Every item still waiting leaves its flight (and gets CANCELLED, dropped);
// queued events nobody will read are dropped, except the one being written.
void BatchCall::CancelAllLocked() {
  for (const auto& [ptr, item] : items_) {
    if (item->waiter != 0) engine_->Cancel(item->waiter);
  }
  const size_t keep = write_out_ ? 1 : 0;
  while (queue_.size() > keep) {
    if (queue_.back().terminal) RetireLocked(true);
    queue_.pop_back();
  }
}

void BatchCall::RetireLocked(bool was_queued) {
  window_.Close(was_queued);
  counters_->items_outstanding.fetch_sub(1);
}

// The one place the stream's states change (see Input and Output).
void BatchCall::TransitionLocked(Event event) {
  switch (event) {
    case Event::kHalfClose:
      // (A drain or a refusal with a read out: the client's half-close,
      // read since, makes its end OK.)
      if (input_ != Input::kMalformed) input_ = Input::kHalfClosed;
      return;
    case Event::kMalformed:
      if (input_ == Input::kOpen) input_ = Input::kMalformed;
      return;
    case Event::kEngineRefused:
      if (input_ == Input::kOpen) input_ = Input::kRefused;
      return;
    case Event::kDrain:
      if (input_ == Input::kOpen || input_ == Input::kRefused) {
        input_ = Input::kDraining;
      }
      return;
    case Event::kClientGone:
      if (output_ != Output::kOpen) return;
      output_ = Output::kClientGone;
      CancelAllLocked();
      return;
    case Event::kFinish:
      output_ = Output::kFinished;
      return;
  }
}

grpc::Status BatchCall::FinalStatusLocked() const {
  if (output_ == Output::kClientGone) return grpc::Status::CANCELLED;
  switch (input_) {
    case Input::kMalformed:
      return ToGrpcStatus(
          DetailsOf(grpc::StatusCode::INVALID_ARGUMENT,
                    domain::ErrorReason::kMalformedRequest,
                    "a message of the stream is not a DecodeBatchRequest; "
                    "the items before it were answered"));
    case Input::kRefused:
    case Input::kDraining:
      return ToGrpcStatus(DetailsOf(
          grpc::StatusCode::UNAVAILABLE, domain::ErrorReason::kShuttingDown,
          "the server is shutting down; items after the last "
          "one answered were not read"));
    case Input::kOpen:
    case Input::kHalfClosed:
      break;
  }
  return grpc::Status::OK;
}

// Starts the next write and read if they are due; returns the status to
// finish with once nothing is left. StartWrite and StartRead may be called
// under mu_: gRPC never runs their reactions inline. Finish may run OnDone
// inline, so callers call it after releasing mu_, as their last act.
absl::optional<grpc::Status> BatchCall::AdvanceLocked() {
  if (output_ == Output::kFinished) return absl::nullopt;
  const bool client_here = output_ == Output::kOpen;
  if (!write_out_ && !queue_.empty() && client_here) {
    write_out_ = true;
    // With more events queued behind it, a write may wait for them: several
    // events leave in one send (the last one queued is never held back).
    grpc::WriteOptions options;
    if (queue_.size() > 1) options.set_buffer_hint();
    StartWrite(&queue_.front().bytes, options);
  }
  if (!read_out_ && !admitting_ && input_ == Input::kOpen && client_here &&
      window_.HasRoom()) {
    read_out_ = true;
    StartRead(&request_);
  }
  // Held by its reader: every item of a full window is answered, and the
  // answers wait for the client to take them.
  const bool held = window_.HeldByReader(read_out_);
  if (held != held_) {
    held_ = held;
    counters_->streams_held_by_reader.fetch_add(held ? 1 : -1);
  }
  const bool more_input = input_ == Input::kOpen && client_here;
  // A read left pending by an idle client does not hold a draining stream.
  if (more_input || write_out_ || (read_out_ && input_ != Input::kDraining) ||
      window_.open() != 0 || !queue_.empty()) {
    return absl::nullopt;
  }
  TransitionLocked(Event::kFinish);
  return FinalStatusLocked();
}

}  // namespace server
