// Session's /v1/decode:batch (session.h): the body read as a stream, a
// line at a time, NDJSON events out while they happen, at most
// `--batch_window` items in progress (the next line is read when an
// item's terminal event has been written: the client's reading paces
// it). Memory stays bounded by the window whatever the body's size
// (DESIGN rule 19): a piece of the body, one line of at most `line_limit`
// (a longer one fails as its item, its bytes skipped), the window's items
// and their events. A chunked answer that ends the connection; a client
// that goes away mid-stream cancels its items' waiters.
#include <google/protobuf/util/json_util.h>

#include <boost/asio/write.hpp>
#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "domain/limits.h"
#include "server/common/log.h"
#include "server/common/proto_mapping.h"
#include "server/common/tenant.h"
#include "server/http/http_status.h"
#include "server/http/session.h"
#include "util/utf8.h"
#include "vin/v1/vin.pb.h"

namespace server {
namespace http {
namespace internal {
namespace {

constexpr size_t kReadPiece = 16 * 1024;  // bytes of the body read at once
constexpr size_t kEchoedBytes = 64;       // of a line that is no request

}  // namespace

void Session::OnStreamEvent(uint64_t request, size_t index,
                            vin::v1::DecodeBatchResponse event, bool terminal) {
  if (request != request_seq_ || mode_ != Mode::kStream) return;
  auto it = active_.find(index);
  if (it == active_.end() || it->second.ended) return;
  StreamItem& item = it->second;
  if (terminal) {
    item.waiter = 0;
    item.ended = true;
    window_->TerminalQueued();
  }
  event.set_request_id(item.request_id);
  if (event.vin().empty()) event.set_vin(item.vin);
  std::string line;
  google::protobuf::util::JsonPrintOptions opts;
  (void)google::protobuf::util::MessageToJsonString(event, &line, opts);
  line.push_back('\n');
  lines_.push_back({std::move(line), terminal, index});
  Pump();
}

void Session::StartStream() {
  ++request_seq_;
  mode_ = Mode::kStream;
  active_.clear();
  window_.emplace(options().stream_window);
  unsplit_.clear();
  unsplit_pos_ = 0;
  line_.clear();
  line_skipped_ = 0;
  reading_ = input_done_ = false;
  lines_.clear();
  stream_parser_.emplace(std::move(*head_parser_));
  head_parser_.reset();
  // No total: paced by the window (a number, not boost::none: see
  // ReadHead).
  stream_parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
  read_buffer_.resize(kReadPiece);
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
  Continue([self = shared_from_this()] {
    bhttp::async_write_header(self->stream_, *self->serializer_,
                              [self](beast::error_code ec, size_t) {
                                self->writing_ = false;
                                if (ec) return self->StreamGone();
                                self->Refill();
                              });
  });
}

void Session::ReadStreamBody() {
  if (reading_ || input_done_ || stream_gone_) return;
  reading_ = true;
  auto& body = stream_parser_->get().body();
  body.data = read_buffer_.data();
  body.size = read_buffer_.size();
  body.more = true;
  // (A write's expiry, set while no read was pending, must not end this
  // read: its own timer is timer_.)
  stream_.tcp().expires_never();
  timer_.expires_after(std::chrono::nanoseconds(
      absl::ToInt64Nanoseconds(options().body_timeout)));
  // (A timer that expired as its read completed may still run after the
  // cancel: it acts only for the read it was set for.)
  const uint64_t read = ++body_reads_;
  timer_.async_wait([self = shared_from_this(), read](beast::error_code ec) {
    if (ec || !self->reading_ || read != self->body_reads_) return;
    self->StopReading(
        408, domain::ErrorReason::kRequestTimeout,
        absl::StrCat("the body stalled: nothing for ",
                     absl::FormatDuration(self->options().body_timeout)));
  });
  bhttp::async_read_some(
      stream_, buffer_, *stream_parser_,
      [self = shared_from_this()](beast::error_code ec, size_t) {
        self->OnStreamBody(ec);
      });
}

void Session::OnStreamBody(beast::error_code ec) {
  reading_ = false;
  timer_.cancel();
  if (stream_gone_ || stream_done_) return;
  if (ec == bhttp::error::need_buffer) ec = {};  // the piece is full
  if (ec == bhttp::error::end_of_stream || ec == net::error::eof ||
      ec == net::error::connection_reset || ec == net::error::broken_pipe ||
      ec == net::error::operation_aborted) {
    return StreamGone();  // the client went before its body ended
  }
  // Reading stopped (the body stalled) while this read was out: what it
  // read is not used; the client is watched for leaving.
  if (input_done_) return WatchClient();
  if (ec) {
    // The body cannot be read further (a bad chunk): the items read are
    // answered, then the stream ends.
    return StopReading(
        400, domain::ErrorReason::kMalformedRequest,
        absl::StrCat("the body is not valid HTTP: ", ec.message()));
  }
  const size_t n = read_buffer_.size() - stream_parser_->get().body().size;
  unsplit_.erase(0, unsplit_pos_);
  unsplit_pos_ = 0;
  unsplit_.append(read_buffer_.data(), n);
  Refill();
}

void Session::StopReading(int status, domain::ErrorReason reason,
                          absl::string_view why) {
  input_done_ = true;
  log::Event(log::Level::kWarn, "/v1/decode:batch: reading no more of the body",
             {{"peer", client_},
              {"reason", std::string(why)},
              {"items_read", window_->items_read()}});
  // The stream's last line: {"error": a google.rpc.Status}, as HTTP/JSON
  // gateways end a stream that failed.
  cut_short_ = absl::StrCat(
      "{\"error\":",
      RpcStatusJson(ToRpcStatus(DetailsOf(
          GrpcCodeOfHttp(status), reason,
          absl::StrCat(why, "; the ", window_->items_read(),
                       " items read before are answered above, the rest of "
                       "the body was not read")))),
      "}");
  cut_short_ += '\n';
  // A client that leaves now is seen (a read still out sees it itself).
  if (!reading_) WatchClient();
  Pump();
}

bool Session::NextLine(std::string* line, size_t* too_long) {
  while (unsplit_pos_ < unsplit_.size()) {
    const size_t nl = unsplit_.find('\n', unsplit_pos_);
    const size_t end = nl == std::string::npos ? unsplit_.size() : nl;
    const size_t piece = end - unsplit_pos_;
    if (line_skipped_ > 0 || line_.size() + piece > options().line_limit) {
      line_skipped_ += line_.size() + piece;  // counted, not kept
      line_.clear();
    } else {
      line_.append(unsplit_, unsplit_pos_, piece);
    }
    if (nl == std::string::npos) {
      unsplit_pos_ = end;
      return false;  // the line goes on in the next piece
    }
    unsplit_pos_ = nl + 1;
    *too_long = line_skipped_;
    line->swap(line_);
    line_.clear();
    line_skipped_ = 0;
    return true;
  }
  return false;
}

void Session::Refill() {
  while (!stream_gone_ && !input_done_ && window_->HasRoom()) {
    std::string line;
    size_t too_long = 0;
    if (NextLine(&line, &too_long)) {
      SubmitLine(line, too_long);
      continue;
    }
    if (!stream_parser_->is_done()) {
      ReadStreamBody();
      break;
    }
    // The body has ended: its last line may have no line break.
    if (!line_.empty() || line_skipped_ > 0) {
      too_long = line_skipped_;
      line.swap(line_);
      line_skipped_ = 0;
      SubmitLine(line, too_long);
    }
    input_done_ = true;
    WatchClient();
  }
  Pump();
}

void Session::SubmitLine(const std::string& raw, size_t too_long) {
  const absl::string_view text = absl::StripAsciiWhitespace(raw);
  if (text.empty() && too_long == 0) return;  // blank lines are no items
  const size_t index = window_->Open();
  StreamItem& item = active_[index];
  item.request_id = absl::StrCat("#", index);
  auto* w = new Waiter(gateway_->shared_from_this(), weak_from_this(),
                       request_seq_, index);
  w->set_stream(true);
  auto refuse = [w](domain::ErrorReason reason, std::string message) {
    w->Finish(Outcome{false, nullptr,
                      domain::FailureOf(engine::FailureReason::kInvalidRequest,
                                        std::move(message), reason)});
  };
  if (too_long > 0) {
    return refuse(
        domain::ErrorReason::kLineTooLong,
        absl::StrCat("line ", index + 1, " is ", too_long,
                     " bytes, over the limit of ", options().line_limit,
                     " (one vin.v1.DecodeBatchRequest in JSON a line)"));
  }
  vin::v1::DecodeBatchRequest req;
  const auto st = google::protobuf::util::JsonStringToMessage(
      std::string(text), &req, ApiJsonOptions());
  if (!st.ok()) {
    item.vin = util::SafeText(text, kEchoedBytes);
    return refuse(domain::ErrorReason::kMalformedRequest,
                  absl::StrCat("line ", index + 1,
                               " is not a vin.v1.DecodeBatchRequest in JSON: ",
                               std::string(st.message())));
  }
  if (!req.request_id().empty()) {
    item.request_id =
        util::SafeText(req.request_id(), domain::kMaxRequestIdBytes);
  }
  item.vin = req.vin();
  if (req.request_id().size() > domain::kMaxRequestIdBytes) {
    return refuse(domain::ErrorReason::kFieldTooLong,
                  absl::StrCat("request_id is longer than ",
                               domain::kMaxRequestIdBytes, " bytes"));
  }
  engine::DecodeRequest r =
      FromProto(req.vin(), req.model_year(), req.check_digit_policy(),
                req.source_preference());
  r.timeout = timeout_;
  r.stagger = true;
  r.priority = options().tenants.ManyPriority(req.priority(), tenant_);
  r.tenant = tenant_;
  const engine::Admission a = gateway_->engine()->Submit(r, w);
  if (!a.ok()) return w->Finish(Outcome{false, nullptr, a.failure()});
  // (A cache hit ended inside Submit.)
  if (auto it = active_.find(index); it != active_.end() && !it->second.ended) {
    it->second.waiter = a.id();
  }
}

void Session::WatchClient() {
  watch_buffer_.resize(512);
  auto on_read = [self = shared_from_this()](beast::error_code ec, size_t) {
    if (self->mode_ != Mode::kStream || self->stream_done_) return;
    if (ec) return self->StreamGone();
    self->WatchClient();  // more bytes after the body: ignored
  };
  if (!stream_.tls()) {
    // The socket itself: no write's expiry applies to this read.
    return stream_.socket().async_read_some(net::buffer(watch_buffer_),
                                            std::move(on_read));
  }
  // TLS: the client's bytes are records, read through the TLS stream,
  // whose reads a write's expiry (set while no read was pending) must
  // not end.
  stream_.tcp().expires_never();
  stream_.async_read_some(net::buffer(watch_buffer_), std::move(on_read));
}

void Session::Pump() {
  if (writing_ || stream_gone_ || stream_done_) return;
  if (lines_.empty() && input_done_ && active_.empty() &&
      !cut_short_.empty()) {
    // The body was not read whole: its error is the last line.
    lines_.push_back(Line{std::move(cut_short_), false, 0});
    cut_short_.clear();
  }
  if (lines_.empty()) {
    if (input_done_ && active_.empty()) {
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
  stream_.tcp().expires_after(std::chrono::nanoseconds(
      absl::ToInt64Nanoseconds(options().body_timeout)));
  net::async_write(stream_, bhttp::make_chunk(net::buffer(line->text)),
                   [self = shared_from_this(), line](beast::error_code ec, size_t) {
                     self->writing_ = false;
                     if (ec) return self->StreamGone();
                     if (line->terminal) {
                       self->active_.erase(line->index);
                       self->window_->Close(true);
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
  CountRequest(200);  // the head went out at once
  timer_.cancel();
  stream_.tcp().expires_never();
  beast::error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
  stream_.tcp().close();
  const std::shared_ptr<Session> keep = std::move(hold_);
}

}  // namespace internal
}  // namespace http
}  // namespace server
