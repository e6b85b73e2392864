#include "vpic/client.h"

#include <curl/curl.h>

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "vpic/reference.h"

namespace vpic {

struct Client::Transfer {
  RequestId id;
  CURL* easy;
  Callback done;
  HttpResult result;
  size_t max_body = 0;
  bool too_large = false;  // the body passed max_body
  std::string post_body;  // batch requests; must outlive the transfer
  char error[CURL_ERROR_SIZE] = {0};
  std::string refused;  // why curl_multi_add_handle refused it, if it did
};

namespace {

// Called by libcurl just before it sends a request of the transfer: once
// per request that leaves, also one it re-sends by itself.
int OnRequestSent(void* result, char*, char*, int, int) {
  ++static_cast<HttpResult*>(result)->requests_sent;
  return CURL_PREREQFUNC_OK;
}

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Client::Transfer*>(user);
  if (t->result.body.size() + size * n > t->max_body) {
    t->too_large = true;
    return 0;  // libcurl aborts the transfer (CURLE_WRITE_ERROR)
  }
  t->result.body.append(data, size * n);
  return size * n;
}

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  absl::string_view line(data, size * n);
  constexpr absl::string_view kName = "retry-after:";
  if (line.size() > kName.size() &&
      absl::EqualsIgnoreCase(line.substr(0, kName.size()), kName)) {
    static_cast<HttpResult*>(user)->retry_after =
        std::string(absl::StripAsciiWhitespace(line.substr(kName.size())));
  }
  return size * n;
}

struct CurlGlobal {
  CurlGlobal() { curl_global_init(CURL_GLOBAL_DEFAULT); }
};

}  // namespace

Transport TransportOf(int curl_code) {
  // On the int: a code newer than this libcurl's enum is not a valid
  // CURLcode value.
  switch (curl_code) {
    case CURLE_OK:
      return Transport::kOk;
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_PROXY:
    case CURLE_QUIC_CONNECT_ERROR:
    case CURLE_NO_CONNECTION_AVAILABLE:
      return Transport::kConnect;
    case CURLE_OPERATION_TIMEDOUT:
      return Transport::kTimeout;
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_HTTP3:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_SEND_FAIL_REWIND:
    case CURLE_WEIRD_SERVER_REPLY:  // garbled, not HTTP: a proxy or a blip
    case CURLE_CHUNK_FAILED:
    case CURLE_AGAIN:
      return Transport::kReset;
    case CURLE_FILESIZE_EXCEEDED:
      return Transport::kTooLarge;
    case CURLE_BAD_CONTENT_ENCODING:  // a broken gzip body
      return Transport::kBadEncoding;
    // Local or configuration errors: the same request would fail again.
    case CURLE_UNSUPPORTED_PROTOCOL:  // e.g. a redirect to ftp:// or file://
    case CURLE_FAILED_INIT:
    case CURLE_URL_MALFORMAT:
    case CURLE_NOT_BUILT_IN:
    case CURLE_TOO_MANY_REDIRECTS:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CLIENTCERT:
    case CURLE_USE_SSL_FAILED:
    case CURLE_REMOTE_ACCESS_DENIED:
    case CURLE_LOGIN_DENIED:
    case CURLE_AUTH_ERROR:
    case CURLE_INTERFACE_FAILED:
    case CURLE_BAD_FUNCTION_ARGUMENT:
    case CURLE_UNKNOWN_OPTION:
    case CURLE_SETOPT_OPTION_SYNTAX:
    case CURLE_FUNCTION_NOT_FOUND:
    case CURLE_RECURSIVE_API_CALL:
      return Transport::kFatal;
    // Everything else (out of memory, a write error, codes of protocols
    // this client never speaks, codes newer than this list) may pass.
    default:
      return Transport::kOther;
  }
}

std::string DecodeVinValuesUrl(const std::string& base_url,
                               const std::string& vin, int model_year) {
  std::string url = absl::StrCat(absl::StripSuffix(base_url, "/"),
                                 "/DecodeVinValues/", vin, "?format=json");
  if (model_year != 0) absl::StrAppend(&url, "&modelyear=", model_year);
  return url;
}

std::string DecodeVinValuesBatchUrl(const std::string& base_url) {
  return absl::StrCat(absl::StripSuffix(base_url, "/"),
                      "/DecodeVINValuesBatch/");
}

std::string DecodeVinValuesBatchBody(const std::vector<BatchEntry>& entries) {
  std::string body = "format=json&data=";
  bool first = true;
  for (const BatchEntry& e : entries) {
    if (!first) body += "%3B";  // ';'
    first = false;
    // VINs are validated (A-Z, 0-9) before they get here; anything else is
    // escaped all the same, so the form stays well formed.
    for (char c : e.vin) {
      if (absl::ascii_isalnum(static_cast<unsigned char>(c))) {
        body.push_back(c);
      } else {
        absl::StrAppendFormat(&body, "%%%02X", static_cast<unsigned char>(c));
      }
    }
    if (e.model_year != 0) absl::StrAppend(&body, "%2C", e.model_year);  // ','
  }
  return body;
}

absl::StatusOr<std::unique_ptr<Client>> Client::Create(ClientOptions options) {
  if (!absl::StartsWith(options.base_url, "http://") &&
      !absl::StartsWith(options.base_url, "https://")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "vPIC base URL must start with http:// or https://, got \"",
        options.base_url, "\""));
  }
  if (options.attempt_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("attempt timeout must be positive");
  }
  static CurlGlobal global;  // once per process, before any other curl call
  CURLM* multi = curl_multi_init();
  if (multi == nullptr) return absl::InternalError("curl_multi_init failed");
  return std::unique_ptr<Client>(new Client(std::move(options), multi));
}

Client::Client(ClientOptions options, void* multi)
    : options_(std::move(options)), multi_(multi) {}

Client::~Client() {
  if (loop_ != nullptr) loop_->io_timers().Cancel(curl_timer_);
  for (auto& [id, t] : transfers_) {
    curl_multi_remove_handle(multi_, t->easy);
    curl_easy_cleanup(t->easy);
  }
  for (void* easy : idle_) curl_easy_cleanup(easy);
  curl_multi_cleanup(multi_);
}

void* Client::AcquireHandle() {
  if (idle_.empty()) return curl_easy_init();
  void* easy = idle_.back();
  idle_.pop_back();
  curl_easy_reset(easy);  // keeps the connection and DNS caches
  return easy;
}

Client::Transfer* Client::Begin(const std::string& url, Callback done) {
  starting_ = std::make_unique<Transfer>();
  Transfer* t = starting_.get();
  t->id = next_id_++;
  t->easy = static_cast<CURL*>(AcquireHandle());
  t->done = std::move(done);
  CURL* e = t->easy;
  curl_easy_setopt(e, CURLOPT_URL, url.c_str());
  curl_easy_setopt(e, CURLOPT_USERAGENT, options_.user_agent.c_str());
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(absl::ToInt64Milliseconds(
                       options_.attempt_timeout)));
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(e, CURLOPT_MAXREDIRS, 3L);
  curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");  // gzip when offered
  curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
  // Only http(s), also where a redirect points.
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  t->max_body = options_.max_body_bytes;
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, t);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, &t->result);
  curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, OnRequestSent);
  curl_easy_setopt(e, CURLOPT_PREREQDATA, &t->result);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->error);
  curl_easy_setopt(e, CURLOPT_PRIVATE, t);
  return t;
}

Client::RequestId Client::Add(Transfer* t) {
  const int rc = options_.add_handle
                     ? options_.add_handle(multi_, t->easy)
                     : curl_multi_add_handle(multi_, t->easy);
  const RequestId id = t->id;
  if (rc != CURLM_OK) {
    // Not failed here: the callback runs in the loop's next turn, after the
    // caller has the id, as for any other transfer.
    t->refused = absl::StrCat(
        "libcurl could not start the request (curl_multi_add_handle: ",
        curl_multi_strerror(static_cast<CURLMcode>(rc)), ")");
    loop_->Post([this, id] {
      auto it = transfers_.find(id);
      if (it != transfers_.end()) FailRefused(it->second.get());  // not cancelled
    });
  }
  transfers_.emplace(id, std::move(starting_));
  return id;
}

Client::RequestId Client::Start(const std::string& vin, int model_year,
                                Callback done) {
  Transfer* t = Begin(DecodeVinValuesUrl(options_.base_url, vin, model_year),
                      std::move(done));
  return Add(t);
}

Client::RequestId Client::StartBatch(const std::vector<BatchEntry>& entries,
                                     Callback done) {
  Transfer* t = Begin(DecodeVinValuesBatchUrl(options_.base_url),
                      std::move(done));
  t->post_body = DecodeVinValuesBatchBody(entries);
  curl_easy_setopt(t->easy, CURLOPT_POSTFIELDS, t->post_body.c_str());
  curl_easy_setopt(t->easy, CURLOPT_POSTFIELDSIZE,
                   static_cast<long>(t->post_body.size()));
  // A POST is not re-sent on a redirect as a GET.
  curl_easy_setopt(t->easy, CURLOPT_POSTREDIR, CURL_REDIR_POST_ALL);
  return Add(t);
}

Client::RequestId Client::StartReference(const std::string& reference,
                                         Callback done) {
  return Add(Begin(ReferenceUrl(options_.base_url, reference), std::move(done)));
}

void Client::Cancel(RequestId id) {
  auto it = transfers_.find(id);
  if (it == transfers_.end()) return;
  curl_multi_remove_handle(multi_, it->second->easy);
  // The connection may be mid-transfer; do not return it to the pool.
  curl_easy_cleanup(it->second->easy);
  transfers_.erase(it);
}

void Client::Finish(Transfer* t, int curl_code) {
  const CURLcode code = static_cast<CURLcode>(curl_code);
  long status = 0;
  curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
  HttpResult result = std::move(t->result);
  result.transport = t->too_large ? Transport::kTooLarge : TransportOf(code);
  if (result.transport == Transport::kTooLarge) {
    result.transport_message = absl::StrCat(
        "vPIC's answer passed ", options_.max_body_bytes,
        " bytes and was abandoned");
    result.http_status = static_cast<int>(status);
    result.body.clear();
  } else if (result.transport != Transport::kOk) {
    result.transport_message =
        t->error[0] != '\0' ? std::string(t->error) : curl_easy_strerror(code);
    // A body that cannot be decoded still came with its status line.
    result.http_status = result.transport == Transport::kBadEncoding
                             ? static_cast<int>(status)
                             : 0;
  } else {
    result.http_status = static_cast<int>(status);
  }
  curl_multi_remove_handle(multi_, t->easy);
  idle_.push_back(t->easy);
  Callback done = std::move(t->done);
  transfers_.erase(t->id);  // destroys *t
  done(std::move(result));
}

void Client::FailRefused(Transfer* t) {
  HttpResult result;
  result.transport = Transport::kOther;  // may pass (e.g. out of memory)
  result.transport_message = std::move(t->refused);
  // libcurl never had it; a handle it rejected is not pooled.
  curl_easy_cleanup(t->easy);
  Callback done = std::move(t->done);
  transfers_.erase(t->id);  // destroys *t
  done(std::move(result));
}

void Client::Attach(loop::EventLoop* loop) {
  loop_ = loop;
  curl_multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, &Client::OnSocket);
  curl_multi_setopt(multi_, CURLMOPT_SOCKETDATA, this);
  curl_multi_setopt(multi_, CURLMOPT_TIMERFUNCTION, &Client::OnTimer);
  curl_multi_setopt(multi_, CURLMOPT_TIMERDATA, this);
}

// libcurl says which of its sockets to watch for what.
int Client::OnSocket(void* /*easy*/, int fd, int what, void* client, void*) {
  auto* c = static_cast<Client*>(client);
  if (what == CURL_POLL_REMOVE) {
    c->loop_->Unwatch(fd);
    return 0;
  }
  uint32_t events = 0;
  if (what & CURL_POLL_IN) events |= loop::EventLoop::kReadable;
  if (what & CURL_POLL_OUT) events |= loop::EventLoop::kWritable;
  const absl::Status watched =
      c->loop_->Watch(fd, events, [c, fd](uint32_t ready) {
        int bits = 0;
        if (ready & loop::EventLoop::kReadable) bits |= CURL_CSELECT_IN;
        if (ready & loop::EventLoop::kWritable) bits |= CURL_CSELECT_OUT;
        if (ready & loop::EventLoop::kError) bits |= CURL_CSELECT_ERR;
        c->Drive(fd, bits);
      });
  return watched.ok() ? 0 : -1;  // -1: libcurl fails that transfer
}

// libcurl's one timeout: when to call it back with CURL_SOCKET_TIMEOUT
// (-1: no timeout). Never driven from inside this callback.
int Client::OnTimer(void* /*multi*/, long timeout_ms, void* client) {
  auto* c = static_cast<Client*>(client);
  retry::Scheduler& timers = c->loop_->io_timers();
  timers.Cancel(c->curl_timer_);
  c->curl_timer_ = 0;
  if (timeout_ms >= 0) {
    c->curl_timer_ = timers.ScheduleAfter(absl::Milliseconds(timeout_ms), [c] {
      c->curl_timer_ = 0;
      c->Drive(CURL_SOCKET_TIMEOUT, 0);
    });
  }
  return 0;
}

void Client::Drive(int fd, int curl_events) {
  int running = 0;
  curl_multi_socket_action(multi_, fd, curl_events, &running);
  FinishDone();
}

void Client::FinishDone() {
  int left = 0;
  while (CURLMsg* msg = curl_multi_info_read(multi_, &left)) {
    if (msg->msg != CURLMSG_DONE) continue;
    Transfer* t = nullptr;
    curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &t);
    Finish(t, msg->data.result);
  }
}

}  // namespace vpic
