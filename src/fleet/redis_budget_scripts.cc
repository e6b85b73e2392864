#include "fleet/redis_budget_scripts.h"

namespace fleet {
namespace budget_scripts {

// Every script's time: ms of the fleet's clock, ARGV[i] when the replica
// passes one (a test's fake clock), else Redis's own.
#define VIN_FLEET_NOW(i)                                                     \
  "local now = tonumber(ARGV[" #i "])\n"                                     \
  "if not now then\n"                                                        \
  "  local t = redis.call('TIME')\n"                                         \
  "  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"      \
  "end\n"                                                                    \
  "local function fmt(x) return string.format('%.17g', x) end\n"             \
  "local function clamp(x, lo, hi) return math.max(lo, math.min(hi, x)) end\n"

// The shared bucket, in one hash: tokens, ts (when tokens was right, ms of
// the fleet's clock), rate (per minute, effective), paused (until, ms),
// raised (the last raise of the rate, ms). Settles the tokens at the rate
// so far, raises the rate if successes came (as upstream::Pushback does),
// then takes one token if asked to and it can (as upstream::TokenBucket
// does). ARGV: configured rate per minute (<= 0 unlimited), burst,
// successes since the replica's last ask, 1 to take a token (0: only the
// successes), the time, and (rule 17) 1 when the request is bulk work
// alone, the tokens kept in reserve for interactive requests, and bulk's
// share of the rate now (1 outside peak hours), and (ARGV[9]) the longest
// pause in ms (--retry_after_max). A bulk request takes a token only while
// more than the reserve is left, and during peak hours also one of bulk's
// own bucket (bt, bts: at the share of the rate, burst 1). What the hash
// holds is bounded before it is used, as anyone who reaches Redis may
// have written it: tokens to [0, burst], times to now (a pause to ARGV[9]
// from now), the rate to [min(1, conf), conf]. Returns {granted 0/1, ms
// until the next token, ms left of a pause, effective rate, ms from now
// to the last raise}.
const char kTake[] = VIN_FLEET_NOW(5) R"lua(
local conf = tonumber(ARGV[1])
local burst = math.max(1, tonumber(ARGV[2]))
local succ = tonumber(ARGV[3])
local take = tonumber(ARGV[4])
local bulk = tonumber(ARGV[6]) or 0
local reserve = math.min(tonumber(ARGV[7]) or 0, burst - 1)
local share = tonumber(ARGV[8]) or 1
local h = redis.call('HMGET', KEYS[1], 'tokens', 'ts', 'rate', 'paused', 'raised',
                     'bt', 'bts')
local pause_max = tonumber(ARGV[9]) or 60000
local tokens = clamp(tonumber(h[1]) or burst, 0, burst)
local ts = clamp(tonumber(h[2]) or now, 0, now)
local rate = tonumber(h[3]) or conf
local paused = clamp(tonumber(h[4]) or 0, 0, now + pause_max)
local raised = clamp(tonumber(h[5]) or 0, 0, math.max(paused, now))
local bt = clamp(tonumber(h[6]) or 1, 0, 1)
local bts = clamp(tonumber(h[7]) or now, 0, now)
if conf > 0 then rate = clamp(rate, math.min(1, conf), conf) end
-- Only asks of bulk work at peak hours (share < 1) move bulk's bucket:
-- the others leave its refill to come.
if share < 1 and conf > 0 and now > bts then
  bt = math.min(1, bt + (now - bts) * rate * share / 60000)
  bts = now
end
if conf > 0 and now > ts then
  tokens = math.min(burst, tokens + (now - ts) * rate / 60000)
  ts = now
end
if succ > 0 and conf > 0 and rate < conf and now >= paused then
  rate = math.min(conf, rate + conf * (math.max(0, now - raised) / 60000))
  raised = math.max(raised, now)
end
local granted = 0
local wait = 0
if take > 0 then
  if now < paused then
    wait = paused - now
  elseif conf <= 0 then
    granted = 1
  else
    local need = 1
    if bulk > 0 then need = 1 + reserve end
    local shaped = bulk > 0 and share < 1
    if tokens >= need - 1e-6 and (not shaped or bt >= 1 - 1e-6) then
      tokens = math.max(0, tokens - 1)
      if shaped then bt = math.max(0, bt - 1) end
      granted = 1
    else
      wait = math.ceil(math.max(0, need - tokens) * 60000 / rate)
      if shaped then
        wait = math.max(wait, math.ceil(math.max(0, 1 - bt) * 60000 / (rate * share)))
      end
      wait = math.max(1, wait)
    end
  end
end
redis.call('HSET', KEYS[1], 'tokens', fmt(tokens), 'ts', fmt(ts),
           'rate', fmt(rate), 'paused', fmt(paused), 'raised', fmt(raised),
           'bt', fmt(bt), 'bts', fmt(bts))
redis.call('PEXPIRE', KEYS[1], 3600000)
return {granted, wait, math.max(0, paused - now), fmt(rate), raised - now})lua";

// A 429 (or 503 with Retry-After) somewhere in the fleet: every replica
// pauses until ARGV[2] ms from now, the rate halves (never below 1 a
// minute), and the bucket refills from the end of the pause, where the
// climb back starts too. With ARGV[4] a share instead of "halve", vPIC
// answers again after an outage (rule 13): the rate resumes from that share
// of the configured one (or less when already lower), with no pause
// (ARGV[2] 0) and no burst. ARGV[5]: the longest pause in ms, which
// bounds the hash's as in kTake. Returns {ms left of the pause, effective
// rate}.
const char kPushback[] = VIN_FLEET_NOW(3) R"lua(
local conf = tonumber(ARGV[1])
local pause_max = tonumber(ARGV[5]) or 60000
local h = redis.call('HMGET', KEYS[1], 'rate', 'paused')
local rate = tonumber(h[1]) or conf
if conf > 0 then rate = clamp(rate, math.min(1, conf), conf) end
local paused = math.max(clamp(tonumber(h[2]) or 0, 0, now + pause_max),
                        now + math.min(tonumber(ARGV[2]), pause_max))
if conf > 0 then
  if ARGV[4] == 'halve' then
    rate = math.max(1, math.min(rate, conf) / 2)
  else
    rate = math.min(rate, math.max(1, conf * tonumber(ARGV[4])))
  end
end
redis.call('HSET', KEYS[1], 'tokens', '0', 'ts', fmt(paused),
           'rate', fmt(rate), 'paused', fmt(paused), 'raised', fmt(paused))
redis.call('PEXPIRE', KEYS[1], 3600000)
return {paused - now, fmt(rate)})lua";

// The fleet's retry budget, the ring of upstream::RetryBudget in one hash:
// ARGV[6] slots of ARGV[7] ms, slot k holding s<k> (which slot-sized
// period of time it counts), f<k> (first attempts) and r<k> (retries made,
// or granted and not yet spent). Adds ARGV[1] first attempts now; moves
// each retry spent since the last call (ARGV[8...]: the slot it was granted
// in; -1 for one made without a grant) to the slot of now; then grants up
// to ARGV[2] retries if the window allows them: retries <= ratio (ARGV[3])
// x first attempts + floor (ARGV[4], per window). Returns {retries granted,
// the slot they are counted in, ms until room may come back when fewer
// than asked were granted (-1: only new first attempts make room), ms
// until that slot leaves the window}.
const char kRetryGrant[] = VIN_FLEET_NOW(5) R"lua(
local slots = tonumber(ARGV[6])
local slot_ms = tonumber(ARGV[7])
local cur = math.floor(now / slot_ms)
local names = {}
for k = 0, slots - 1 do
  names[3 * k + 1] = 's' .. k
  names[3 * k + 2] = 'f' .. k
  names[3 * k + 3] = 'r' .. k
end
local v = redis.call('HMGET', KEYS[1], unpack(names))
local s, f, r, dirty = {}, {}, {}, {}
for k = 0, slots - 1 do
  s[k] = tonumber(v[3 * k + 1]) or -1
  f[k] = math.max(0, tonumber(v[3 * k + 2]) or 0)
  r[k] = math.max(0, tonumber(v[3 * k + 3]) or 0)
end
local function at(idx)
  local k = idx % slots
  if s[k] ~= idx then s[k], f[k], r[k] = idx, 0, 0 end
  dirty[k] = true
  return k
end
local function live(k) return s[k] > cur - slots and s[k] <= cur end
local firsts = tonumber(ARGV[1])
if firsts > 0 then
  local k = at(cur)
  f[k] = f[k] + firsts
end
for i = 8, #ARGV do
  local g = tonumber(ARGV[i])
  if g < cur then
    if g >= 0 then
      local k = g % slots
      if s[k] == g and live(k) and r[k] > 0 then
        r[k] = r[k] - 1
        dirty[k] = true
      end
    end
    local c = at(cur)
    r[c] = r[c] + 1
  end
end
local fs, rs = 0, 0
for k = 0, slots - 1 do
  if live(k) then
    fs = fs + f[k]
    rs = rs + r[k]
  end
end
local want = tonumber(ARGV[2])
local room = math.floor(tonumber(ARGV[3]) * fs + tonumber(ARGV[4]) - rs + 1e-9)
local grant = math.max(0, math.min(want, room))
if grant > 0 then
  local k = at(cur)
  r[k] = r[k] + grant
end
local wait = 0
if grant < want then
  wait = -1
  local oldest = nil
  for k = 0, slots - 1 do
    if live(k) and r[k] > 0 and (oldest == nil or s[k] < oldest) then
      oldest = s[k]
    end
  end
  if oldest then wait = (oldest + slots) * slot_ms - now end
end
local args = {}
for k in pairs(dirty) do
  args[#args + 1] = 's' .. k
  args[#args + 1] = tostring(s[k])
  args[#args + 1] = 'f' .. k
  args[#args + 1] = tostring(f[k])
  args[#args + 1] = 'r' .. k
  args[#args + 1] = tostring(r[k])
end
if #args > 0 then redis.call('HSET', KEYS[1], unpack(args)) end
redis.call('PEXPIRE', KEYS[1], 30000)
return {grant, cur, wait, (cur + slots) * slot_ms - now})lua";

#undef VIN_FLEET_NOW

}  // namespace budget_scripts
}  // namespace fleet
