// The HTTP/1.1 plumbing of the fake vPIC: request heads, blocking I/O on
// one accepted socket, and answers. Internal to the fake.
#ifndef FAKE_VPIC_HTTP_H_
#define FAKE_VPIC_HTTP_H_

#include <cstddef>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace fakevpic {

constexpr size_t kMaxHeadBytes = 64 * 1024;
constexpr size_t kMaxBodyBytes = 1024 * 1024;
constexpr absl::string_view kJson = "application/json; charset=utf-8";

std::string HttpResponse(int status, absl::string_view content_type,
                         absl::string_view body, bool close,
                         absl::string_view extra_headers = "");
// A short text/plain answer ("503 Service Unavailable").
std::string TextResponse(int status, bool close,
                         absl::string_view extra_headers = "");

struct HttpRequest {
  std::string method;
  std::string target;
  bool close = false;  // the client asked to close after the answer
  size_t content_length = 0;
  std::string accept_encoding;  // the Accept-Encoding header, "" when none
  std::string body;
};

// Parses a request head (request line and headers, without the blank line).
std::optional<HttpRequest> ParseHead(absl::string_view head);

// Blocking I/O on one accepted socket, with its read buffer.
class Connection {
 public:
  // Asks the kernel to stamp what arrives on `fd` (SO_TIMESTAMPNS).
  explicit Connection(int fd);

  // Reads the next request head. Sets `arrival` to when its first line
  // reached this machine: the kernel's receive time of the bytes that
  // completed it, so a fake whose thread was held up (a loaded machine, a
  // sanitizer build) still records when the request was sent, not when it
  // read it.
  // Returns nullopt when the peer closed, on error, or on an oversized head
  // (then `too_large` is set).
  std::optional<std::string> ReadHead(absl::Time* arrival, bool* too_large);
  // Reads `n` body bytes into `out`.
  bool ReadBody(size_t n, std::string* out);
  bool WriteAll(absl::string_view data);
  // Blocks until the peer closes (or the server shuts the socket down),
  // discarding whatever arrives meanwhile.
  void WaitForClose();

 private:
  bool Fill();

  const int fd_;
  std::string buf_;
  absl::Time received_;  // the kernel's time of the last bytes read
};

}  // namespace fakevpic

#endif  // FAKE_VPIC_HTTP_H_
