// The finished decodes kept (in memory, on disk), the offline snapshot, and
// which source a request uses when it leaves that unspecified.
// --help lists these flags under "cache and snapshot (finished decodes, offline
// vPIC data)" (server/flags.cc).

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "server/common/proto_mapping.h"
#include "server/flag_groups.h"
#include "util/read_file.h"

ABSL_FLAG(int64_t, cache_capacity, 100000,
          "finished decodes kept in memory (0 disables the cache)");
ABSL_FLAG(absl::Duration, cache_ttl, absl::Hours(24),
          "how long a finished decode is served from the cache");
ABSL_FLAG(absl::Duration, reference_ttl, absl::Hours(24),
          "how long an answer of vPIC's other endpoints (GetAllMakes, "
          "GetModelsForMake, ...) is served from the cache");
ABSL_FLAG(absl::Duration, cache_stale_max, absl::Hours(24 * 30),
          "entries older than --cache_ttl are kept this long in all, to "
          "answer (labelled stale) when vPIC cannot");
ABSL_FLAG(std::string, cache_path, "",
          "SQLite file keeping finished decodes across restarts (\"\": "
          "memory only); scripts/serve.sh passes .data/cache.db");
ABSL_FLAG(int64_t, cache_disk_max_bytes, int64_t{2} << 30,
          "bound on the cache file's rows; the oldest decodes go first");
ABSL_FLAG(std::string, snapshot_path, "",
          "the vPIC snapshot file (scripts/fetch_snapshot.sh writes "
          ".data/vpic.lite.db) for offline decodes; empty: live only. SIGHUP "
          "reloads it without a restart");
ABSL_FLAG(absl::Duration, snapshot_reload_timeout, absl::Seconds(60),
          "a load of --snapshot_path (at start, or on SIGHUP) taking longer "
          "is abandoned and the server keeps what it had (the pinned "
          "snapshot loads in about 0.5 s)");
ABSL_FLAG(absl::Duration, snapshot_max_age, absl::Hours(24 * 62),
          "health of vin.v1.VinDecoderService.snapshot is SERVING while the "
          "loaded snapshot's data is younger than this");
ABSL_FLAG(std::string, snapshot_sha256, "",
          "the sha256 (64 hex digits) a snapshot file must have to be loaded, "
          "at start and on SIGHUP; another is refused and the snapshot in use "
          "stays (empty: any)");
ABSL_FLAG(std::string, snapshot_golden, "",
          "a file of VIN,Make,Model,ModelYear lines a reloaded snapshot must "
          "decode about as well as the one in use (empty: the set built into "
          "the binary, server/snapshot_golden.csv)");
ABSL_FLAG(double, snapshot_golden_slack, 0.5,
          "how many points (of 100) less than the snapshot in use a reloaded "
          "one may agree with the golden set; more, and it is refused");
ABSL_FLAG(double, parity_sample, 1.0,
          "the share of live vPIC answers also decoded from the snapshot and "
          "compared (rule 21; 0: none), off the answer's path");
ABSL_FLAG(int, parity_window, 1000,
          "the last compared live answers whose make/model/year agreement "
          "decides the snapshot's health");
ABSL_FLAG(double, parity_min, 0.97,
          "below this make/model/year agreement over --parity_window, the "
          "snapshot's health is NOT_SERVING (its answers are still given)");
ABSL_FLAG(int, suggestions_per_second, 200,
          "how many invalid VINs a second get suggested corrections from the "
          "snapshot (rule 21; each costs up to a millisecond; 0: none)");
ABSL_FLAG(std::string, source_preference, "auto",
          "for requests that leave it unspecified: auto (live_then_snapshot "
          "when a snapshot is loaded, live_only otherwise), live_only, "
          "snapshot_only or live_then_snapshot");

namespace server {
namespace {

// "auto", or a SourcePreference value's name without its prefix, in lower
// case ("live_only"): the proto's enum is the one list of names.
bool ParseSourcePreference(const std::string& text,
                           engine::SourcePreference* out) {
  vin::v1::SourcePreference value = vin::v1::SOURCE_PREFERENCE_UNSPECIFIED;
  if (text != "auto" &&
      (text != absl::AsciiStrToLower(text) || text == "unspecified" ||
       !vin::v1::SourcePreference_Parse(
           absl::StrCat("SOURCE_PREFERENCE_", absl::AsciiStrToUpper(text)),
           &value))) {
    return false;
  }
  *out = server::FromProto(value);
  return true;
}

}  // namespace

// The finished decodes kept (memory, disk) and the offline snapshot.
absl::Status CacheFromFlags(ServerOptions& options) {
  options.snapshot_path = absl::GetFlag(FLAGS_snapshot_path);
  options.snapshot_max_age = absl::GetFlag(FLAGS_snapshot_max_age);
  options.snapshot_reload_timeout =
      absl::GetFlag(FLAGS_snapshot_reload_timeout);
  options.snapshot_sha256 =
      absl::AsciiStrToLower(absl::GetFlag(FLAGS_snapshot_sha256));
  if (!options.snapshot_sha256.empty() &&
      (options.snapshot_sha256.size() != 64 ||
       options.snapshot_sha256.find_first_not_of("0123456789abcdef") !=
           std::string::npos)) {
    return absl::InvalidArgumentError(
        "--snapshot_sha256 must be 64 hex digits (sha256sum's output)");
  }
  if (const std::string golden = absl::GetFlag(FLAGS_snapshot_golden);
      !golden.empty()) {
    absl::StatusOr<std::string> text =
        util::ReadSmallFile(golden, "the golden set (--snapshot_golden)");
    if (!text.ok()) return text.status();
    options.snapshot_golden = *std::move(text);
  }
  options.snapshot_golden_slack =
      absl::GetFlag(FLAGS_snapshot_golden_slack) / 100;
  if (options.snapshot_golden_slack < 0 || options.snapshot_golden_slack > 1) {
    return absl::InvalidArgumentError(
        "--snapshot_golden_slack is in points, between 0 and 100");
  }
  options.parity.sample = absl::GetFlag(FLAGS_parity_sample);
  options.parity.window = absl::GetFlag(FLAGS_parity_window);
  options.parity.min = absl::GetFlag(FLAGS_parity_min);
  if (options.parity.sample < 0 || options.parity.sample > 1 ||
      options.parity.min < 0 || options.parity.min > 1) {
    return absl::InvalidArgumentError(
        "--parity_sample and --parity_min are shares between 0 and 1");
  }
  options.engine.suggestions_per_second =
      absl::GetFlag(FLAGS_suggestions_per_second);
  if (options.engine.suggestions_per_second < 0) {
    return absl::InvalidArgumentError(
        "--suggestions_per_second must be 0 or more");
  }
  if (options.parity.window < 1) {
    return absl::InvalidArgumentError("--parity_window must be at least 1");
  }
  if (options.snapshot_reload_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--snapshot_reload_timeout must be a duration above 0 (e.g. 60s), "
        "got ",
        absl::FormatDuration(options.snapshot_reload_timeout)));
  }
  engine::EngineOptions& e = options.engine;
  e.cache_capacity = static_cast<size_t>(
      std::max<int64_t>(0, absl::GetFlag(FLAGS_cache_capacity)));
  e.cache_ttl = absl::GetFlag(FLAGS_cache_ttl);
  e.reference_ttl = absl::GetFlag(FLAGS_reference_ttl);
  for (const auto& [name, ttl] :
       {std::pair<const char*, absl::Duration>{"cache_ttl", e.cache_ttl},
        {"reference_ttl", e.reference_ttl}}) {
    if (ttl <= absl::ZeroDuration()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", name, " must be a duration above 0 (e.g. 24h), got ",
                       absl::FormatDuration(ttl)));
    }
  }
  e.cache_stale_max = absl::GetFlag(FLAGS_cache_stale_max);
  options.cache_path = absl::GetFlag(FLAGS_cache_path);
  options.cache_disk_max_bytes = absl::GetFlag(FLAGS_cache_disk_max_bytes);
  return absl::OkStatus();
}

absl::Status SourcePreferenceFromFlags(engine::EngineOptions& e) {
  if (!ParseSourcePreference(absl::GetFlag(FLAGS_source_preference),
                             &e.default_source)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--source_preference must be auto, live_only, snapshot_only or "
        "live_then_snapshot, got \"",
        absl::GetFlag(FLAGS_source_preference), "\""));
  }
  return absl::OkStatus();
}

}  // namespace server
