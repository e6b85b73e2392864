#include "fleet/redis_fleet_scripts.h"

namespace fleet {
namespace scripts {

// The lease of KEYS[2] for ARGV[1] (the token), ARGV[2] ms, when it is
// free or already this token's: {2}; taken: {3}.
#define VIN_FLEET_LEASE                                                      \
  "if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then\n"      \
  "  return {2, dropped}\n"                                                 \
  "end\n"                                                                   \
  "if redis.call('GET', KEYS[2]) == ARGV[1] then\n"                         \
  "  redis.call('PEXPIRE', KEYS[2], ARGV[2])\n"                             \
  "  return {2, dropped}\n"                                                 \
  "end\n"                                                                   \
  "return {3, dropped}\n"

// The shared cache's answer (KEYS[1]), else the lease. The replica checks
// the answer before it believes it (fleet/trust.h); what cannot be a
// result at all -- not a string, or longer than ARGV[3] bytes -- is
// deleted here, never sent, and the lease is asked as on a miss
// ({2 or 3, 1}: one value dropped).
const char kClaim[] =
    "local dropped = 0\n"
    "local v = redis.pcall('GET', KEYS[1])\n"
    "if type(v) == 'table' or (v and #v > tonumber(ARGV[3])) then\n"
    "  redis.call('DEL', KEYS[1])\n"
    "  v = false\n"
    "  dropped = 1\n"
    "end\n"
    "if v then return {1, v} end\n" VIN_FLEET_LEASE;

// After the replica rejected the cached value: deletes it if it is still
// the one rejected (its SHA-1 is ARGV[3]: a value written meanwhile
// stays), and asks the lease without reading the cache again.
const char kDiscardAndClaim[] =
    "local dropped = 0\n"
    "local v = redis.pcall('GET', KEYS[1])\n"
    "if type(v) == 'string' and redis.sha1hex(v) == ARGV[3] then\n"
    "  redis.call('DEL', KEYS[1])\n"
    "  dropped = 1\n"
    "end\n" VIN_FLEET_LEASE;

const char kRenew[] = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0)lua";

const char kRelease[] = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0)lua";

// The breaker's probe: free or already ours, it is ours for ARGV[2] ms
// ({1}); else {0, ms left}.
const char kClaimProbe[] = R"lua(
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {1} end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1}
end
return {0, redis.call('PTTL', KEYS[1])})lua";

#undef VIN_FLEET_LEASE

}  // namespace scripts
}  // namespace fleet
