#include "server/log.h"

#include <grpc/support/log.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include <spdlog/async.h>
#include <spdlog/async_logger.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"

namespace server::log {
namespace {

bool json_format = false;
// The logging thread and its bounded queue, and the logger over it: ours,
// not spdlog's global registry (the process never touches that one).
std::shared_ptr<spdlog::details::thread_pool> pool;
std::shared_ptr<spdlog::async_logger> logger;
absl::Mutex logger_mu;  // guards `logger` while Stop drops it

// gRPC's log lines, through the same queue (gpr_log would write to stderr
// synchronously from gRPC's threads).
void FromGrpc(gpr_log_func_args* args) {
  const spdlog::level::level_enum level =
      args->severity == GPR_LOG_SEVERITY_ERROR  ? spdlog::level::err
      : args->severity == GPR_LOG_SEVERITY_INFO ? spdlog::level::info
                                                : spdlog::level::debug;
  Event(level, absl::StrCat("grpc: ", args->message),
        {{"source", absl::StrCat(args->file, ":", args->line)}});
}

std::string Quote(absl::string_view s) {
  return nlohmann::json(std::string(s))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A text value, quoted when it holds spaces, quotes or '='.
std::string TextValue(const std::string& v) {
  for (char c : v) {
    if (c == ' ' || c == '"' || c == '=' || !absl::ascii_isprint(static_cast<unsigned char>(c))) {
      return Quote(v);
    }
  }
  return v.empty() ? "\"\"" : v;
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
      values.push_back(m.text);
      members.push_back(absl::StrCat(Quote(m.key), ":",
                                     m.json.empty() ? Quote(m.text) : m.json));
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
  static const char* const kLevels[] = {"trace", "debug",    "info", "warn",
                                        "error", "critical", "off"};
  bool known = false;
  for (const char* l : kLevels) known = known || level == l;
  if (!known) {
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
  pool = std::make_shared<spdlog::details::thread_pool>(queue_lines, 1);
  spdlog::sink_ptr sink;
  if (json_format) {
    sink = std::make_shared<spdlog::sinks::stdout_sink_mt>();
  } else {
    sink = std::make_shared<spdlog::sinks::stdout_color_sink_mt>();
  }
  auto made = std::make_shared<spdlog::async_logger>(
      "vin-server", sink, pool, spdlog::async_overflow_policy::overrun_oldest);
  made->set_level(spdlog::level::from_str(level));
  if (json_format) {
    made->set_pattern(R"({"time":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l",%v})",
                      spdlog::pattern_time_type::utc);
  } else {
    made->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  }
  {
    absl::MutexLock lock(&logger_mu);
    logger = std::move(made);
  }
  gpr_set_log_function(FromGrpc);
  return absl::OkStatus();
}

uint64_t Dropped() { return pool ? pool->overrun_counter() : 0; }

bool Stop(absl::Duration timeout) {
  auto done = std::make_shared<absl::Notification>();
  {
    absl::MutexLock lock(&logger_mu);
    logger.reset();  // nothing new is queued
  }
  std::thread([done] {
    pool.reset();  // drains the queue and joins the logging thread
    done->Notify();
  }).detach();
  return done->WaitForNotificationWithTimeout(timeout);
}

void Event(spdlog::level::level_enum level, absl::string_view message,
           const std::vector<Field>& fields) {
  std::shared_ptr<spdlog::async_logger> to;
  {
    absl::MutexLock lock(&logger_mu);
    to = logger;
  }
  if (to == nullptr || !to->should_log(level)) return;
  std::string line;
  if (json_format) {
    line = absl::StrCat("\"msg\":", Quote(message));
    for (const Field& f : fields) {
      absl::StrAppend(&line, ",", Quote(f.key), ":",
                      f.json.empty() ? Quote(f.text) : f.json);
    }
  } else {
    line = std::string(message);
    for (const Field& f : fields) {
      absl::StrAppend(&line, " ", f.key, "=", TextValue(f.text));
    }
  }
  to->log(level, "{}", line);
}

}  // namespace server::log
