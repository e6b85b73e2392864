// A small HTTP/1.1 client for tests of the HTTP gateway (libcurl's easy
// API), and a raw socket for what libcurl will not send (slow heads, path
// tricks, oversized heads).
#ifndef VIN_TESTS_TESTING_HTTP_CLIENT_H_
#define VIN_TESTS_TESTING_HTTP_CLIENT_H_

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"

namespace testing_util {

struct HttpResponse {
  int status = 0;  // 0: no answer (`error` says why)
  std::string error;
  std::multimap<std::string, std::string> headers;  // names lower case
  std::string body;
  std::string Header(const std::string& name) const {
    auto it = headers.find(absl::AsciiStrToLower(name));
    return it == headers.end() ? "" : it->second;
  }
  size_t Count(const std::string& name) const {
    return headers.count(absl::AsciiStrToLower(name));
  }
};

// A client's TLS settings: the CA its server's certificate must chain to,
// and its own certificate and key ("" for none).
struct TlsClient {
  std::string ca, cert, key;
};

// `method` to 127.0.0.1:`port``path` on the easy handle `c` (which keeps
// its connection for the next call: keep-alive), over https with `tls`,
// with `body` (when not empty) and extra header lines ("Name: value").
inline HttpResponse Perform(CURL* c, int port, const std::string& method,
                            const std::string& path, const std::string& body,
                            const std::vector<std::string>& headers,
                            absl::Duration timeout, const TlsClient* tls) {
  HttpResponse out;
  const std::string url = absl::StrCat(tls != nullptr ? "https" : "http",
                                       "://127.0.0.1:", port, path);
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method.c_str());
  curl_easy_setopt(c, CURLOPT_NOBODY, method == "HEAD" ? 1L : 0L);
  curl_easy_setopt(c, CURLOPT_PATH_AS_IS, 1L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(absl::ToInt64Milliseconds(timeout)));
  if (tls != nullptr) {
    curl_easy_setopt(c, CURLOPT_CAINFO, tls->ca.c_str());
    if (!tls->cert.empty()) {
      curl_easy_setopt(c, CURLOPT_SSLCERT, tls->cert.c_str());
      curl_easy_setopt(c, CURLOPT_SSLKEY, tls->key.c_str());
    }
  }
  if (!body.empty() || method == "POST") {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  }
  struct curl_slist* list = nullptr;
  for (const auto& h : headers) list = curl_slist_append(list, h.c_str());
  list = curl_slist_append(list, "Expect:");
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, list);
  using Write = size_t (*)(char*, size_t, size_t, void*);
  Write on_body = [](char* p, size_t s, size_t n, void* u) {
    static_cast<HttpResponse*>(u)->body.append(p, s * n);
    return s * n;
  };
  Write on_header = [](char* p, size_t s, size_t n, void* u) {
    const absl::string_view line(p, s * n);
    const size_t colon = line.find(':');
    if (colon != absl::string_view::npos) {
      static_cast<HttpResponse*>(u)->headers.emplace(
          absl::AsciiStrToLower(line.substr(0, colon)),
          std::string(absl::StripAsciiWhitespace(line.substr(colon + 1))));
    }
    return s * n;
  };
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &out);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &out);
  const CURLcode rc = curl_easy_perform(c);
  if (rc == CURLE_OK) {
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    out.status = static_cast<int>(status);
  } else {
    out.error = curl_easy_strerror(rc);
  }
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, nullptr);
  curl_slist_free_all(list);
  return out;
}

// `method` to http://127.0.0.1:`port``path` (https with `tls`) on a
// connection of its own.
inline HttpResponse HttpCall(int port, const std::string& method,
                             const std::string& path,
                             const std::string& body = "",
                             const std::vector<std::string>& headers = {},
                             absl::Duration timeout = absl::Seconds(30),
                             const TlsClient* tls = nullptr) {
  CURL* c = curl_easy_init();
  HttpResponse out =
      Perform(c, port, method, path, body, headers, timeout, tls);
  curl_easy_cleanup(c);
  return out;
}

inline HttpResponse HttpGet(int port, const std::string& path,
                            const std::vector<std::string>& headers = {}) {
  return HttpCall(port, "GET", path, "", headers);
}

// Sends `bytes` raw on a new connection to 127.0.0.1:`port`, then reads
// until the server closes it (or `timeout`): everything it answered.
inline std::string RawExchange(int port, const std::string& bytes,
                               absl::Duration timeout = absl::Seconds(30)) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    ::close(fd);
    return "";
  }
  timeval tv{static_cast<time_t>(absl::ToInt64Seconds(timeout)), 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  std::string answer;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    answer.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return answer;
}

// Opens a connection to 127.0.0.1:`port` and sends `bytes`; returns the
// socket (-1 on failure), for the test to close when it chooses.
inline int RawSend(int port, const std::string& bytes) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) !=
          static_cast<ssize_t>(bytes.size())) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// A connection to 127.0.0.1:`port` from the local address `from`
// ("127.0.0.2": any of 127.0.0.0/8 is this host's), blocking; -1 on
// failure.
inline int ConnectFrom(int port, const std::string& from) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in local{};
  local.sin_family = AF_INET;
  local.sin_port = 0;
  if (::inet_pton(AF_INET, from.c_str(), &local.sin_addr) != 1 ||
      ::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof(local)) != 0) {
    ::close(fd);
    return -1;
  }
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Sends all of `bytes` on `fd`; false when the connection fails first.
inline bool SendAll(int fd, absl::string_view bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n =
        ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

// Reads from `fd` until the peer closes it or `timeout` passes between two
// reads; each piece read goes to `on_read` (may be empty) and, when
// `keep` is set, into the result.
inline std::string ReadUntilClosed(
    int fd, absl::Duration timeout,
    const std::function<void(absl::string_view)>& on_read = {},
    bool keep = true) {
  timeval tv{static_cast<time_t>(absl::ToInt64Seconds(timeout)), 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  std::string answer;
  char buf[16384];
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    const absl::string_view piece(buf, static_cast<size_t>(n));
    if (on_read) on_read(piece);
    if (keep) answer.append(piece.data(), piece.size());
  }
  return answer;
}

// The status code of the first response in `raw` (0 when none).
inline int RawStatus(const std::string& raw) {
  if (raw.size() < 12 || raw.compare(0, 5, "HTTP/") != 0) return 0;
  return std::atoi(raw.c_str() + 9);
}

}  // namespace testing_util

#endif  // VIN_TESTS_TESTING_HTTP_CLIENT_H_
