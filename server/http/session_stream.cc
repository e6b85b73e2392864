// Session's /v1/decode:batch (session.h): NDJSON in, NDJSON events out
// while they happen, at most `--batch_window` items in progress (the next
// enters when an item's terminal event has been written: the client's
// reading paces it). A chunked answer that ends the connection; a client
// that goes away mid-stream cancels its items' waiters.
#include <google/protobuf/util/json_util.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "domain/limits.h"
#include "server/http/session.h"
#include "server/proto_mapping.h"
#include "server/tenant.h"
#include "vin/v1/vin.pb.h"

namespace server {
namespace http {
namespace internal {

void Session::OnStreamEvent(uint64_t request, size_t index,
                            vin::v1::DecodeBatchResponse event, bool terminal) {
  if (request != request_seq_ || mode_ != Mode::kStream || index >= items_.size()) {
    return;
  }
  if (terminal) {
    ids_[index] = 0;
    ended_[index] = true;
  }
  event.set_request_id(items_[index].request_id);
  if (event.vin().empty()) event.set_vin(items_[index].vin);
  std::string line;
  google::protobuf::util::JsonPrintOptions opts;
  (void)google::protobuf::util::MessageToJsonString(event, &line, opts);
  line.push_back('\n');
  lines_.push_back({std::move(line), terminal});
  Pump();
}

void Session::StartStream(absl::Duration timeout) {
  items_.clear();
  size_t index = 0;
  for (absl::string_view raw : absl::StrSplit(request_.body(), '\n')) {
    const absl::string_view text = absl::StripAsciiWhitespace(raw);
    if (text.empty()) continue;
    Item item;
    item.request_id = absl::StrCat("#", index++);
    vin::v1::DecodeBatchRequest req;
    const auto st = google::protobuf::util::JsonStringToMessage(
        std::string(text), &req, google::protobuf::util::JsonParseOptions());
    if (!st.ok()) {
      item.vin = std::string(text.substr(0, 64));
      item.invalid = domain::FailureOf(
          engine::FailureReason::kInvalidRequest,
          absl::StrCat("line ", index, " is not a vin.v1.DecodeBatchRequest "
                                       "in JSON: ",
                       std::string(st.message())));
    } else {
      if (!req.request_id().empty()) item.request_id = req.request_id();
      item.vin = req.vin();
      item.request = FromProto(req.vin(), req.model_year(),
                               req.check_digit_policy(), req.source_preference());
      item.request.timeout = timeout;
      item.request.stagger = true;
      item.request.priority = PriorityOf(req.priority(), domain::Priority::kBulk);
      item.request.tenant = tenant_;
      if (req.request_id().size() > domain::kMaxRequestIdBytes) {
        item.invalid = domain::FailureOf(
            engine::FailureReason::kInvalidRequest,
            absl::StrCat("request_id is longer than ",
                         domain::kMaxRequestIdBytes, " bytes"));
      }
    }
    items_.push_back(std::move(item));
  }
  ++request_seq_;
  mode_ = Mode::kStream;
  ids_.assign(items_.size(), 0);
  ended_.assign(items_.size(), false);
  next_item_ = 0;
  in_progress_ = 0;
  finished_items_ = 0;
  keep_alive_ = false;  // the stream ends the connection
  hold_ = shared_from_this();
  stream_head_ = std::make_shared<bhttp::response<bhttp::empty_body>>(
      bhttp::status::ok, version_ == 0 ? 11 : version_);
  stream_head_->set(bhttp::field::server, "vin-decode-service");
  stream_head_->set(bhttp::field::content_type, "application/x-ndjson");
  stream_head_->set(bhttp::field::cache_control, "no-store");
  stream_head_->chunked(true);
  stream_head_->keep_alive(false);
  if (OriginAllowed()) {
    stream_head_->set(bhttp::field::access_control_allow_origin, origin_);
    stream_head_->set(bhttp::field::vary, "Origin");
  }
  serializer_ = std::make_shared<bhttp::response_serializer<bhttp::empty_body>>(
      *stream_head_);
  writing_ = true;
  bhttp::async_write_header(
      stream_, *serializer_,
      [self = shared_from_this()](beast::error_code ec, size_t) {
        self->writing_ = false;
        if (ec) return self->StreamGone();
        self->WatchClient();
        self->Refill();
        self->Pump();
      });
}

void Session::WatchClient() {
  watch_buffer_.resize(512);
  stream_.socket().async_read_some(
      net::buffer(watch_buffer_),
      [self = shared_from_this()](beast::error_code ec, size_t) {
        if (self->mode_ != Mode::kStream || self->stream_done_) return;
        if (ec) return self->StreamGone();
        self->WatchClient();  // more bytes after the body: ignored
      });
}

void Session::Refill() {
  while (!stream_gone_ && in_progress_ < options().stream_window &&
         next_item_ < items_.size()) {
    const size_t i = next_item_++;
    ++in_progress_;
    Item& item = items_[i];
    auto* w = new Waiter(gateway_->shared_from_this(), weak_from_this(), request_seq_, i);
    w->set_stream(true);
    if (item.invalid) {
      w->Finish(Outcome{false, nullptr, *item.invalid});
      continue;
    }
    const engine::Admission a = gateway_->engine()->Submit(item.request, w);
    if (!a.ok()) {
      w->Finish(Outcome{false, nullptr, a.failure()});
    } else if (!ended_[i]) {
      ids_[i] = a.id();  // (a cache hit ended inside Submit)
    }
  }
}

void Session::Pump() {
  if (writing_ || stream_gone_ || stream_done_) return;
  if (lines_.empty()) {
    if (finished_items_ == items_.size() && next_item_ == items_.size()) {
      stream_done_ = true;
      writing_ = true;
      net::async_write(stream_, bhttp::make_chunk_last(),
                       [self = shared_from_this()](beast::error_code, size_t) {
                         self->writing_ = false;
                         self->EndStream();
                       });
    }
    return;
  }
  writing_ = true;
  auto line = std::make_shared<Line>(std::move(lines_.front()));
  lines_.pop_front();
  stream_.expires_after(std::chrono::nanoseconds(
      absl::ToInt64Nanoseconds(options().body_timeout)));
  net::async_write(stream_, bhttp::make_chunk(net::buffer(line->text)),
                   [self = shared_from_this(), line](beast::error_code ec, size_t) {
                     self->writing_ = false;
                     if (ec) return self->StreamGone();
                     if (line->terminal) {
                       --self->in_progress_;
                       ++self->finished_items_;
                       self->Refill();
                     }
                     self->Pump();
                   });
}

void Session::StreamGone() {
  if (stream_gone_) return;
  stream_gone_ = true;
  CancelWaiters();
  lines_.clear();
  EndStream();
}

void Session::EndStream() {
  stream_.expires_never();
  beast::error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
  stream_.close();
  const std::shared_ptr<Session> keep = std::move(hold_);
}

}  // namespace internal
}  // namespace http
}  // namespace server
