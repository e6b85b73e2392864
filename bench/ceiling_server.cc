// The ceiling the throughput benchmark compares vin-server with: a bare
// callback-API DecodeBatch server with no engine, answering every item with
// QUEUED and then a DONE carrying the same vehicle a real cache hit carries
// (built and serialized for each item, as a per-item server would).
//
// With --vpic_base_url (an http:// vPIC, the fake), the floor of the cold
// path instead: each item's DONE carries its own decode, fetched with one
// GET on the stream's keep-alive connection (gzip offered, as vin-server
// does), inflated, parsed and encoded; nothing else. The GET blocks the
// reaction, which no real server may do, but costs the least CPU there is:
// no hand-off between threads beyond the one wait for vPIC's answer. The
// GET is written by hand on a raw socket, or with --vpic_client=curl made by
// a libcurl easy handle with vin-server's options (curl_easy_perform): the
// difference is libcurl's own cost per request. Linked with vin-server's
// allocator (jemalloc), so that what differs is the rest.
//
//   ceiling_server --listen=127.0.0.1:0   (prints "listening on ... (port N)")
#include <arpa/inet.h>
#include <curl/curl.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include <csignal>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "engine_api/types.h"
#include "fake_vpic/answers.h"
#include "server/common/proto_mapping.h"
#include "vin/v1/vin.grpc.pb.h"
#include "vpic/parse.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:0", "address:port");
ABSL_FLAG(std::string, vin, "1HGAAAAA0JA000001", "the VIN whose decode is sent");
ABSL_FLAG(std::string, vpic_base_url, "",
          "http://127.0.0.1:PORT/api/vehicles: decode each item there (the "
          "cold path's floor); empty: answer every item with the cache hit");
ABSL_FLAG(std::string, vpic_client, "raw",
          "with --vpic_base_url: raw (a hand-written GET) or curl (libcurl)");

namespace {

using vin::v1::DecodeBatchRequest;
using vin::v1::DecodeBatchResponse;

[[noreturn]] void Die(const std::string& what) {
  std::cerr << "ceiling_server: " << what << std::endl;
  std::abort();
}

// `vin`'s result from vPIC's DecodeVinValues `body`, as the engine makes it.
engine::DecodeResult ResultOf(const std::string& vin, const std::string& body,
                              engine::Source source, int attempts) {
  auto decoded = vpic::ParseDecodeVinValues(body);
  if (!decoded.ok()) Die(std::string(decoded.status().message()));
  engine::DecodeResult r;
  r.vin = vin;
  r.vehicle = std::move(decoded->vehicle);
  r.notes = std::move(decoded->notes);
  r.source = source;
  r.attempts = attempts;
  r.decode_time = absl::Now();
  return r;
}

// What a cache hit of `vin` answers: the fake vPIC's decode of it.
engine::DecodeResult CacheHit(const std::string& vin) {
  auto answers = fakevpic::Answers::Load(VIN_FIXTURE_DIR);
  return ResultOf(vin, answers->Normal(vin, 0), engine::Source::kCache, 0);
}

// One keep-alive HTTP/1.1 connection to an http:// vPIC, used by one
// stream's reactions (one at a time). Dies on anything unexpected: a bench.
class VpicConnection {
 public:
  virtual ~VpicConnection() = default;
  // DecodeVinValues of `vin`: the body, inflated.
  virtual std::string Decode(const std::string& vin) = 0;
};

class RawConnection final : public VpicConnection {
 public:
  explicit RawConnection(const std::string& base_url) {
    const std::string scheme = "http://";
    const size_t host_at = scheme.size();
    const size_t colon = base_url.find(':', host_at);
    const size_t slash = base_url.find('/', host_at);
    if (base_url.compare(0, host_at, scheme) != 0 ||
        colon == std::string::npos || slash == std::string::npos) {
      Die("--vpic_base_url must be http://HOST:PORT/PATH");
    }
    path_ = base_url.substr(slash);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(
        std::atoi(base_url.substr(colon + 1, slash - colon - 1).c_str())));
    inet_pton(AF_INET, base_url.substr(host_at, colon - host_at).c_str(),
              &addr.sin_addr);
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    const int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      Die("cannot connect to " + base_url);
    }
  }
  ~RawConnection() override { close(fd_); }

  std::string Decode(const std::string& vin) override {
    const std::string request = "GET " + path_ + "/DecodeVinValues/" + vin +
                                "?format=json HTTP/1.1\r\nHost: vpic\r\n"
                                "Accept-Encoding: gzip\r\n\r\n";
    if (send(fd_, request.data(), request.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(request.size())) {
      Die("send failed");
    }
    std::string in;
    size_t head_end;
    while ((head_end = in.find("\r\n\r\n")) == std::string::npos) Read(&in);
    const std::string head = in.substr(0, head_end);
    const size_t length_at = head.find("Content-Length: ");
    if (length_at == std::string::npos) Die("no Content-Length");
    const size_t length =
        std::strtoul(head.c_str() + length_at + 16, nullptr, 10);
    while (in.size() < head_end + 4 + length) Read(&in);
    const std::string body = in.substr(head_end + 4, length);
    if (head.find("Content-Encoding: gzip") == std::string::npos) return body;
    return Gunzip(body);
  }

 private:
  void Read(std::string* in) {
    char buf[16384];
    const ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) Die("vPIC closed the connection");
    in->append(buf, static_cast<size_t>(n));
  }
  static std::string Gunzip(const std::string& gz) {
    z_stream z{};
    if (inflateInit2(&z, 15 + 16) != Z_OK) Die("inflateInit2");
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
    z.avail_in = static_cast<uInt>(gz.size());
    std::string out;
    char buf[16384];
    int rc;
    do {
      z.next_out = reinterpret_cast<Bytef*>(buf);
      z.avail_out = sizeof buf;
      rc = inflate(&z, Z_NO_FLUSH);
      if (rc != Z_OK && rc != Z_STREAM_END) Die("inflate");
      out.append(buf, sizeof buf - z.avail_out);
    } while (rc != Z_STREAM_END);
    inflateEnd(&z);
    return out;
  }

  int fd_;
  std::string path_;
};

// The same GET made by libcurl, with the options vin-server's client sets
// that bear on the cost (src/vpic/client.cc).
class CurlConnection final : public VpicConnection {
 public:
  explicit CurlConnection(std::string base_url)
      : base_url_(std::move(base_url)), easy_(curl_easy_init()) {
    curl_easy_setopt(easy_, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy_, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(easy_, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(easy_, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(easy_, CURLOPT_WRITEFUNCTION, &CurlConnection::OnBody);
  }
  ~CurlConnection() override { curl_easy_cleanup(easy_); }

  std::string Decode(const std::string& vin) override {
    const std::string url =
        base_url_ + "/DecodeVinValues/" + vin + "?format=json";
    std::string body;
    curl_easy_setopt(easy_, CURLOPT_URL, url.c_str());
    curl_easy_setopt(easy_, CURLOPT_WRITEDATA, &body);
    if (curl_easy_perform(easy_) != CURLE_OK) Die("curl_easy_perform");
    return body;
  }

 private:
  static size_t OnBody(char* data, size_t size, size_t n, void* body) {
    static_cast<std::string*>(body)->append(data, size * n);
    return size * n;
  }

  const std::string base_url_;
  CURL* const easy_;
};

std::unique_ptr<VpicConnection> Connect(const std::string& base_url) {
  if (absl::GetFlag(FLAGS_vpic_client) == "curl") {
    return std::make_unique<CurlConnection>(base_url);
  }
  return std::make_unique<RawConnection>(base_url);
}

class Call final
    : public grpc::ServerBidiReactor<DecodeBatchRequest, DecodeBatchResponse> {
 public:
  Call(const engine::DecodeResult* hit, const std::string& vpic_base_url)
      : hit_(hit) {
    if (!vpic_base_url.empty()) {
      vpic_ = Connect(vpic_base_url);
    }
    StartRead(&request_);
  }
  void OnReadDone(bool ok) override {
    // The read is not restarted before the lock below: request_ is ours.
    const engine::DecodeResult live =
        ok && vpic_ ? Decode(request_.vin()) : engine::DecodeResult{};
    absl::MutexLock lock(&mu_);
    if (!ok) {
      read_done_ = true;
    } else {
      DecodeBatchResponse queued;
      queued.set_request_id(request_.request_id());
      queued.set_vin(request_.vin());
      queued.mutable_queued();
      DecodeBatchResponse done;
      done.set_request_id(request_.request_id());
      done.set_vin(request_.vin());
      server::ToProto(vpic_ ? live : *hit_,
                      done.mutable_done()->mutable_result());
      queue_.push_back(std::move(queued));
      queue_.push_back(std::move(done));
      StartRead(&request_);
    }
    AdvanceLocked();
  }
  void OnWriteDone(bool ok) override {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    queue_.pop_front();
    if (!ok) queue_.clear();
    AdvanceLocked();
  }
  void OnDone() override { delete this; }

 private:
  void AdvanceLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!writing_ && !queue_.empty()) {
      writing_ = true;
      StartWrite(&queue_.front());
    } else if (!writing_ && read_done_ && !finished_) {
      finished_ = true;
      Finish(grpc::Status::OK);
    }
  }

  engine::DecodeResult Decode(const std::string& vin) {
    return ResultOf(vin, vpic_->Decode(vin), engine::Source::kVpic, 1);
  }

  const engine::DecodeResult* const hit_;
  std::unique_ptr<VpicConnection> vpic_;  // with --vpic_base_url
  absl::Mutex mu_;
  DecodeBatchRequest request_;
  std::deque<DecodeBatchResponse> queue_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool read_done_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

class Service final : public vin::v1::VinDecoderService::CallbackService {
 public:
  explicit Service(engine::DecodeResult hit)
      : hit_(std::move(hit)),
        vpic_base_url_(absl::GetFlag(FLAGS_vpic_base_url)) {}
  grpc::ServerBidiReactor<DecodeBatchRequest, DecodeBatchResponse>* DecodeBatch(
      grpc::CallbackServerContext*) override {
    return new Call(&hit_, vpic_base_url_);
  }

 private:
  const engine::DecodeResult hit_;
  const std::string vpic_base_url_;
};

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  curl_global_init(CURL_GLOBAL_DEFAULT);  // before any thread starts
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  Service service(CacheHit(absl::GetFlag(FLAGS_vin)));
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(absl::GetFlag(FLAGS_listen),
                           grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  auto server = builder.BuildAndStart();
  std::cout << "ceiling_server listening on " << absl::GetFlag(FLAGS_listen)
            << " (port " << port << ")" << std::endl;
  int sig = 0;
  sigwait(&signals, &sig);
  server->Shutdown();
  return 0;
}
