// Headless Chromium driven over the DevTools protocol, for tests of the
// gateway's page in a real browser. The protocol runs over two pipes
// (--remote-debugging-pipe: the browser reads commands on fd 3 and writes
// answers and events on fd 4, each message a JSON text ended by NUL), so no
// port is opened and no WebSocket client is needed. The browser resolves no
// host but loopback (--host-resolver-rules) and keeps its profile in a
// temporary directory, removed at the end.
//
// Not thread-safe: one test thread drives it.
#ifndef VIN_TESTS_TESTING_CHROMIUM_H_
#define VIN_TESTS_TESTING_CHROMIUM_H_

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

extern char** environ;

namespace testing_util {

class Chromium {
 public:
  using Json = nlohmann::json;

  // Starts `binary` (Debian's chromium); nullptr and `error` when it cannot.
  // Its stderr goes to `log_path`.
  static std::unique_ptr<Chromium> Launch(const std::string& binary,
                                          const std::string& log_path,
                                          std::string* error) {
    std::unique_ptr<Chromium> c(new Chromium());
    char tmpl[] = "/tmp/vin-chromium-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) {
      *error = "mkdtemp failed";
      return nullptr;
    }
    c->profile_ = tmpl;
    int to_browser[2], from_browser[2];
    if (pipe(to_browser) != 0 || pipe(from_browser) != 0) {
      *error = "pipe failed";
      return nullptr;
    }
    const std::vector<std::string> argv = {
        binary, "--headless", "--no-sandbox", "--disable-gpu",
        "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check",
        "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--disable-extensions", "--disable-default-apps",
        "--mute-audio", "--hide-scrollbars", "--window-size=1100,900",
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
        "--remote-debugging-pipe", absl::StrCat("--user-data-dir=", c->profile_),
        "about:blank"};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    posix_spawn_file_actions_adddup2(&actions, to_browser[0], 3);
    posix_spawn_file_actions_adddup2(&actions, from_browser[1], 4);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const int rc = posix_spawn(&c->pid_, binary.c_str(), &actions, nullptr,
                               args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(to_browser[0]);
    close(from_browser[1]);
    c->out_ = to_browser[1];
    c->in_ = from_browser[0];
    if (rc != 0) {
      *error = absl::StrCat("cannot start ", binary, ": ", strerror(rc));
      c->pid_ = 0;
      return nullptr;
    }
    Json version;
    if (!c->Call("Browser.getVersion", Json::object(), &version, error)) {
      *error = absl::StrCat("the browser does not answer: ", *error,
                            " (see ", log_path, ")");
      return nullptr;
    }
    return c;
  }

  ~Chromium() {
    if (out_ >= 0) close(out_);
    if (in_ >= 0) close(in_);
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      int status = 0;
      waitpid(pid_, &status, 0);
    }
    if (!profile_.empty()) {
      (void)std::system(absl::StrCat("rm -rf '", profile_, "'").c_str());
    }
  }

  // Opens `url` in a new tab; later calls go to that tab.
  bool Open(const std::string& url, std::string* error) {
    Json target, attached;
    if (!Call("Target.createTarget", {{"url", "about:blank"}}, &target, error)) {
      return false;
    }
    if (!Call("Target.attachToTarget",
              {{"targetId", target["targetId"]}, {"flatten", true}}, &attached,
              error)) {
      return false;
    }
    session_ = attached["sessionId"].get<std::string>();
    Json ignored;
    if (!Call("Page.enable", Json::object(), &ignored, error)) return false;
    events_.clear();
    if (!Call("Page.navigate", {{"url", url}}, &ignored, error)) return false;
    if (ignored.contains("errorText")) {
      *error = absl::StrCat("cannot open ", url, ": ", ignored["errorText"].dump());
      return false;
    }
    // Evaluations go to the page once its load event has fired.
    return WaitEvent("Page.loadEventFired", absl::Seconds(30), error);
  }

  // Waits for the tab's event `method` (one that came meanwhile counts).
  bool WaitEvent(const std::string& method, absl::Duration timeout,
                 std::string* error) {
    const absl::Time give_up = absl::Now() + timeout;
    for (;;) {
      for (auto it = events_.begin(); it != events_.end(); ++it) {
        if ((*it)["method"] == method) {
          events_.erase(events_.begin(), it + 1);
          return true;
        }
      }
      events_.clear();
      Json m;
      if (!Next(give_up, &m, error)) {
        *error = absl::StrCat("waiting for ", method, ": ", *error);
        return false;
      }
      if (!m.contains("id")) events_.push_back(std::move(m));
    }
  }

  // The value of the JavaScript expression `expr` in the tab (a promise is
  // awaited); false and `error` when it throws.
  bool Eval(const std::string& expr, Json* value, std::string* error,
            absl::Duration timeout = absl::Seconds(30)) {
    Json result;
    if (!Call("Runtime.evaluate",
              {{"expression", expr}, {"awaitPromise", true},
               {"returnByValue", true}, {"userGesture", true}},
              &result, error, timeout)) {
      return false;
    }
    if (result.contains("exceptionDetails")) {
      *error = result["exceptionDetails"].dump();
      return false;
    }
    *value = result["result"].value("value", Json());
    return true;
  }

  // Waits, inside the page, until `expr` is truthy: it is evaluated at once
  // and again after every change of the document (a MutationObserver), so
  // no state the page shows for a moment is missed. Its value then; null
  // when `timeout` passed first.
  bool WaitFor(const std::string& expr, absl::Duration timeout, Json* value,
               std::string* error) {
    const int64_t ms = absl::ToInt64Milliseconds(timeout);
    const std::string js = absl::StrCat(
        "new Promise((resolve) => {"
        "  const test = () => { try { return (", expr, "); } catch (e) { return null; } };"
        "  let v = test(); if (v) return resolve(v);"
        "  const obs = new MutationObserver(() => {"
        "    v = test(); if (v) { obs.disconnect(); clearTimeout(t); resolve(v); } });"
        "  obs.observe(document, {subtree: true, childList: true,"
        "                         characterData: true, attributes: true});"
        "  const t = setTimeout(() => { obs.disconnect(); resolve(null); }, ", ms, ");"
        "})");
    return Eval(js, value, error, timeout + absl::Seconds(10));
  }

  // A PNG of the tab, written to `path`.
  bool Screenshot(const std::string& path, std::string* error) {
    Json shot;
    if (!Call("Page.captureScreenshot", {{"format", "png"}}, &shot, error)) {
      return false;
    }
    std::string png;
    if (!absl::Base64Unescape(shot["data"].get<std::string>(), &png)) {
      *error = "the screenshot is not base64";
      return false;
    }
    std::ofstream(path, std::ios::binary) << png;
    return true;
  }

  // Sends `method` (to the tab once one is open) and waits for its answer.
  bool Call(const std::string& method, const Json& params, Json* result,
            std::string* error, absl::Duration timeout = absl::Seconds(30)) {
    const int id = ++next_id_;
    Json msg = {{"id", id}, {"method", method}, {"params", params}};
    if (!session_.empty() && method.rfind("Target.", 0) != 0 &&
        method.rfind("Browser.", 0) != 0) {
      msg["sessionId"] = session_;
    }
    std::string text = msg.dump();
    text.push_back('\0');
    for (size_t off = 0; off < text.size();) {
      const ssize_t n = write(out_, text.data() + off, text.size() - off);
      if (n <= 0) {
        *error = "the browser's pipe closed";
        return false;
      }
      off += static_cast<size_t>(n);
    }
    const absl::Time give_up = absl::Now() + timeout;
    for (;;) {
      Json m;
      if (!Next(give_up, &m, error)) return false;
      if (!m.contains("id")) {  // an event: kept for WaitEvent
        if (events_.size() < 1000) events_.push_back(std::move(m));
        continue;
      }
      if (m["id"] != id) continue;  // the answer of a call given up on
      if (m.contains("error")) {
        *error = absl::StrCat(method, ": ", m["error"].dump());
        return false;
      }
      *result = m.value("result", Json::object());
      return true;
    }
  }

 private:
  Chromium() = default;

  // The next message from the browser.
  bool Next(absl::Time give_up, Json* m, std::string* error) {
    for (;;) {
      const size_t end = buffer_.find('\0');
      if (end != std::string::npos) {
        *m = Json::parse(buffer_.substr(0, end), nullptr, false);
        buffer_.erase(0, end + 1);
        if (m->is_discarded()) continue;
        return true;
      }
      const int64_t left = absl::ToInt64Milliseconds(give_up - absl::Now());
      if (left <= 0) {
        *error = "the browser did not answer in time";
        return false;
      }
      pollfd p{in_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left)) <= 0) continue;
      char chunk[65536];
      const ssize_t n = read(in_, chunk, sizeof chunk);
      if (n <= 0) {
        *error = "the browser exited";
        return false;
      }
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }

  pid_t pid_ = 0;
  int out_ = -1, in_ = -1;
  int next_id_ = 0;
  std::string profile_;
  std::string session_;
  std::string buffer_;
  std::vector<Json> events_;  // the tab's events not waited for yet
};

}  // namespace testing_util

#endif  // VIN_TESTS_TESTING_CHROMIUM_H_
