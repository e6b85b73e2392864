// The Lua scripts of fleet::RedisBudget: the fleet's shared bucket, its
// pushback, and its retry budget, each run atomically by Redis (EVAL).
// What each takes (KEYS, ARGV) and returns is said where it is defined.
#ifndef VIN_FLEET_REDIS_BUDGET_SCRIPTS_H_
#define VIN_FLEET_REDIS_BUDGET_SCRIPTS_H_

namespace fleet {
namespace budget_scripts {

extern const char kTake[];
extern const char kPushback[];
extern const char kRetryGrant[];

}  // namespace budget_scripts
}  // namespace fleet

#endif  // VIN_FLEET_REDIS_BUDGET_SCRIPTS_H_
