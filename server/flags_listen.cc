// vin-server's listeners (gRPC, the HTTP gateway, the metrics port) and
// their TLS files.
// --help lists these flags under "listeners and TLS (gRPC, HTTP gateway,
// metrics)" (server/flags.cc).

#include <string>

#include "absl/flags/flag.h"
#include "server/flag_groups.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:50051", "address:port to serve on");
ABSL_FLAG(std::string, http_listen, "",
          "address:port for the HTTP gateway: vPIC's own paths "
          "(/api/vehicles/DecodeVinValues/{vin}...) and the JSON API "
          "(/v1/decode); empty: off (scripts/serve.sh passes 127.0.0.1:8080)");
ABSL_FLAG(std::string, metrics_listen, "",
          "address:port for Prometheus metrics (GET /metrics); empty: no "
          "metrics (scripts/serve.sh passes 127.0.0.1:9464); an address "
          "that is not loopback needs --metrics_tls_cert_file or "
          "--metrics_public");
ABSL_FLAG(bool, metrics_public, false,
          "allow --metrics_listen on an address that is not loopback without "
          "TLS (the metrics name tenants and count their traffic)");
ABSL_FLAG(std::string, tls_cert_file, "",
          "PEM certificate chain to serve TLS with (with --tls_key_file); "
          "empty: plaintext");
ABSL_FLAG(std::string, tls_key_file, "", "PEM private key of --tls_cert_file");
ABSL_FLAG(std::string, tls_client_ca_file, "",
          "PEM CA bundle: clients must present a certificate it signed (mTLS)");
ABSL_FLAG(std::string, http_tls_cert_file, "",
          "PEM certificate chain for the HTTP gateway to serve TLS with "
          "(with --http_tls_key_file); empty: plaintext");
ABSL_FLAG(std::string, http_tls_key_file, "",
          "PEM private key of --http_tls_cert_file");
ABSL_FLAG(std::string, http_tls_client_ca_file, "",
          "PEM CA bundle: HTTP clients must present a certificate it signed, "
          "whose subject is then their tenant, as over gRPC");
ABSL_FLAG(std::string, metrics_tls_cert_file, "",
          "PEM certificate chain for the metrics port to serve TLS with (with "
          "--metrics_tls_key_file); empty: plaintext");
ABSL_FLAG(std::string, metrics_tls_key_file, "",
          "PEM private key of --metrics_tls_cert_file");
ABSL_FLAG(std::string, metrics_tls_client_ca_file, "",
          "PEM CA bundle: scrapers must present a certificate it signed");
ABSL_FLAG(absl::Duration, tls_reload_interval, absl::Seconds(60),
          "how often every TLS listener's certificate files (--tls_*, "
          "--http_tls_*, --metrics_tls_*) are read again: changed files that "
          "load are taken for new connections, open ones keep theirs; SIGHUP "
          "reloads at once (0: on SIGHUP only)");

namespace server {

// The listeners' addresses and their TLS files (checked by
// VinServer::Start: listener_checks.h).
void ListenersFromFlags(ServerOptions& options) {
  options.listen = absl::GetFlag(FLAGS_listen);
  options.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  options.metrics_public = absl::GetFlag(FLAGS_metrics_public);
  options.http.listen = absl::GetFlag(FLAGS_http_listen);
  options.tls.cert_file = absl::GetFlag(FLAGS_tls_cert_file);
  options.tls.key_file = absl::GetFlag(FLAGS_tls_key_file);
  options.tls.client_ca_file = absl::GetFlag(FLAGS_tls_client_ca_file);
  options.tls_reload_interval = absl::GetFlag(FLAGS_tls_reload_interval);
  options.http.tls.cert_file = absl::GetFlag(FLAGS_http_tls_cert_file);
  options.http.tls.key_file = absl::GetFlag(FLAGS_http_tls_key_file);
  options.http.tls.client_ca_file =
      absl::GetFlag(FLAGS_http_tls_client_ca_file);
  options.metrics_tls.cert_file = absl::GetFlag(FLAGS_metrics_tls_cert_file);
  options.metrics_tls.key_file = absl::GetFlag(FLAGS_metrics_tls_key_file);
  options.metrics_tls.client_ca_file =
      absl::GetFlag(FLAGS_metrics_tls_client_ca_file);
}

}  // namespace server
