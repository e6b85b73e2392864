// POST /v1/decode:batch (exchange.h): the body read as a stream, a line at
// a time, NDJSON events out while they happen. At most `--batch_window`
// items are in progress (the window is server::ItemWindow, DecodeBatch's);
// the next line is read only when an item's terminal event has been
// written (the client's reading paces it), so memory is bounded by the
// window whatever the body's size (DESIGN rule 19). The answer is chunked
// and ends the connection.
#ifndef VIN_SERVER_HTTP_NDJSON_STREAM_H_
#define VIN_SERVER_HTTP_NDJSON_STREAM_H_

#include <boost/asio/steady_timer.hpp>
#include <boost/beast/http.hpp>
#include <boost/optional.hpp>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/optional.h"
#include "domain/error_reason.h"
#include "server/common/item_window.h"
#include "server/http/exchange.h"
#include "vin/v1/vin.pb.h"

namespace server {
namespace http {
namespace internal {

class NdjsonStream final : public Exchange {
 public:
  NdjsonStream(Connection* c, uint64_t seq);

  bool StreamsBody() const override { return true; }
  void Start() override;
  void OnEvent(size_t index, vin::v1::DecodeBatchResponse event,
               bool terminal) override;
  void Cancel() override;

 private:
  // An item read and not yet answered whole.
  struct Item {
    std::string request_id;
    std::string vin;      // as sent (made safe), for its events
    uint64_t waiter = 0;  // the engine's id while it may be cancelled
    bool ended = false;   // its terminal event came (its line may not be out)
  };
  struct Line {
    std::string text;
    bool terminal;
    size_t index;  // the item's
  };

  // Reads the next piece of the body (when none is being read), within
  // `body_timeout`: past it, what was not read is not (the items read are
  // answered, then the stream ends).
  void ReadBody();
  void OnBody(boost::beast::error_code ec);
  // Reads no more of the body before its end: logged, and once the items
  // read are answered the stream's last line is an error (`status`,
  // `reason`, `why`), so that the client knows the rest went unread.
  void StopReading(int status, domain::ErrorReason reason,
                   absl::string_view why);
  // The next line of the body read so far, if a whole one is there;
  // a line over `line_limit` comes back as its length only (`*too_long`),
  // its bytes skipped.
  bool NextLine(std::string* line, size_t* too_long);
  // Items from the lines read, while the window has room; then reads on.
  void Refill();
  void SubmitLine(const std::string& text, size_t too_long);
  // A client that goes away mid-stream: its reads end with an error.
  void WatchClient();
  void Pump();
  void Gone();
  void End();

  boost::asio::steady_timer timer_;  // the body's reads
  boost::optional<Connection::StreamParser> parser_;
  std::map<size_t, Item> active_;  // by index: read, not yet written whole
  absl::optional<ItemWindow> window_;
  std::vector<char> read_buffer_;  // a piece of the body, as read
  std::string unsplit_;            // what is read and not yet a line
  size_t unsplit_pos_ = 0;
  std::string line_;         // the current line, so far
  size_t line_skipped_ = 0;  // > 0: the current line is too long
  bool reading_ = false, input_done_ = false;
  uint64_t body_reads_ = 0;  // reads of the body so far (their timers')
  std::string cut_short_;    // the last line when the body was not read whole
  std::deque<Line> lines_;
  bool writing_ = false, gone_ = false, done_ = false;
  std::shared_ptr<bhttp::response<bhttp::empty_body>> head_;
  std::shared_ptr<bhttp::response_serializer<bhttp::empty_body>> serializer_;
  std::vector<char> watch_buffer_;
};

}  // namespace internal
}  // namespace http
}  // namespace server

#endif  // VIN_SERVER_HTTP_NDJSON_STREAM_H_
