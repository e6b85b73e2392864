// Where the server's HTTP listeners may listen, and how (DESIGN rule 19,
// README "Security"): the host:port of --http_listen and --metrics_listen,
// the rule that the metrics leave loopback only over TLS or when the
// operator says so, and the certificates' reload interval. Pure: no I/O;
// errors are INVALID_ARGUMENT naming the flags (main exits 2).
#ifndef VIN_SERVER_COMMON_LISTENER_CHECKS_H_
#define VIN_SERVER_COMMON_LISTENER_CHECKS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/common/tls_files.h"

namespace server {

struct ListenAddress {
  std::string host;  // an IP address ("0.0.0.0" for every IPv4 address)
  int port = 0;      // 0: any free port
  bool loopback = false;
};

// `listen` as host:port: an IPv4 address, an IPv6 one in brackets
// ("[::1]:8080"), or nothing (":8080": every address); no host names.
// `flag` names the flag in errors.
absl::StatusOr<ListenAddress> ParseListenAddress(absl::string_view listen,
                                                 absl::string_view flag);

// The metrics name tenants and count their traffic: --metrics_listen may
// be a loopback address, or another only with --metrics_tls_cert_file
// (and its key) or --metrics_public. An empty `listen` (no metrics) takes
// no TLS flags.
absl::Status CheckMetricsExposure(absl::string_view listen,
                                  const TlsOptions& tls, bool metrics_public);

// --tls_reload_interval: zero (reload on SIGHUP only) or at least a second.
absl::Status CheckTlsReloadInterval(absl::Duration interval);

// The gateway's connections fitted to the process's file descriptors: the
// HTTP gateway and the metrics port together never take more than
// `file_limit` minus a reserve kept for gRPC, vPIC, Redis and files. gRPC
// 1.51 stops accepting for good after one failed accept (EMFILE), so the
// gateway must never be what exhausts the process.
struct ConnectionBudget {
  int http_max_connections = 0;  // what the gateway may hold
  int64_t reserve = 0;           // descriptors kept out of its reach
  bool lowered = false;          // less than --http_max_connections asked
  bool limited = false;          // the file limit is known (and fits an int)
};
// `reserve_flag` < 0: the default, a quarter of the limit and at least 128.
// A `file_limit` of 0 (unknown) or over INT32_MAX fits anything.
ConnectionBudget FitConnectionsToFiles(int64_t file_limit, int64_t reserve_flag,
                                       int http_max_connections,
                                       int metrics_connections);

}  // namespace server

#endif  // VIN_SERVER_COMMON_LISTENER_CHECKS_H_
