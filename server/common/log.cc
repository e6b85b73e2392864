#include "server/common/log.h"

#include <grpc/support/log.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <deque>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "util/utf8.h"

namespace server::log {
namespace {

// How long a line may wait for the writer when nothing hurries it.
constexpr absl::Duration kFlushEvery = absl::Milliseconds(50);

// Lines dropped because the queue was full, over the process's life.
std::atomic<uint64_t> dropped_lines{0};

// The lines waiting for stdout, and the one thread that writes them. The
// writer wakes when a quarter of the queue is full, when a warning or worse
// arrives, when the logger stops, or every kFlushEvery: a busy server wakes
// it once per many lines, not once per line (a wake is a futex call and a
// context switch, which cost a decode more than formatting its line). When
// the queue is full (stdout stalled), the oldest line is dropped and
// counted; Push never waits for stdout.
class LineQueue {
 public:
  explicit LineQueue(size_t capacity)
      : capacity_(std::max<size_t>(capacity, 1)),
        hurry_at_(std::max<size_t>(capacity_ / 4, 1)),
        thread_([this] { Run(); }) {}

  // Writes out what is queued and joins the writer (which may be stuck on
  // a stalled stdout: see Stop).
  ~LineQueue() {
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
    }
    thread_.join();
  }

  void Push(std::string line, bool urgent) {
    absl::MutexLock lock(&mu_);
    if (lines_.size() >= capacity_) {
      lines_.pop_front();
      dropped_lines.fetch_add(1, std::memory_order_relaxed);
    }
    lines_.push_back(std::move(line));
    // The writer waits on this flag: while it is false, unlocking wakes
    // nobody.
    if (urgent || lines_.size() >= hurry_at_) hurry_ = true;
  }

 private:
  void Run() {
    std::deque<std::string> batch;
    bool stopping = false;
    while (!stopping) {
      mu_.LockWhenWithTimeout(absl::Condition(this, &LineQueue::Hurried),
                              kFlushEvery);
      batch.swap(lines_);
      hurry_ = false;
      stopping = stop_;
      mu_.Unlock();
      for (const std::string& line : batch) {
        std::fwrite(line.data(), 1, line.size(), stdout);
      }
      if (!batch.empty()) std::fflush(stdout);
      batch.clear();
    }
  }
  bool Hurried() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return hurry_ || stop_;
  }

  const size_t capacity_;
  const size_t hurry_at_;
  absl::Mutex mu_;
  std::deque<std::string> lines_ ABSL_GUARDED_BY(mu_);
  bool hurry_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // last: it starts running in the constructor
};

bool json_format = false;
bool color = false;  // text at a terminal: the level in colour
Level min_level = Level::kInfo;
// The queue and its writer.
std::shared_ptr<LineQueue> queue;
absl::Mutex logger_mu;  // guards `queue` while Stop drops it

// The levels: the name --log_level takes, the name a line says, and the
// colour of that name at a terminal.
struct LevelName {
  Level level;
  const char* flag;
  const char* text;
  const char* color;
};
constexpr LevelName kLevels[] = {
    {Level::kTrace, "trace", "trace", "\033[37m"},
    {Level::kDebug, "debug", "debug", "\033[36m"},
    {Level::kInfo, "info", "info", "\033[32m"},
    {Level::kWarn, "warn", "warning", "\033[33m\033[1m"},
    {Level::kError, "error", "error", "\033[31m\033[1m"},
    {Level::kCritical, "critical", "critical", "\033[1m\033[41m"},
    {Level::kOff, "off", "off", "\033[1m\033[41m"},
};

// The level as a line says it ("warning"), coloured at a terminal.
std::string LevelText(Level level) {
  const LevelName& name = kLevels[static_cast<int>(level)];
  if (!color) return name.text;
  return absl::StrCat(name.color, name.text, "\033[m");
}

// The line's prefix: text "2026-12-03T11:41:39.123 info " in local time,
// JSON {"time":"2026-12-03T11:41:39.123456Z","level":"info", in UTC.
std::string Prefix(Level level) {
  const absl::Time now = absl::Now();
  if (json_format) {
    return absl::StrCat(
        "{\"time\":\"",
        absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", now, absl::UTCTimeZone()),
        "\",\"level\":\"", LevelText(level), "\",");
  }
  return absl::StrCat(
      absl::FormatTime("%Y-%m-%dT%H:%M:%E3S ", now, absl::LocalTimeZone()),
      LevelText(level), " ");
}

// gRPC's log lines, through the same queue (gpr_log would write to stderr
// synchronously from gRPC's threads).
void FromGrpc(gpr_log_func_args* args) {
  const Level level = args->severity == GPR_LOG_SEVERITY_ERROR  ? Level::kError
                      : args->severity == GPR_LOG_SEVERITY_INFO ? Level::kInfo
                                                                : Level::kDebug;
  Event(level, absl::StrCat("grpc: ", args->message),
        {{"source", absl::StrCat(args->file, ":", args->line)}});
}

// A value longer than this is cut (on a character boundary) and marked:
// one caller's value cannot make a line of megabytes (DESIGN rule 19).
constexpr size_t kMaxValueBytes = 4096;

// `v`, or its first kMaxValueBytes cut on a character boundary and marked.
const std::string& Bounded(const std::string& v, std::string* storage) {
  if (v.size() <= kMaxValueBytes) return v;
  *storage = absl::StrCat(util::SafeText(v, kMaxValueBytes), "...(", v.size(),
                          " bytes)");
  return *storage;
}

// A text value, quoted (JSON-escaped) when it holds spaces, quotes, '=',
// anything but printable ASCII, or one of `separators`: so that one value
// can never look like several, nor like another field.
std::string TextValue(const std::string& v, absl::string_view separators = "") {
  for (char c : v) {
    if (c == ' ' || c == '"' || c == '=' ||
        !absl::ascii_isprint(static_cast<unsigned char>(c)) ||
        separators.find(c) != absl::string_view::npos) {
      return JsonString(v);
    }
  }
  return v.empty() ? "\"\"" : v;
}

// The line's message in text: our words, but it may quote a caller's, so
// a line break or invalid UTF-8 in it cannot start a line of its own.
std::string TextMessage(absl::string_view m) {
  const bool plain = std::all_of(m.begin(), m.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x20 && u != 0x7f;
  });
  if (plain && util::IsValidUtf8(m)) return std::string(m);
  return util::SafeText(m, m.size() * 3, " ");
}

}  // namespace

Field::Field(std::string k, int64_t v)
    : key(std::move(k)), text(absl::StrCat(v)), json(absl::StrCat(v)) {}

Field::Field(std::string k, double v)
    : key(std::move(k)),
      text(absl::StrFormat("%.1f", v)),
      json(absl::StrFormat("%.3f", v)) {}

Field Field::Objects(std::string k,
                     const std::vector<std::vector<Field>>& objects) {
  Field f(std::move(k), "");
  std::vector<std::string> texts, jsons;
  for (const auto& object : objects) {
    std::vector<std::string> values, members;
    for (const Field& m : object) {
      // A value with the separators in it is quoted.
      values.push_back(m.json.empty() ? TextValue(m.text, "/,") : m.text);
      members.push_back(
          absl::StrCat(JsonString(m.key), ":",
                       m.json.empty() ? JsonString(m.text) : m.json));
    }
    texts.push_back(absl::StrJoin(values, "/"));
    jsons.push_back(absl::StrCat("{", absl::StrJoin(members, ","), "}"));
  }
  f.text = absl::StrJoin(texts, ",");
  f.json = absl::StrCat("[", absl::StrJoin(jsons, ","), "]");
  return f;
}

absl::Status Init(const std::string& level, const std::string& format,
                  size_t queue_lines) {
  const LevelName* known = nullptr;
  for (const LevelName& l : kLevels) {
    if (level == l.flag) known = &l;
  }
  if (known == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--log_level must be trace, debug, info, warn, error, critical or "
        "off, got \"",
        level, "\""));
  }
  if (format != "text" && format != "json") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--log_format must be text or json, got \"", format, "\""));
  }
  json_format = format == "json";
  color = !json_format && isatty(STDOUT_FILENO) == 1;
  min_level = known->level;
  auto made = std::make_shared<LineQueue>(queue_lines);
  {
    absl::MutexLock lock(&logger_mu);
    queue = std::move(made);
  }
  gpr_set_log_function(FromGrpc);
  return absl::OkStatus();
}

uint64_t Dropped() { return dropped_lines.load(std::memory_order_relaxed); }

bool Stop(absl::Duration timeout) {
  auto done = std::make_shared<absl::Notification>();
  std::shared_ptr<LineQueue> stopping;
  {
    absl::MutexLock lock(&logger_mu);
    stopping = std::move(queue);  // nothing new is queued
  }
  std::thread([done, stopping = std::move(stopping)]() mutable {
    stopping.reset();  // writes out the queue and joins the writer
    done->Notify();
  }).detach();
  return done->WaitForNotificationWithTimeout(timeout);
}

// Printable ASCII without '"' or '\\' (nearly every value: VINs, peers,
// ids, keys) is written as it is; anything else goes through nlohmann's
// escaping.
std::string JsonString(absl::string_view s) {
  const bool plain = std::all_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x20 && u < 0x7f && c != '"' && c != '\\';
  });
  if (plain) return absl::StrCat("\"", s, "\"");
  return nlohmann::json(std::string(s))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void Event(Level level, absl::string_view message,
           const std::vector<Field>& fields) {
  if (level < min_level || level == Level::kOff) return;
  std::shared_ptr<LineQueue> to;
  {
    absl::MutexLock lock(&logger_mu);
    to = queue;
  }
  if (to == nullptr) return;
  std::string line = Prefix(level);
  std::string cut;
  if (json_format) {
    absl::StrAppend(&line, "\"msg\":", JsonString(message));
    for (const Field& f : fields) {
      absl::StrAppend(
          &line, ",", JsonString(f.key), ":",
          f.json.empty() ? JsonString(Bounded(f.text, &cut)) : f.json);
    }
  } else {
    absl::StrAppend(&line, TextMessage(message));
    for (const Field& f : fields) {
      absl::StrAppend(&line, " ", f.key, "=", TextValue(Bounded(f.text, &cut)));
    }
  }
  line += json_format ? "}\n" : "\n";
  to->Push(std::move(line), level >= Level::kWarn);
}

}  // namespace server::log
