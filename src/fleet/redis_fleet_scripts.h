// The Lua scripts of the fleet's cache, leases and breaker probe
// (fleet/redis_fleet.h), each atomic in Redis.
#ifndef VIN_FLEET_REDIS_FLEET_SCRIPTS_H_
#define VIN_FLEET_REDIS_FLEET_SCRIPTS_H_

namespace fleet {
namespace scripts {

extern const char kClaim[];
extern const char kDiscardAndClaim[];
extern const char kRenew[];
extern const char kRelease[];
extern const char kClaimProbe[];

}  // namespace scripts
}  // namespace fleet

#endif  // VIN_FLEET_REDIS_FLEET_SCRIPTS_H_
