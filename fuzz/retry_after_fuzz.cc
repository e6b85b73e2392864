// Retry-After values (seconds or an HTTP date) on any bytes: no crash, and a
// wait is never negative.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "vpic/classify.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string value(reinterpret_cast<const char*>(data), size);
  auto wait = vpic::ParseRetryAfter(value, absl::FromUnixSeconds(1800000000));
  if (wait && *wait < absl::ZeroDuration()) __builtin_trap();
  return 0;
}
