// The retry module's names for the clock, which lives below it
// (clocks/clock.h) so that the cache file can read time without the
// scheduler.
#ifndef VIN_RETRY_CLOCK_H_
#define VIN_RETRY_CLOCK_H_

#include "clocks/clock.h"

namespace retry {

using Clock = clocks::Clock;
using FakeClock = clocks::FakeClock;

}  // namespace retry

#endif  // VIN_RETRY_CLOCK_H_
