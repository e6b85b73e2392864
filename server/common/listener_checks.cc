#include "server/common/listener_checks.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace server {
namespace {

bool IsLoopback(const std::string& host) {
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    // ::ffff:127.x.y.z
    return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
  }
  return false;
}

bool IsAddress(const std::string& host) {
  in_addr v4{};
  in6_addr v6{};
  return inet_pton(AF_INET, host.c_str(), &v4) == 1 ||
         inet_pton(AF_INET6, host.c_str(), &v6) == 1;
}

}  // namespace

absl::StatusOr<ListenAddress> ParseListenAddress(absl::string_view listen,
                                                 absl::string_view flag) {
  const size_t colon = listen.rfind(':');
  ListenAddress out;
  if (colon == absl::string_view::npos ||
      !absl::SimpleAtoi(listen.substr(colon + 1), &out.port) || out.port < 0 ||
      out.port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, " must be host:port, got \"", listen, "\""));
  }
  std::string host(listen.substr(0, colon));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) host = "0.0.0.0";
  if (!IsAddress(host)) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": \"", host,
                     "\" is not an IP address (IPv6 in brackets: [::1]:port)"));
  }
  out.loopback = IsLoopback(host);
  out.host = std::move(host);
  return out;
}

absl::Status CheckMetricsExposure(absl::string_view listen,
                                  const TlsOptions& tls, bool metrics_public) {
  if (absl::Status s = CheckTlsOptions(tls, "--metrics_tls"); !s.ok()) {
    return s;
  }
  if (listen.empty()) {
    if (tls.enabled()) {
      return absl::InvalidArgumentError(
          "--metrics_tls_cert_file and --metrics_tls_key_file need "
          "--metrics_listen");
    }
    return absl::OkStatus();
  }
  auto address = ParseListenAddress(listen, "--metrics_listen");
  if (!address.ok()) return address.status();
  if (address->loopback || tls.enabled() || metrics_public) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--metrics_listen=", listen,
      " is not a loopback address, and the metrics name tenants and count "
      "their traffic: serve them over TLS (--metrics_tls_cert_file and "
      "--metrics_tls_key_file, and --metrics_tls_client_ca_file to require "
      "the scraper's certificate), or say --metrics_public to expose them "
      "in plaintext"));
}

absl::Status CheckTlsReloadInterval(absl::Duration interval) {
  if (interval == absl::ZeroDuration() || interval >= absl::Seconds(1)) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--tls_reload_interval must be 0 (reload on SIGHUP only) or at least "
      "1s, got ",
      absl::FormatDuration(interval)));
}

ConnectionBudget FitConnectionsToFiles(int64_t file_limit, int64_t reserve_flag,
                                       int http_max_connections,
                                       int metrics_connections) {
  ConnectionBudget b;
  b.http_max_connections = http_max_connections;
  if (file_limit <= 0 || file_limit > INT32_MAX) return b;
  b.limited = true;
  b.reserve =
      reserve_flag >= 0 ? reserve_flag : std::max<int64_t>(128, file_limit / 4);
  const int64_t room = file_limit - b.reserve - metrics_connections;
  // At least one connection: a limit too low for any is the operator's to
  // raise, and the start says what it fitted.
  const int64_t fitted = std::max<int64_t>(1, room);
  if (fitted < http_max_connections) {
    b.http_max_connections = static_cast<int>(fitted);
    b.lowered = true;
  }
  return b;
}

}  // namespace server
