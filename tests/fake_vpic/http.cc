#include "fake_vpic/http.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"

namespace fakevpic {
namespace {

const char* Reason(int status) {
  static constexpr std::pair<int, const char*> kReasons[] = {
      {200, "OK"},
      {302, "Found"},
      {400, "Bad Request"},
      {404, "Not Found"},
      {405, "Method Not Allowed"},
      {413, "Payload Too Large"},
      {429, "Too Many Requests"},
      {431, "Request Header Fields Too Large"},
      {500, "Internal Server Error"},
      {502, "Bad Gateway"},
      {503, "Service Unavailable"},
      {504, "Gateway Timeout"}};
  for (const auto& [code, reason] : kReasons) {
    if (code == status) return reason;
  }
  return "Status";
}

}  // namespace

std::string HttpResponse(int status, absl::string_view content_type,
                         absl::string_view body, bool close,
                         absl::string_view extra_headers) {
  return absl::StrCat("HTTP/1.1 ", status, " ", Reason(status),
                      "\r\nContent-Type: ", content_type,
                      "\r\nContent-Length: ", body.size(), "\r\n",
                      extra_headers, close ? "Connection: close\r\n" : "",
                      "\r\n", body);
}

std::string TextResponse(int status, bool close,
                         absl::string_view extra_headers) {
  return HttpResponse(status, "text/plain; charset=utf-8",
                      absl::StrCat(status, " ", Reason(status), "\n"), close,
                      extra_headers);
}



std::optional<HttpRequest> ParseHead(absl::string_view head) {
  std::vector<absl::string_view> lines = absl::StrSplit(head, '\n');
  std::vector<absl::string_view> first =
      absl::StrSplit(absl::StripSuffix(lines[0], "\r"), ' ', absl::SkipEmpty());
  if (first.size() != 3 || !absl::StartsWith(first[2], "HTTP/1.")) {
    return std::nullopt;
  }
  HttpRequest req;
  req.method = std::string(first[0]);
  req.target = std::string(first[1]);
  bool http10 = first[2] == "HTTP/1.0";
  bool keep_alive = false;
  for (size_t i = 1; i < lines.size(); ++i) {
    absl::string_view line = absl::StripSuffix(lines[i], "\r");
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    absl::string_view name = absl::StripAsciiWhitespace(line.substr(0, colon));
    absl::string_view value =
        absl::StripAsciiWhitespace(line.substr(colon + 1));
    if (absl::EqualsIgnoreCase(name, "connection")) {
      for (absl::string_view token : absl::StrSplit(value, ',')) {
        token = absl::StripAsciiWhitespace(token);
        if (absl::EqualsIgnoreCase(token, "close")) req.close = true;
        if (absl::EqualsIgnoreCase(token, "keep-alive")) keep_alive = true;
      }
    } else if (absl::EqualsIgnoreCase(name, "content-length")) {
      if (!absl::SimpleAtoi(value, &req.content_length)) return std::nullopt;
    } else if (absl::EqualsIgnoreCase(name, "accept-encoding")) {
      req.accept_encoding = std::string(value);
    } else if (absl::EqualsIgnoreCase(name, "transfer-encoding")) {
      req.close = true;  // bodies are not read: end the connection after
    }
  }
  if (http10 && !keep_alive) req.close = true;
  return req;
}

Connection::Connection(int fd) : fd_(fd) {
  const int on = 1;
  setsockopt(fd_, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on));
}

std::optional<std::string> Connection::ReadHead(absl::Time* arrival,
                                             bool* too_large) {
  std::optional<absl::Time> first_line;
  while (true) {
    while (!buf_.empty() && (buf_[0] == '\r' || buf_[0] == '\n')) {
      buf_.erase(0, 1);  // empty lines between requests
    }
    if (!first_line && buf_.find('\n') != std::string::npos) {
      first_line = received_;
    }
    size_t end = buf_.find("\r\n\r\n");
    size_t sep = 4;
    if (end == std::string::npos) {
      end = buf_.find("\n\n");
      sep = 2;
    }
    if (end != std::string::npos) {
      std::string head = buf_.substr(0, end);
      buf_.erase(0, end + sep);
      *arrival = *first_line;
      return head;
    }
    if (buf_.size() > kMaxHeadBytes) {
      *too_large = true;
      return std::nullopt;
    }
    if (!Fill()) return std::nullopt;
  }
}

bool Connection::ReadBody(size_t n, std::string* out) {
  while (buf_.size() < n) {
    if (!Fill()) return false;
  }
  out->assign(buf_, 0, n);
  buf_.erase(0, n);
  return true;
}

bool Connection::WriteAll(absl::string_view data) {
  while (!data.empty()) {
    ssize_t n = send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

void Connection::WaitForClose() {
  while (Fill()) buf_.clear();
}

bool Connection::Fill() {
  char chunk[16 * 1024];
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec))];
  while (true) {
    iovec iov{chunk, sizeof(chunk)};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    ssize_t n = recvmsg(fd_, &msg, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    received_ = absl::Now();  // unless the kernel says when
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
        timespec ts;
        memcpy(&ts, CMSG_DATA(c), sizeof(ts));
        received_ = absl::TimeFromTimespec(ts);
      }
    }
    buf_.append(chunk, static_cast<size_t>(n));
    return true;
  }
}

}  // namespace fakevpic
