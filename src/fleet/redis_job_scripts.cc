#include "fleet/redis_job_scripts.h"

namespace fleet {
namespace job_scripts {

// A job's hash (<prefix>job:<seq>): meta (the sealed StoredJob), state
// (vin.v1.JobState's number; 0 staging), message, start and end (Unix
// microseconds, "" for none), notify, done, failed, bytes, maxans (the
// largest answer key), cancel (the failure of items a cancel ended).

// KEYS: job, id key, idempotency key. ARGV: seq, meta, staging ttl (ms),
// bytes, "1" when there is an idempotency key. {1}: staged; {0, seq}: the
// key is job seq's.
const char kBegin[] = R"lua(
if ARGV[5] == '1' then
  local prev = redis.call('GET', KEYS[3])
  if prev then return {0, prev} end
  redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[3])
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'meta', ARGV[2], 'state', '0', 'done', '0',
           'failed', '0', 'bytes', ARGV[4], 'maxans', '0', 'notify', '0',
           'message', '', 'start', '', 'end', '')
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[3])
return {1})lua";

// KEYS: items, extras, job, id key, idempotency key (or the id key
// again). ARGV: first index, staging ttl (ms), n, n items, then n extras
// or none. 1: added; 0: the list is not at `first`; -1: the staging job
// is gone (expired).
const char kAddItems[] = R"lua(
if redis.call('EXISTS', KEYS[3]) == 0 then return -1 end
local first = tonumber(ARGV[1])
if redis.call('LLEN', KEYS[1]) ~= first then return 0 end
local n = tonumber(ARGV[3])
for i = 1, n do redis.call('RPUSH', KEYS[1], ARGV[3 + i]) end
if #ARGV >= 3 + 2 * n and n > 0 then
  for i = 1, n do
    redis.call('HSET', KEYS[2], tostring(first + i - 1), ARGV[3 + n + i])
  end
end
for i = 1, 5 do redis.call('PEXPIRE', KEYS[i], ARGV[2]) end
return 1)lua";

// KEYS: job, items, extras, id key, idempotency key, index. ARGV: seq,
// meta, bytes. 1: published; 0: not a staging job (gone).
const char kPublish[] = R"lua(
if redis.call('HGET', KEYS[1], 'state') ~= '0' then return 0 end
redis.call('HSET', KEYS[1], 'meta', ARGV[2], 'state', '1', 'bytes', ARGV[3])
for i = 1, 5 do redis.call('PERSIST', KEYS[i]) end
redis.call('ZADD', KEYS[6], ARGV[1], ARGV[1])
return 1)lua";

// KEYS: job, items, extras, outcomes, answers, lease, id key, idempotency
// key, index. ARGV: seq. The id and idempotency keys go only when they
// still name this job.
const char kDrop[] = R"lua(
redis.call('UNLINK', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6])
for i = 7, 8 do
  if redis.call('GET', KEYS[i]) == ARGV[1] then redis.call('UNLINK', KEYS[i]) end
end
redis.call('ZREM', KEYS[9], ARGV[1])
return 1)lua";

// KEYS: items, outcomes. ARGV: from, limit, scan. Items without an outcome
// among the `scan` from `from`, at most `limit`: {next index, 1 when the
// list ends there, {index, item, index, item...}}.
const char kPending[] = R"lua(
local from = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local scan = tonumber(ARGV[3])
local items = redis.call('LRANGE', KEYS[1], from, from + scan - 1)
local out = {}
for i, v in ipairs(items) do
  local idx = from + i - 1
  if redis.call('HEXISTS', KEYS[2], tostring(idx)) == 0 then
    out[#out + 1] = idx
    out[#out + 1] = v
    if #out == 2 * limit then
      local ended = 0
      if idx + 1 >= redis.call('LLEN', KEYS[1]) then ended = 1 end
      return {idx + 1, ended, out}
    end
  end
end
local ended = 0
if #items < scan then ended = 1 end
return {from + #items, ended, out})lua";

// KEYS: job, outcomes, answers, lease. ARGV: owner, "1" with a record,
// state, message, start, end, notify, n, then per outcome: index, value
// ('D' and the answer key, or 'F' and the failure), answer key, answer
// bytes ("" when stored before). Only the lease's owner commits, to a job
// not ended: {0} otherwise. An outcome already there stays. {1, done,
// failed, bytes}.
const char kCommit[] = R"lua(
local st = tonumber(redis.call('HGET', KEYS[1], 'state') or '-1')
if st < 1 or st >= 3 or redis.call('GET', KEYS[4]) ~= ARGV[1] then
  return {0}
end
local n = tonumber(ARGV[8])
local done, failed, bytes, maxans = 0, 0, 0, 0
for i = 0, n - 1 do
  local b = 9 + i * 4
  if ARGV[b + 3] ~= '' then
    redis.call('HSET', KEYS[3], ARGV[b + 2], ARGV[b + 3])
    local k = tonumber(ARGV[b + 2])
    if k > maxans then maxans = k end
  end
  if redis.call('HSETNX', KEYS[2], ARGV[b], ARGV[b + 1]) == 1 then
    if string.sub(ARGV[b + 1], 1, 1) == 'D' then
      done = done + 1
    else
      failed = failed + 1
    end
    bytes = bytes + #ARGV[b + 1] + #ARGV[b + 3]
  end
end
if done > 0 then redis.call('HINCRBY', KEYS[1], 'done', done) end
if failed > 0 then redis.call('HINCRBY', KEYS[1], 'failed', failed) end
if bytes > 0 then redis.call('HINCRBY', KEYS[1], 'bytes', bytes) end
if maxans > tonumber(redis.call('HGET', KEYS[1], 'maxans') or '0') then
  redis.call('HSET', KEYS[1], 'maxans', maxans)
end
if ARGV[2] == '1' then
  redis.call('HSET', KEYS[1], 'state', ARGV[3], 'message', ARGV[4],
             'start', ARGV[5], 'end', ARGV[6], 'notify', ARGV[7])
  if tonumber(ARGV[3]) >= 3 then redis.call('DEL', KEYS[4]) end
end
return {1, tonumber(redis.call('HGET', KEYS[1], 'done')),
        tonumber(redis.call('HGET', KEYS[1], 'failed')),
        tonumber(redis.call('HGET', KEYS[1], 'bytes'))})lua";

// KEYS: job. ARGV: notify. An ended job's notify state: 1; else 0.
const char kNotify[] = R"lua(
local st = tonumber(redis.call('HGET', KEYS[1], 'state') or '-1')
if st < 3 then return 0 end
redis.call('HSET', KEYS[1], 'notify', ARGV[1])
return 1)lua";

// KEYS: job, lease. ARGV: failure, state, message, end, notify, items
// total, start. Ends a job not ended: its items without an outcome count
// as failed with `failure` (listed so); the lease goes. {1, failed now,
// done, failed}; {0}: it had ended; {-1}: no such job.
const char kCancel[] = R"lua(
local st = tonumber(redis.call('HGET', KEYS[1], 'state') or '-1')
if st < 1 then return {-1} end
if st >= 3 then return {0} end
local done = tonumber(redis.call('HGET', KEYS[1], 'done'))
local failed = tonumber(redis.call('HGET', KEYS[1], 'failed'))
local left = tonumber(ARGV[6]) - done - failed
if left < 0 then left = 0 end
redis.call('HSET', KEYS[1], 'failed', failed + left, 'cancel', ARGV[1],
           'state', ARGV[2], 'message', ARGV[3], 'end', ARGV[4],
           'notify', ARGV[5])
if (redis.call('HGET', KEYS[1], 'start') or '') == '' then
  redis.call('HSET', KEYS[1], 'start', ARGV[7])
end
redis.call('HINCRBY', KEYS[1], 'bytes', left * #ARGV[1])
redis.call('DEL', KEYS[2])
return {1, left, done, failed + left})lua";

// KEYS: items, outcomes, extras, job. ARGV: from, limit. {cancel failure
// or '', item, outcome, extra, item, outcome, extra...}: finished items in
// order, stopping before the first without an outcome (a cancelled job's
// have '' and are listed).
const char kResults[] = R"lua(
local from = tonumber(ARGV[1])
local cancel = redis.call('HGET', KEYS[4], 'cancel') or ''
local items = redis.call('LRANGE', KEYS[1], from, from + tonumber(ARGV[2]) - 1)
local res = {cancel}
for i, v in ipairs(items) do
  local idx = tostring(from + i - 1)
  local o = redis.call('HGET', KEYS[2], idx)
  if not o then
    if cancel == '' then break end
    o = ''
  end
  res[#res + 1] = v
  res[#res + 1] = o
  res[#res + 1] = redis.call('HGET', KEYS[3], idx) or ''
end
return res)lua";

// KEYS: lease. ARGV: owner, ttl (ms). 1: the owner's (taken, or renewed);
// 0: another's.
const char kHold[] = R"lua(
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0)lua";

}  // namespace job_scripts
}  // namespace fleet
