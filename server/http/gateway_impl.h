// Gateway::Impl (gateway.h): the acceptor, the threads, the per-client
// admission, the listener's TLS contexts, the rendered answers kept.
// Defined in gateway.cc; private to server/http/, with connection.h and
// exchange.h the only headers that see Boost.
#ifndef VIN_SERVER_HTTP_GATEWAY_IMPL_H_
#define VIN_SERVER_HTTP_GATEWAY_IMPL_H_

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "engine/engine.h"
#include "server/http/gateway.h"
#include "server/http/request_checks.h"
#include "server/http/tls_context.h"
#include "server/http/vpic_document.h"

namespace server {
namespace http {
namespace internal {
class Connection;
struct Rendered;
}  // namespace internal

class Gateway::Impl : public std::enable_shared_from_this<Gateway::Impl> {
 public:
  Impl(GatewayOptions options, engine::Engine* engine);

  absl::Status Listen();
  void Run();
  void Stop();

  int port() const { return port_; }
  const GatewayOptions& options() const { return options_; }
  engine::Engine* engine() const { return engine_; }

  // Waiters given to the engine and not yet ended: the gateway does not
  // go before they have.
  void WaiterStarted();
  void WaiterEnded();

  // Connections: false when `address` has its share (or all clients
  // theirs: `*global` says which). Leave when an admitted one closes.
  bool Admit(const std::string& address, bool* global);
  void Leave(const std::string& address);
  const AllowedHosts& allowed_hosts() const { return hosts_; }
  // The listener's TLS contexts; null for plaintext.
  internal::TlsContexts* tls() const { return tls_.get(); }
  GatewayCounters& counters() { return *counters_; }
  void Register(const std::shared_ptr<internal::Connection>& s);

  // The rendered answer for `r` asked as `searched` in `format`, if kept.
  std::shared_ptr<const internal::Rendered> FindRendered(
      const engine::DecodeResult& r, absl::string_view searched,
      VpicFormat format);
  void KeepRendered(std::shared_ptr<const internal::Rendered> r);
  void Unregister(internal::Connection* s);

 private:
  void Accept();
  // An accept failed with `ec`: out of file descriptors (EMFILE, ENFILE)
  // or another error; accepting resumes after a back-off, so that the
  // loop never spins while the open connections are served.
  void AcceptFailed(boost::system::error_code ec);
  // A connection over a cap (`global`: --http_max_connections, else its
  // client's share): 503 or 429 over plaintext, closed unanswered on TLS.
  void Refuse(boost::asio::ip::tcp::socket socket, const std::string& client,
              bool global);
  // Answers a connection over --http_max_connections 503 without reading
  // it (one non-blocking send) and closes it.
  static void RefuseAtCap(boost::asio::ip::tcp::socket socket);
  static std::vector<std::unique_ptr<boost::asio::io_context>> MakeIoContexts(
      int n);

  // The order matters: members are destroyed last to first, and connections
  // that pending handlers still hold are destroyed with iocs_ (their
  // destructors use mu_, per_client_ and open_), after acceptor_.
  const GatewayOptions options_;
  engine::Engine* const engine_;

  AllowedHosts hosts_;                          // set by Listen, then read-only
  std::unique_ptr<internal::TlsContexts> tls_;  // set by Listen; null: plain
  GatewayCounters own_counters_;
  GatewayCounters* const counters_;  // options_.counters, else own_counters_

  absl::Mutex mu_;
  int waiters_ ABSL_GUARDED_BY(mu_) = 0;
  int connections_ ABSL_GUARDED_BY(mu_) = 0;  // admitted, open
  int running_ ABSL_GUARDED_BY(mu_) = 0;      // threads in run()
  std::map<std::string, int> per_client_ ABSL_GUARDED_BY(mu_);
  std::map<internal::Connection*, std::weak_ptr<internal::Connection>> open_
      ABSL_GUARDED_BY(mu_);

  static constexpr size_t kRenderedMax = 4096;
  absl::Mutex render_mu_;
  std::map<std::pair<const std::string*, VpicFormat>,
           std::shared_ptr<const internal::Rendered>>
      rendered_ ABSL_GUARDED_BY(render_mu_);

  // One per thread (MakeIoContexts); the acceptor is the first's.
  std::vector<std::unique_ptr<boost::asio::io_context>> iocs_;
  // Each thread runs until Stop, also while its io_context has no
  // connection yet.
  std::vector<
      boost::asio::executor_work_guard<boost::asio::io_context::executor_type>>
      keep_running_;
  size_t next_ioc_ = 0;  // on the acceptor's strand
  boost::asio::ip::tcp::acceptor acceptor_;
  // On the acceptor's strand.
  boost::asio::steady_timer accept_backoff_;
  absl::Duration backoff_ = absl::ZeroDuration();
  bool stopped_accepting_ = false;
  std::vector<std::thread> threads_;
  int port_ = 0;
  bool stopped_ = false;
};

}  // namespace http
}  // namespace server

#endif  // VIN_SERVER_HTTP_GATEWAY_IMPL_H_
