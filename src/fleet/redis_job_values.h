// What the fleet's job store (redis_job_store.cc, redis_job_running.cc)
// shares between its files: the error of a failed call, the values its
// scripts take and give, and their bounds. Internal to src/fleet.
#ifndef VIN_FLEET_REDIS_JOB_VALUES_H_
#define VIN_FLEET_REDIS_JOB_VALUES_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "fleet/redis_value.h"

namespace fleet {
namespace job_values {

// The longest message a job's hash holds.
inline constexpr size_t kMaxMessageBytes = 4096;

// A failed call: UNAVAILABLE as it is; another (a script's error reply)
// named as the job store's.
inline absl::Status Unavailable(const absl::Status& s) {
  if (absl::IsUnavailable(s)) return s;
  // A Redis error reply (a script that failed, a refused command).
  return absl::Status(s.code(), absl::StrCat("job store: ", s.message()));
}

// A time as a script's argument: Unix microseconds, "" for none.
inline std::string TimeArg(absl::Time t) {
  return t == absl::InfinitePast() ? "" : absl::StrCat(absl::ToUnixMicros(t));
}

// An integer reply, or an integer's text; 0 otherwise.
inline int64_t IntOf(const RedisValue& v) {
  if (v.type == RedisValue::Type::kInteger) return v.integer;
  int64_t n = 0;
  if (v.type == RedisValue::Type::kString) (void)absl::SimpleAtoi(v.str, &n);
  return n;
}

}  // namespace job_values
}  // namespace fleet

#endif  // VIN_FLEET_REDIS_JOB_VALUES_H_
