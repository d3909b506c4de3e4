/**
 * The Lua scripts behind the shared lock, rate window and busy register. Each runs atomically on the
 * Redis server, so two processes can never both see a free slot or a free lock. Time is Redis's own
 * (`TIME`): the machines' clocks need not agree. Keys of one company share the `{company}` hash tag, so
 * a script's keys live on one node of a cluster too.
 */

/** Redis's clock, in ms. Scripts with writes may read it: Redis 5+ replicates their effects, not the script. */
const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/**
 * The company's lock and its playbooks' locks exclude each other: a company-wide run has the company
 * to itself. Playbook locks are listed in an index (a sorted set scored by lease end) so a company-wide
 * run finds them without scanning keys.
 *
 * KEYS: lock, last holder, the company-wide lock, the playbook index. ARGV: my holder value, lease ms,
 * scope ('company' or 'playbook').
 * Returns {1, previous holder or ''} when taken (a previous holder that never let go was taken over),
 * {0, current holder} when held by someone else (of either scope).
 */
export const LOCK_TAKE = `${NOW}
local current = redis.call('GET', KEYS[1])
if current then return {0, current} end
if ARGV[3] == 'playbook' then
  local company = redis.call('GET', KEYS[3])
  if company then return {0, company} end
else
  redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
  for _, key in ipairs(redis.call('ZRANGE', KEYS[4], 0, -1)) do
    local holder = redis.call('GET', key)
    if holder then return {0, holder} end
    redis.call('ZREM', KEYS[4], key)
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if ARGV[3] == 'playbook' then redis.call('ZADD', KEYS[4], now + tonumber(ARGV[2]), KEYS[1]) end
local previous = redis.call('GET', KEYS[2]) or ''
redis.call('SET', KEYS[2], ARGV[1], 'PX', 604800000)
return {1, previous}
`;

/** KEYS: lock, playbook index. ARGV: my holder value, lease ms. 1 when still mine (lease renewed), 0 when lost. */
export const LOCK_RENEW = `${NOW}
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  redis.call('ZADD', KEYS[2], 'XX', now + tonumber(ARGV[2]), KEYS[1])
  return 1
end
return 0
`;

/** KEYS: lock, last holder, playbook index. ARGV: my holder value. Compare-and-delete: only the owner lets go. */
export const LOCK_RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('ZREM', KEYS[3], KEYS[1])
end
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
return 1
`;

/**
 * The sliding window: a sorted set of slots scored by the moment they free. A slot in flight scores
 * now + the longest a call can take; when its answer comes it scores answer + one period.
 * A learned limit and a shared pause live in a hash beside it, and a learned short-window rule: the
 * server counting bursts in a window much shorter than ours (Retry-After of a second under a
 * 120-a-minute plan), as the in-process budget learns it. A slot answered within the last `w` ms of a
 * short window `w` scores above now + period - w; one in flight scores above that too.
 *
 * KEYS: window, limits. ARGV: slot id, configured limit, period ms, in-flight ms, periods before a raise.
 * Returns {1, 0, 0} with the slot taken, or {0, ms to wait, 1 if the slot to free is still in flight
 * (its answer frees it, any moment), paused 1/0}.
 */
export const WINDOW_TAKE = `${NOW}
local configured = tonumber(ARGV[2])
local period = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local paused = tonumber(redis.call('HGET', KEYS[2], 'paused_until') or '0')
if paused > now then return {0, paused - now, 0, 1} end
local limit = tonumber(redis.call('HGET', KEYS[2], 'limit') or configured)
if limit < configured then
  local changed = tonumber(redis.call('HGET', KEYS[2], 'changed_at') or '0')
  if now - changed > tonumber(ARGV[5]) * period then
    limit = math.min(configured, limit + math.max(1, math.floor(limit / 10)))
    redis.call('HSET', KEYS[2], 'limit', limit, 'changed_at', now)
  end
elseif limit > configured then
  limit = configured
end
local held = redis.call('ZCARD', KEYS[1])
if held >= limit then
  local entry = redis.call('ZRANGE', KEYS[1], held - limit, held - limit, 'WITHSCORES')
  local frees = tonumber(entry[2])
  local inFlight = 0
  if frees - now > period then inFlight = 1 end
  return {0, math.max(1, frees - now), inFlight, 0}
end
local shortWindow = tonumber(redis.call('HGET', KEYS[2], 'short_window') or '0')
if shortWindow > 0 then
  local shortLimit = tonumber(redis.call('HGET', KEYS[2], 'short_limit'))
  local shortChanged = tonumber(redis.call('HGET', KEYS[2], 'short_changed_at') or '0')
  if now - shortChanged > tonumber(ARGV[5]) * period then
    shortLimit = shortLimit + math.max(1, math.floor(shortLimit / 10))
    redis.call('HSET', KEYS[2], 'short_limit', shortLimit, 'short_changed_at', now)
  end
  if shortLimit >= limit then
    redis.call('HDEL', KEYS[2], 'short_window', 'short_limit', 'short_changed_at')
  else
    local from = now + period - shortWindow
    local heldShort = redis.call('ZCOUNT', KEYS[1], '(' .. from, '+inf')
    if heldShort >= shortLimit then
      local entry = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. from, '+inf', 'WITHSCORES', 'LIMIT', heldShort - shortLimit, 1)
      local frees = tonumber(entry[2]) - period + shortWindow
      local inFlight = 0
      if frees - now > shortWindow then inFlight = 1 end
      return {0, math.max(1, frees - now), inFlight, 0}
    end
  end
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[4]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[4]) + period)
return {1, 0, 0, 0}
`;

/**
 * An answer came (or the call never went out). KEYS: window, limits. ARGV: slot id, period ms,
 * rate limited 1/0, Retry-After ms (0: none), not sent 1/0, configured limit.
 * A 429 pauses every process until Retry-After (or one period), and lowers a limit to what the server
 * let through: a Retry-After much shorter than our period teaches a short-window rule (count within
 * that window), else our own limit comes down (count within the period).
 */
export const WINDOW_GIVE = `${NOW}
local period = tonumber(ARGV[2])
if ARGV[5] == '1' then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 0
end
redis.call('ZADD', KEYS[1], 'XX', now + period, ARGV[1])
if ARGV[3] ~= '1' then return 0 end
local wait = tonumber(ARGV[4])
if wait <= 0 then wait = period end
if wait < period / 2 then
  local passed = math.max(1, redis.call('ZCOUNT', KEYS[1], '(' .. (now + period - wait), now + period) - 1)
  local current = tonumber(redis.call('HGET', KEYS[2], 'short_limit') or passed)
  redis.call('HSET', KEYS[2], 'short_window', wait, 'short_limit', math.min(current, passed), 'short_changed_at', now)
else
  local passed = math.max(1, redis.call('ZCOUNT', KEYS[1], now, now + period) - 1)
  local limit = tonumber(redis.call('HGET', KEYS[2], 'limit') or ARGV[6])
  if passed < limit then redis.call('HSET', KEYS[2], 'limit', passed, 'changed_at', now) end
end
local paused = tonumber(redis.call('HGET', KEYS[2], 'paused_until') or '0')
if now + wait > paused then redis.call('HSET', KEYS[2], 'paused_until', now + wait) end
redis.call('PEXPIRE', KEYS[2], 86400000)
return 1
`;

/**
 * KEYS: busy key of an environment. ARGV: my value, my run id, lease ms.
 * Takes the environment when free or already this run's; returns '' then, else the holder's value.
 */
export const BUSY_CLAIM = `
local current = redis.call('GET', KEYS[1])
if current then
  local ok, holder = pcall(cjson.decode, current)
  if not ok or type(holder) ~= 'table' or holder.run ~= ARGV[2] then return current end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
return ''
`;

/** KEYS: busy key. ARGV: expected value, new value, lease ms. Replaces (or renews) only what is still ours. */
export const BUSY_REPLACE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`;

/** KEYS: busy key. ARGV: expected value. Compare-and-delete (our own claim, or another run's ended operation). */
export const BUSY_CLEAR = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;
