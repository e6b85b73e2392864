// /v1/decode:batch (ndjson_stream.h). Memory stays bounded by the window
// whatever the body's size (DESIGN rule 19): a piece of the body, one line
// of at most `line_limit` (a longer one fails as its item, its bytes
// skipped), the window's items and their events. A client that goes away
// mid-stream cancels its items' waiters.
#include "server/http/ndjson_stream.h"

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
#include "util/utf8.h"
#include "vin/v1/vin.pb.h"

namespace server {
namespace http {
namespace internal {
namespace {

constexpr size_t kReadPiece = 16 * 1024;  // bytes of the body read at once
constexpr size_t kEchoedBytes = 64;       // of a line that is no request

}  // namespace

void NdjsonStream::OnEvent(size_t index, vin::v1::DecodeBatchResponse event,
                           bool terminal) {
  auto it = active_.find(index);
  if (it == active_.end() || it->second.ended) return;
  Item& item = it->second;
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

NdjsonStream::NdjsonStream(Connection* c, uint64_t seq)
    : Exchange(c, seq), timer_(c->Executor()) {}

void NdjsonStream::Start() {
  window_.emplace(c_->options().stream_window);
  c_->TakeHeadParser(&parser_);
  // No total: paced by the window (a number, not boost::none: see
  // Connection::ReadHead).
  parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
  read_buffer_.resize(kReadPiece);
  c_->Hold();  // until End
  // The stream ends the connection.
  head_ = std::make_shared<bhttp::response<bhttp::empty_body>>(
      bhttp::status::ok, c_->version());
  head_->set(bhttp::field::server, "vin-decode-service");
  head_->set(bhttp::field::content_type, "application/x-ndjson");
  head_->set(bhttp::field::cache_control, "no-store");
  head_->chunked(true);
  head_->keep_alive(false);
  c_->AddCors(head_.get());
  serializer_ =
      std::make_shared<bhttp::response_serializer<bhttp::empty_body>>(*head_);
  writing_ = true;
  c_->Continue([self = c_->shared_from_this(), this] {
    bhttp::async_write_header(c_->transport(), *serializer_,
                              [self, this](beast::error_code ec, size_t) {
                                writing_ = false;
                                if (ec) return Gone();
                                Refill();
                              });
  });
}

void NdjsonStream::ReadBody() {
  if (reading_ || input_done_ || gone_) return;
  reading_ = true;
  auto& body = parser_->get().body();
  body.data = read_buffer_.data();
  body.size = read_buffer_.size();
  body.more = true;
  // (A write's expiry, set while no read was pending, must not end this
  // read: its own timer is timer_.)
  c_->transport().tcp().expires_never();
  timer_.expires_after(std::chrono::nanoseconds(
      absl::ToInt64Nanoseconds(c_->options().body_timeout)));
  // (A timer that expired as its read completed may still run after the
  // cancel: it acts only for the read it was set for.)
  const uint64_t read = ++body_reads_;
  timer_.async_wait([self = c_->shared_from_this(), this,
                     read](beast::error_code ec) {
    if (ec || !reading_ || read != body_reads_) return;
    StopReading(408, domain::ErrorReason::kRequestTimeout,
                absl::StrCat("the body stalled: nothing for ",
                             absl::FormatDuration(c_->options().body_timeout)));
  });
  bhttp::async_read_some(c_->transport(), c_->buffer(), *parser_,
                         [self = c_->shared_from_this(), this](
                             beast::error_code ec, size_t) { OnBody(ec); });
}

void NdjsonStream::OnBody(beast::error_code ec) {
  reading_ = false;
  timer_.cancel();
  if (gone_ || done_) return;
  if (ec == bhttp::error::need_buffer) ec = {};  // the piece is full
  if (ec == bhttp::error::end_of_stream || ec == net::error::eof ||
      ec == net::error::connection_reset || ec == net::error::broken_pipe ||
      ec == net::error::operation_aborted) {
    return Gone();  // the client went before its body ended
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
  const size_t n = read_buffer_.size() - parser_->get().body().size;
  unsplit_.erase(0, unsplit_pos_);
  unsplit_pos_ = 0;
  unsplit_.append(read_buffer_.data(), n);
  Refill();
}

void NdjsonStream::StopReading(int status, domain::ErrorReason reason,
                               absl::string_view why) {
  input_done_ = true;
  log::Event(log::Level::kWarn, "/v1/decode:batch: reading no more of the body",
             {{"peer", c_->client()},
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

bool NdjsonStream::NextLine(std::string* line, size_t* too_long) {
  while (unsplit_pos_ < unsplit_.size()) {
    const size_t nl = unsplit_.find('\n', unsplit_pos_);
    const size_t end = nl == std::string::npos ? unsplit_.size() : nl;
    const size_t piece = end - unsplit_pos_;
    if (line_skipped_ > 0 || line_.size() + piece > c_->options().line_limit) {
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

void NdjsonStream::Refill() {
  while (!gone_ && !input_done_ && window_->HasRoom()) {
    std::string line;
    size_t too_long = 0;
    if (NextLine(&line, &too_long)) {
      SubmitLine(line, too_long);
      continue;
    }
    if (!parser_->is_done()) {
      ReadBody();
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

void NdjsonStream::SubmitLine(const std::string& raw, size_t too_long) {
  const absl::string_view text = absl::StripAsciiWhitespace(raw);
  if (text.empty() && too_long == 0) return;  // blank lines are no items
  const size_t index = window_->Open();
  Item& item = active_[index];
  item.request_id = absl::StrCat("#", index);
  auto* w = new Waiter(c_->gateway()->shared_from_this(), c_->weak_from_this(),
                       seq_, index);
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
                     " bytes, over the limit of ", c_->options().line_limit,
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
  engine::DecodeRequest r = FromProto(req);
  w->set_extras(ExtrasOf(req));
  r.timeout = c_->timeout();
  r.stagger = true;
  r.priority = c_->options().tenants.ManyPriority(req.priority(), c_->tenant());
  r.tenant = c_->tenant();
  const engine::Admission a = c_->gateway()->engine()->Submit(r, w);
  if (!a.ok()) return w->Finish(Outcome{false, nullptr, a.failure()});
  // (A cache hit ended inside Submit.)
  if (auto it = active_.find(index); it != active_.end() && !it->second.ended) {
    it->second.waiter = a.id();
  }
}

void NdjsonStream::WatchClient() {
  watch_buffer_.resize(512);
  auto on_read = [self = c_->shared_from_this(), this](beast::error_code ec,
                                                       size_t) {
    if (done_) return;
    if (ec) return Gone();
    WatchClient();  // more bytes after the body: ignored
  };
  if (!c_->transport().tls()) {
    // The socket itself: no write's expiry applies to this read.
    return c_->transport().socket().async_read_some(net::buffer(watch_buffer_),
                                                    std::move(on_read));
  }
  // TLS: the client's bytes are records, read through the TLS stream,
  // whose reads a write's expiry (set while no read was pending) must
  // not end.
  c_->transport().tcp().expires_never();
  c_->transport().async_read_some(net::buffer(watch_buffer_),
                                  std::move(on_read));
}

void NdjsonStream::Pump() {
  if (writing_ || gone_ || done_) return;
  if (lines_.empty() && input_done_ && active_.empty() && !cut_short_.empty()) {
    // The body was not read whole: its error is the last line.
    lines_.push_back(Line{std::move(cut_short_), false, 0});
    cut_short_.clear();
  }
  if (lines_.empty()) {
    if (input_done_ && active_.empty()) {
      done_ = true;
      writing_ = true;
      net::async_write(
          c_->transport(), bhttp::make_chunk_last(),
          [self = c_->shared_from_this(), this](beast::error_code, size_t) {
            writing_ = false;
            End();
          });
    }
    return;
  }
  writing_ = true;
  auto line = std::make_shared<Line>(std::move(lines_.front()));
  lines_.pop_front();
  c_->transport().tcp().expires_after(std::chrono::nanoseconds(
      absl::ToInt64Nanoseconds(c_->options().body_timeout)));
  net::async_write(c_->transport(), bhttp::make_chunk(net::buffer(line->text)),
                   [self = c_->shared_from_this(), this, line](
                       beast::error_code ec, size_t) {
                     writing_ = false;
                     if (ec) return Gone();
                     if (line->terminal) {
                       active_.erase(line->index);
                       window_->Close(true);
                       Refill();
                     }
                     Pump();
                   });
}

void NdjsonStream::Gone() {
  if (gone_) return;
  gone_ = true;
  Cancel();
  lines_.clear();
  End();
}

void NdjsonStream::End() {
  c_->CountRequest(200);  // the head went out at once
  timer_.cancel();
  c_->CloseSocket();
  const std::shared_ptr<Connection> keep = c_->Release();
}

void NdjsonStream::Cancel() {
  timer_.cancel();
  for (auto& [index, item] : active_) {
    if (item.waiter != 0) c_->gateway()->engine()->Cancel(item.waiter);
    item.waiter = 0;
  }
}

}  // namespace internal
}  // namespace http
}  // namespace server
