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

/** Appends to reply each rule's last "held a call back" time kept in the limits hash: window, time, … */
const WITH_BLOCKED = `
local function withBlocked(reply, limits)
  local fields = redis.call('HGETALL', limits)
  for i = 1, #fields, 2 do
    if string.sub(fields[i], 1, 8) == 'blocked:' then
      table.insert(reply, string.sub(fields[i], 9))
      table.insert(reply, fields[i + 1])
    end
  end
  return reply
end
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
 *
 * The learned rules (util/learned-limit.ts) are decided in TypeScript, by the same code as the
 * in-process budget; Redis only keeps them: a JSON `state` in the limits hash (`rules`: the main rule
 * first, then short-window ones), a `version` for compare-and-set, and `paused_until`. These scripts
 * read the rules and count; the one thing they write about a rule is when it last held a call back
 * (`blocked:<windowMs>`). A slot answered within the last `w` ms of a short window `w` scores above
 * now + period - w; one in flight scores above that too.
 *
 * KEYS: window, limits. ARGV: slot id, configured limit, period ms, in-flight ms.
 * Returns {1, 0, 0, 0} with the slot taken, or {0, ms to wait, 1 if the slot to free is still in
 * flight (its answer frees it, any moment), paused 1/0}.
 */
export const WINDOW_TAKE = `${NOW}
local configured = tonumber(ARGV[2])
local period = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local paused = tonumber(redis.call('HGET', KEYS[2], 'paused_until') or '0')
if paused > now then return {0, paused - now, 0, 1} end
local state = redis.call('HGET', KEYS[2], 'state')
local rules = {{limit = configured, windowMs = period}}
if state then rules = cjson.decode(state).rules end
for i, rule in ipairs(rules) do
  local limit = rule.limit
  local from = '-inf'
  local window = period
  if i == 1 then
    limit = math.min(limit, configured)
  else
    window = rule.windowMs
    from = '(' .. (now + period - window)
  end
  local held = redis.call('ZCOUNT', KEYS[1], from, '+inf')
  if held >= limit then
    redis.call('HSET', KEYS[2], 'blocked:' .. rule.windowMs, now)
    local entry = redis.call('ZRANGEBYSCORE', KEYS[1], from, '+inf', 'WITHSCORES', 'LIMIT', held - limit, 1)
    local frees = tonumber(entry[2]) - period + window
    local inFlight = 0
    if frees - now > window then inFlight = 1 end
    return {0, math.max(1, frees - now), inFlight, 0}
  end
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[4]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[4]) + period)
return {1, 0, 0, 0}
`;

/**
 * An answer came (or the call never went out). KEYS: window, limits. ARGV: slot id, period ms, rate
 * limited 1/0, Retry-After ms (0: none), not sent 1/0.
 * Returns {} when there is nothing to learn (not sent, or an answer with no learned rule to raise);
 * else {Redis's now, calls counted within Retry-After (or a period), within a period, state or '',
 * version, then blocked window, time, … pairs}: what util/learned-limit.ts needs to decide.
 */
export const WINDOW_GIVE = `${NOW}${WITH_BLOCKED}
local period = tonumber(ARGV[2])
if ARGV[5] == '1' then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return {}
end
redis.call('ZADD', KEYS[1], 'XX', now + period, ARGV[1])
local state = redis.call('HGET', KEYS[2], 'state')
if ARGV[3] ~= '1' and not state then return {} end
local wait = tonumber(ARGV[4])
if wait <= 0 then wait = period end
local limited = 0
if ARGV[3] == '1' then limited = 1 end
-- The refused call itself was just scored as answered: the server did not count it.
local inWait = redis.call('ZCOUNT', KEYS[1], '(' .. (now + period - wait), now + period) - limited
local inPeriod = redis.call('ZCOUNT', KEYS[1], now, now + period) - limited
return withBlocked({now, inWait, inPeriod, state or '', tonumber(redis.call('HGET', KEYS[2], 'version') or '0')}, KEYS[2])
`;

/**
 * Compare-and-set of the learned rules. KEYS: limits. ARGV: the version they were decided from, the
 * new state, pause until (Redis ms; 0: no pause). Returns {1} when stored; when another process
 * changed them first, {0, state, version, blocked window, time, …} to decide again from.
 */
export const LIMITS_SET = `${WITH_BLOCKED}
local version = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
if version ~= tonumber(ARGV[1]) then
  return withBlocked({0, redis.call('HGET', KEYS[1], 'state') or '', version}, KEYS[1])
end
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'version', version + 1)
local pause = tonumber(ARGV[3])
if pause > tonumber(redis.call('HGET', KEYS[1], 'paused_until') or '0') then redis.call('HSET', KEYS[1], 'paused_until', pause) end
redis.call('PEXPIRE', KEYS[1], 86400000)
return {1}
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

/**
 * Records first-seen times of theme versions: a field is set when it is new, or when the time given is
 * earlier than the one kept (a time never moves later). The time is the caller's, not Redis's: it is
 * the clock the same process judges the ages with.
 *
 * KEYS: the company's first-seen hash. ARGV: the time in ms, then one field per sighting.
 * Returns the whole hash as HGETALL does (field, time, field, time, …).
 */
export const FIRST_SEEN_RECORD = `
local at = tonumber(ARGV[1])
for i = 2, #ARGV do
  local known = redis.call('HGET', KEYS[1], ARGV[i])
  if not known or tonumber(known) > at then redis.call('HSET', KEYS[1], ARGV[i], ARGV[1]) end
end
return redis.call('HGETALL', KEYS[1])
`;

/**
 * Sets hash fields to the earliest of two times: ARGV from `from` on are (field, time in ms, value)
 * triples, the value JSON with the time as `at`. A field is set when it is new, holds no readable time,
 * or holds a later one; an equal or earlier time stays (an end recorded again adds nothing).
 */
const SET_EARLIEST = `
local function setEarliest(hash, from)
  for i = from, #ARGV, 3 do
    local known = redis.call('HGET', hash, ARGV[i])
    local keep = false
    if known then
      local ok, value = pcall(cjson.decode, known)
      keep = ok and type(value) == 'table' and tonumber(value.at) ~= nil and tonumber(value.at) <= tonumber(ARGV[i + 1])
    end
    if not keep then redis.call('HSET', hash, ARGV[i], ARGV[i + 2]) end
  end
end
`;

/** How many lines of an earlier release's staging list one migration step moves. */
export const STAGING_MIGRATE_BATCH = 500;

/**
 * Records staging entries in the company's staging hash (one field per environment, theme, version and
 * kind, the earliest time standing) and returns the whole hash: never more than one field per key,
 * however often an end is recorded. While the list an earlier release appended to still holds lines,
 * writes nothing and returns them instead (the first STAGING_MIGRATE_BATCH), to be moved by
 * STAGING_MIGRATE first.
 *
 * KEYS: the staging hash, the earlier release's list. ARGV: (field, ms, value) triples.
 * Returns {0, field, value, field, value, …}, or {1, line, line, …} while the list has lines.
 */
export const STAGING_RECORD = `${SET_EARLIEST}
local old = redis.call('LRANGE', KEYS[2], 0, ${STAGING_MIGRATE_BATCH - 1})
if #old > 0 then
  table.insert(old, 1, 1)
  return old
end
setEarliest(KEYS[1], 1)
local reply = redis.call('HGETALL', KEYS[1])
table.insert(reply, 1, 0)
return reply
`;

/**
 * Moves the first lines of an earlier release's staging list into the hash, read by the caller: only
 * if the list still starts with exactly those lines (another process may have moved them first), so
 * no line is moved twice or dropped unread. Lines appended to the list meanwhile stay for the next step.
 *
 * KEYS: the staging hash, the earlier release's list. ARGV: n, the n lines read, then (field, ms,
 * value) triples of the entries read from them. Returns 1 when moved, 0 when the list had changed.
 */
export const STAGING_MIGRATE = `${SET_EARLIEST}
local n = tonumber(ARGV[1])
local head = redis.call('LRANGE', KEYS[2], 0, n - 1)
if #head ~= n then return 0 end
for i = 1, n do
  if head[i] ~= ARGV[i + 1] then return 0 end
end
setEarliest(KEYS[1], n + 2)
redis.call('LTRIM', KEYS[2], n, -1)
return 1
`;

/**
 * Adds entries to a table hash (a quarantine's, a retry's: coord/redis/table-hash.ts), one field per
 * entry as its line, and returns every field: an entry recorded twice is one field.
 *
 * KEYS: the hash. ARGV: the lines to add. Returns the hash's fields.
 */
export const TABLE_RECORD = `
for i = 1, #ARGV do redis.call('HSET', KEYS[1], ARGV[i], '1') end
return redis.call('HKEYS', KEYS[1])
`;

/**
 * Takes fields out of a table hash: entries a release or a clear folded away, with it.
 *
 * KEYS: the hash. ARGV: the fields. Returns how many were there.
 */
export const TABLE_DROP = `
local n = 0
for i = 1, #ARGV do n = n + redis.call('HDEL', KEYS[1], ARGV[i]) end
return n
`;
