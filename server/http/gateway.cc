// Gateway (gateway.h) and its Gateway::Impl (gateway_impl.h): listening,
// accepting connections (each a Connection, admitted per client address), the
// threads of the io_context, the stop; the count of waiters the engine
// holds and the rendered answers kept for cache hits.
#include "server/http/gateway.h"

#include <sys/socket.h>

#include <algorithm>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "server/common/listener_checks.h"
#include "server/common/log.h"
#include "server/http/connection.h"
#include "server/http/http_status.h"
#include "server/http/tls_context.h"
#include "server/http/vpic_decode.h"

namespace server {
namespace http {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
using tcp = net::ip::tcp;
using internal::Connection;
using internal::Rendered;

}  // namespace

// One io_context per gateway thread, each run by its thread alone (a
// concurrency hint of 1): a connection's handlers never contend for a
// scheduler shared with the other threads.
std::vector<std::unique_ptr<net::io_context>> Gateway::Impl::MakeIoContexts(
    int n) {
  std::vector<std::unique_ptr<net::io_context>> out;
  for (int i = 0; i < n; ++i)
    out.push_back(std::make_unique<net::io_context>(1));
  return out;
}

Gateway::Impl::Impl(GatewayOptions options, engine::Engine* engine)
    : options_(std::move(options)),
      engine_(engine),
      counters_(options_.counters != nullptr ? options_.counters
                                             : &own_counters_),
      iocs_(MakeIoContexts(std::max(1, options_.threads))),
      acceptor_(net::make_strand(*iocs_[0])),
      accept_backoff_(acceptor_.get_executor()) {}

void Gateway::Impl::WaiterStarted() {
  absl::MutexLock lock(&mu_);
  ++waiters_;
}

void Gateway::Impl::WaiterEnded() {
  absl::MutexLock lock(&mu_);
  --waiters_;
}

bool Gateway::Impl::Admit(const std::string& address, bool* global) {
  absl::MutexLock lock(&mu_);
  *global = connections_ >= options_.max_connections;
  if (*global) return false;
  int& n = per_client_[address];
  if (n >= options_.max_connections_per_client) {
    if (n == 0) per_client_.erase(address);
    return false;
  }
  ++n;
  ++connections_;
  counters_->connections_open.store(connections_, std::memory_order_relaxed);
  return true;
}

void Gateway::Impl::Leave(const std::string& address) {
  absl::MutexLock lock(&mu_);
  auto it = per_client_.find(address);
  if (it != per_client_.end() && --it->second <= 0) per_client_.erase(it);
  --connections_;
  counters_->connections_open.store(connections_, std::memory_order_relaxed);
}

std::shared_ptr<const Rendered> Gateway::Impl::FindRendered(
    const engine::DecodeResult& r, absl::string_view searched,
    VpicFormat format) {
  // A decode's answer is its encoded bytes; a reference answer its document.
  const std::string* bytes =
      r.encoded != nullptr ? r.encoded.get() : r.document.get();
  if (bytes == nullptr) return nullptr;
  absl::MutexLock lock(&render_mu_);
  auto it = rendered_.find({bytes, format});
  if (it == rendered_.end() || it->second->searched != searched) return nullptr;
  return it->second;
}

void Gateway::Impl::KeepRendered(std::shared_ptr<const Rendered> r) {
  if (r->encoded == nullptr) return;
  absl::MutexLock lock(&render_mu_);
  if (rendered_.size() >= kRenderedMax) rendered_.clear();  // bounded, simply
  rendered_[{r->encoded.get(), r->format}] = std::move(r);
}

void Gateway::Impl::Unregister(Connection* s) {
  absl::MutexLock lock(&mu_);
  open_.erase(s);
}

absl::Status Gateway::Impl::Listen() {
  const std::string flag = absl::StrCat(options_.flag_prefix, "_listen");
  auto listen = ParseListenAddress(options_.listen, flag);
  if (!listen.ok()) return listen.status();
  if (options_.tls.enabled()) {
    auto tls = internal::TlsContexts::Load(
        options_.tls, absl::StrCat(options_.flag_prefix, "_tls"));
    if (!tls.ok()) return tls.status();
    tls_ = *std::move(tls);
  }
  beast::error_code ec;
  const auto address = net::ip::make_address(listen->host, ec);
  if (ec) {
    return absl::InvalidArgumentError(absl::StrCat(
        flag, ": \"", listen->host, "\" is not an IP address: ", ec.message()));
  }
  const tcp::endpoint endpoint(address,
                               static_cast<unsigned short>(listen->port));
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen for ", options_.name, " on ",
                     options_.listen, ": ", ec.message()));
  }
  port_ = acceptor_.local_endpoint().port();
  auto hosts =
      AllowedHosts::Parse(options_.allowed_hosts, address.is_loopback());
  if (!hosts.ok()) return hosts.status();
  hosts_ = *std::move(hosts);
  return absl::OkStatus();
}

void Gateway::Impl::Run() {
  Accept();
  for (auto& ioc : iocs_) {
    keep_running_.push_back(net::make_work_guard(*ioc));
    {
      absl::MutexLock lock(&mu_);
      ++running_;
    }
    threads_.emplace_back([this, ioc = ioc.get()] {
      ioc->run();
      absl::MutexLock lock(&mu_);
      --running_;
    });
  }
}

void Gateway::Impl::Accept() {
  // (`this`, not a shared_ptr: a handler left in the io_context when the
  // gateway goes must not keep it alive.)
  // Connections go round the threads' io_contexts.
  net::io_context& ioc = *iocs_[next_ioc_++ % iocs_.size()];
  acceptor_.async_accept(
      net::make_strand(ioc),
      [self = this](beast::error_code ec, tcp::socket socket) {
        if (ec) return self->AcceptFailed(ec);
        self->backoff_ = absl::ZeroDuration();
        beast::error_code peer_ec;
        const auto peer = socket.remote_endpoint(peer_ec);
        const std::string client = peer_ec ? "unknown" : peer.address().to_string();
        bool global = false;
        if (!self->Admit(client, &global)) {
          (global ? self->counters_->refused_global
                  : self->counters_->refused_per_client)
              .fetch_add(1, std::memory_order_relaxed);
          self->Refuse(std::move(socket), client, global);
          return self->Accept();
        }
        auto connection =
            std::make_shared<Connection>(  // (raw: see Connection)
                self, std::move(socket), client,
                self->tls_ != nullptr ? self->tls_->Current() : nullptr);
        self->Register(connection);
        connection->Start();
        self->Accept();
      });
}

void Gateway::Impl::Refuse(tcp::socket socket, const std::string& client,
                           bool global) {
  if (tls_ != nullptr) {
    // A TLS client cannot read a plaintext answer, and a refused
    // connection is worth no handshake: closed unanswered.
    beast::error_code ec;
    socket.close(ec);
  } else if (global) {
    RefuseAtCap(std::move(socket));
  } else {
    auto connection =
        std::make_shared<Connection>(this, std::move(socket), client, nullptr);
    connection->set_counted(false);
    net::dispatch(connection->Executor(),
                  [connection] { connection->RefuseBusy(); });
  }
}

void Gateway::Impl::AcceptFailed(beast::error_code ec) {
  if (ec == net::error::operation_aborted || stopped_accepting_) return;
  counters_->accept_errors.fetch_add(1, std::memory_order_relaxed);
  // Out of file descriptors (EMFILE, ENFILE) the same connection would
  // fail again at once: accepting resumes after a back-off (10 ms,
  // doubling to 1 s), while the open connections are served.
  const bool first = backoff_ == absl::ZeroDuration();
  backoff_ =
      first ? absl::Milliseconds(10) : std::min(backoff_ * 2, absl::Seconds(1));
  if (first) {
    log::Event(log::Level::kWarn,
               absl::StrCat(options_.name, ": accept failed; backing off"),
               {{"error", ec.message()},
                {"open_connections",
                 counters_->connections_open.load(std::memory_order_relaxed)}});
  }
  accept_backoff_.expires_after(
      std::chrono::nanoseconds(absl::ToInt64Nanoseconds(backoff_)));
  accept_backoff_.async_wait([self = this](beast::error_code wait_ec) {
    if (wait_ec) return;  // cancelled: the gateway stops
    self->Accept();
  });
}

void Gateway::Impl::RefuseAtCap(tcp::socket socket) {
  static const std::string* const kBusy = [] {
    const std::string body =
        internal::ErrorBody(503, domain::ErrorReason::kTooManyConnections,
                            "the gateway has as many connections as it takes "
                            "(--http_max_connections); try again shortly",
                            true, absl::Seconds(1));
    return new std::string(internal::CannedAnswer("503 Service Unavailable",
                                                  body, "Retry-After: 1\r\n"));
  }();
  // One try, never waiting: the connection is closed whatever was sent.
  (void)::send(socket.native_handle(), kBusy->data(), kBusy->size(),
               MSG_DONTWAIT | MSG_NOSIGNAL);
  beast::error_code ec;
  socket.shutdown(tcp::socket::shutdown_both, ec);
  socket.close(ec);
}

void Gateway::Impl::Register(const std::shared_ptr<Connection>& s) {
  absl::MutexLock lock(&mu_);
  open_[s.get()] = s;
}

void Gateway::Impl::Stop() {
  if (stopped_) return;
  stopped_ = true;
  net::post(acceptor_.get_executor(), [self = this] {
    self->stopped_accepting_ = true;
    self->accept_backoff_.cancel();
    beast::error_code ec;
    self->acceptor_.close(ec);
  });
  std::vector<std::shared_ptr<Connection>> live;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [p, w] : open_) {
      if (auto s = w.lock()) live.push_back(std::move(s));
    }
  }
  for (auto& s : live) s->Close();
  live.clear();
  // Every waiter given to the engine ends (cancelled by its connection's
  // close, or answered) before the loop goes.
  {
    absl::MutexLock lock(&mu_);
    auto none = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return waiters_ == 0; };
    mu_.AwaitWithTimeout(absl::Condition(&none), absl::Seconds(30));
  }
  for (auto& guard : keep_running_) guard.reset();
  // Every socket is closed and the acceptor too: the threads' work runs
  // out (the handlers of the closes and aborted operations, answers under
  // way); stopped only if it does not within 5 s. What a stop leaves queued
  // is destroyed with iocs_ (see the members' order).
  {
    absl::MutexLock lock(&mu_);
    auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return running_ == 0; };
    mu_.AwaitWithTimeout(absl::Condition(&idle), absl::Seconds(5));
  }
  for (auto& ioc : iocs_) ioc->stop();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

// ---------------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<Gateway>> Gateway::Start(GatewayOptions options,
                                                        engine::Engine* engine) {
  if (options.stream_window < 1) {
    return absl::InvalidArgumentError(
        "the /v1/decode:batch window must be at least 1 item");
  }
  auto impl = std::make_shared<Impl>(std::move(options), engine);
  if (absl::Status s = impl->Listen(); !s.ok()) return s;
  impl->Run();
  return std::unique_ptr<Gateway>(new Gateway(std::move(impl)));
}

Gateway::Gateway(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

Gateway::~Gateway() { Shutdown(); }

int Gateway::port() const { return impl_->port(); }

bool Gateway::tls() const { return impl_->tls() != nullptr; }

TlsMaterial Gateway::certificate() const {
  return impl_->tls() != nullptr ? impl_->tls()->certificate() : TlsMaterial{};
}

absl::StatusOr<bool> Gateway::ReloadCertificates() {
  if (impl_->tls() == nullptr) return false;
  return impl_->tls()->Reload();
}

void Gateway::Shutdown() { impl_->Stop(); }

}  // namespace http
}  // namespace server
