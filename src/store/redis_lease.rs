//! The fleet's leases on its places on Redis (docs/politeness.md, "Through every transition";
//! [`crate::pace_policy::timetable`]): one hash, `robotsd:{fleet}:leases`, a field per index,
//! `<holder> <store> <from> <until>`, where `<store>` is the replication id of the server the
//! lease was written on (`INFO replication`'s `master_replid`: new on a restarted server and on
//! a replica promoted by a failover, so a lease replicated from a master that died is void on
//! the new one).
//!
//! A reservation of a lane reads the leases from its arguments, as this replica last read them,
//! not from the hash: in a Redis Cluster the lane's script runs in the lane's own slot and cannot
//! read another slot's key. A lease's end only moves forward while it is renewed, so one read
//! earlier is a safe lower bound. On one server (or Sentinel's master) the script checks each
//! lease's store against its own; in a cluster the lane's node is not the lease table's, and the
//! check is left out (docs/politeness.md says what that leaves).
//!
//! The scripts do the arithmetic of [`crate::pace_policy::timetable`] in Lua on the same
//! integers; a test runs both on the same leases and compares them.

use std::sync::Arc;
use std::time::Duration;

use super::lua::Lua;
use super::redis_pace::{run_args, script};
use super::{LendAnswer, StoreError};
use crate::pace_policy::{
    LEASE_MS, Lease, LendRequest, Lending, Lent, RENEW_MS, RunShared, SlotGrant, SlotRequest,
    Timetable, millis,
};

/// The key of the fleet's leases: in a slot of its own.
pub(super) const LEASES_KEY: &str = "robotsd:{fleet}:leases";

/// The most leases a reply carries: bounds a reply whatever the hash holds.
const MAX_LEASES: u32 = 4096;

/// The server's identity, as a lease records it.
const STORE_ID: &str = r"
local store = string.match(redis.call('INFO', 'replication'), 'master_replid:(%w+)') or '?'
";

/// ARGV: index, holder, until, floor, fresh_from, takeover_from, keep (ms), size. Returns
/// `{lent (1 or 0), holder, from, until, store}` (for 0: the other holder and its lease's end),
/// then `index, lease` for each lease of an index below `size`.
const LEND: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function parse(value)
  if not value then return nil end
  local h, s, f, u = string.match(value, '^(%S+) (%S+) (%d+) (%d+)$')
  if not h then return nil end
  return {holder = h, store = s, from = tonumber(f), till = tonumber(u)}
end
local function fmt(x) return string.format('%d', x) end
local held = parse(redis.call('HGET', KEYS[1], ARGV[1]))
local holder = ARGV[2]
local till = tonumber(ARGV[3])
local floor = tonumber(ARGV[4])
local fresh = tonumber(ARGV[5])
local takeover = tonumber(ARGV[6])
local out
if held and held.store == store and held.holder == holder then
  out = {'1', holder, math.max(held.from, floor), math.max(held.till, till)}
elseif held and held.store == store and held.till > now then
  out = {'0', held.holder, 0, held.till}
elseif held and held.holder ~= holder then
  out = {'1', holder, math.max(floor, fresh, takeover, held.till), till}
else
  out = {'1', holder, math.max(floor, fresh), till}
end
if out[1] == '1' then
  redis.call('HSET', KEYS[1], ARGV[1], holder .. ' ' .. store .. ' ' .. fmt(out[3]) .. ' ' .. fmt(out[4]))
end
redis.call('PEXPIRE', KEYS[1], ARGV[7])
local reply = {out[1], out[2], fmt(out[3]), fmt(out[4]), store}
local size = tonumber(ARGV[8])
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local index = tonumber(all[i])
  if index and index >= 0 and index < size and parse(all[i + 1]) then
    reply[#reply + 1] = all[i]
    reply[#reply + 1] = all[i + 1]
  end
end
return reply
";

/// ARGV: keep (ms), size, check (1: leases of another store are void), how many leases, then
/// `index, from, until, store` for each, then for each run of reservations of one request:
/// how many, interval, largest interval, longest wait and guard band (ms). Each reservation is
/// [`crate::pace_policy::PaceState::reserve_lent`] after the ones before it, at one `now`.
/// Returns `{interval, granted, ask_again, slot…}` for each run (its granted slots), then
/// `{now, slowdown, blocked_until, last}`.
const RESERVE_LENT: &str = r"
local size = tonumber(ARGV[2])
local check = ARGV[3] == '1'
local leases = {}
local n = tonumber(ARGV[4])
local at_arg = 5
for j = 1, n do
  if not check or ARGV[at_arg + 3] == store then
    leases[#leases + 1] = {index = tonumber(ARGV[at_arg]), from = tonumber(ARGV[at_arg + 1]),
      till = tonumber(ARGV[at_arg + 2])}
  end
  at_arg = at_arg + 4
end
local renewing = now + LEASE_HALF
local function place(at, period, index)
  if period == 0 or size <= 1 then return at end
  local cycle = period * size
  local offset = (period * index) % cycle
  local into = at % cycle
  if offset >= into then return at + offset - into end
  return at + cycle - (into - offset)
end
-- The first place at or after `at` the store may grant (true, place), or when to ask again.
local function next_place(at, period)
  local best, grant, ask = nil, false, now + RENEW
  for j = 1, #leases do
    local l = leases[j]
    if l.index < size then
      local t = place(math.max(at, l.from), period, l.index)
      if t < l.till then
        if best == nil or t < best then best, grant = t, true end
      elseif l.till >= renewing then
        if best == nil or t < best then best, grant, ask = t, false, now + (t - l.till) + 1 end
      end
    end
  end
  if grant then return true, best end
  return false, ask
end
local slow = slowdown_at(now)
local out = {}
local wrote = false
for i = at_arg, #ARGV - 4, 5 do
  local count = tonumber(ARGV[i])
  local interval = tonumber(ARGV[i + 1])
  local max_interval = math.max(tonumber(ARGV[i + 2]), interval)
  local max_wait = tonumber(ARGV[i + 3])
  local applied = math.min(math.floor(interval * slow / UNSLOWED), max_interval)
  local period = applied + tonumber(ARGV[i + 4])
  local slots = {}
  local ask = 0
  for k = 1, count do
    local first = math.max(now, blocked)
    if last > 0 then first = math.max(first, last + period) end
    if first > now + max_wait then
      ask = first - max_wait
      break
    end
    local ok, t = next_place(first, period)
    if ok and t > now + max_wait then
      ask = t - max_wait
      break
    elseif not ok then
      ask = t
      break
    end
    last = t
    wrote = true
    slots[#slots + 1] = t
  end
  out[#out + 1] = applied
  out[#out + 1] = #slots
  out[#out + 1] = ask
  for k = 1, #slots do out[#out + 1] = slots[k] end
end
if wrote then
  redis.call('HSET', KEYS[1], 'l', string.format('%d', last))
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
if blocked <= now then blocked = 0 end
out[#out + 1] = now
out[#out + 1] = slow
out[#out + 1] = blocked
out[#out + 1] = last
return out
";

/// The lease scripts, built once.
pub(super) struct LeaseScripts {
    pub(super) lend: Lua,
    pub(super) reserve: Lua,
}

impl LeaseScripts {
    pub(super) fn new() -> LeaseScripts {
        let constants = |body: String| {
            body.replace("LEASE_HALF", &(LEASE_MS / 2).to_string())
                .replace("RENEW", &RENEW_MS.to_string())
        };
        LeaseScripts {
            lend: Lua::new(format!("{STORE_ID}{LEND}")),
            reserve: Lua::new(constants(script(&format!("{STORE_ID}{RESERVE_LENT}")))),
        }
    }
}

/// The call that renews `request`'s lease; [`lent`] reads its reply.
pub(super) fn lend(
    scripts: &LeaseScripts,
    request: &LendRequest,
    size: u32,
    keep: Duration,
) -> redis::Cmd {
    let mut command = scripts.lend.call(&[LEASES_KEY.to_owned()]);
    command
        .arg(request.index)
        .arg(&request.holder)
        .arg(request.until)
        .arg(request.floor)
        .arg(request.fresh_from)
        .arg(request.takeover_from)
        .arg(millis(keep).max(1))
        .arg(size.min(MAX_LEASES));
    command
}

fn number(text: &str) -> Result<u64, StoreError> {
    text.parse()
        .map_err(|_| StoreError::Failed(format!("lease script returned {text:?}")))
}

/// What a [`lend`] call did, with the leases after it.
pub(super) fn lent(reply: Vec<String>) -> Result<LendAnswer, StoreError> {
    let bad = || StoreError::Failed(format!("lease script returned {} values", reply.len()));
    if reply.len() < 5 || reply.len().is_multiple_of(2) || reply.len() > 5 + 2 * MAX_LEASES as usize
    {
        return Err(bad());
    }
    let (from, until) = (number(&reply[2])?, number(&reply[3])?);
    let store = reply[4].clone();
    let lending = match reply[0].as_str() {
        "1" => Lending::Lent(Lease {
            holder: reply[1].clone(),
            store,
            from,
            until,
        }),
        "0" => Lending::Held {
            holder: reply[1].clone(),
            until,
        },
        _ => return Err(bad()),
    };
    let mut table = Vec::new();
    for pair in reply[5..].chunks_exact(2) {
        let fields: Vec<&str> = pair[1].split(' ').collect();
        let [_, store, from, until] = fields[..] else {
            return Err(bad());
        };
        table.push(Lent {
            index: u32::try_from(number(&pair[0])?).map_err(|_| bad())?,
            from: number(from)?,
            until: number(until)?,
            store: store.to_owned(),
        });
    }
    table.sort_by_key(|lent| lent.index);
    Ok(LendAnswer { lending, table })
}

/// The call that reserves `lane`'s next slots among the places `timetable` lends, one for each
/// reservation of `runs` in turn; `check` when the leases' stores can be checked (the lane and
/// the leases on one server). [`granted`] reads its reply.
pub(super) fn reserve(
    scripts: &LeaseScripts,
    lane_key: String,
    runs: &[(SlotRequest, u64)],
    timetable: &Arc<Timetable>,
    check: bool,
    keep: Duration,
) -> redis::Cmd {
    let mut command = scripts.reserve.call(&[lane_key]);
    command
        .arg(millis(keep).max(1))
        .arg(timetable.size)
        .arg(u8::from(check))
        .arg(timetable.lent.len());
    for lent in &timetable.lent {
        command
            .arg(lent.index)
            .arg(lent.from)
            .arg(lent.until)
            .arg(&lent.store);
    }
    run_args(&mut command, runs);
    command
}

/// The slots a [`reserve`] call for `runs` grants, one for each reservation, in their order.
pub(super) fn granted(
    reply: Vec<i64>,
    runs: &[(SlotRequest, u64)],
) -> Result<Vec<SlotGrant>, StoreError> {
    let values: Vec<u64> = reply
        .into_iter()
        .map(|v| u64::try_from(v).unwrap_or(0))
        .collect();
    let bad = || StoreError::Failed(format!("pacing script returned {} values", values.len()));
    if values.len() < 4 {
        return Err(bad());
    }
    let (body, tail) = values.split_at(values.len() - 4);
    let shared = RunShared {
        now: tail[0],
        slowdown: tail[1],
        blocked_until: tail[2],
        last_slot: tail[3],
    };
    let mut grants = Vec::new();
    let mut rest = body;
    for &(_, count) in runs {
        let [interval_ms, granted, ask, ..] = *rest else {
            return Err(bad());
        };
        let granted_n = usize::try_from(granted).map_err(|_| bad())?;
        if granted > count || rest.len() < 3 + granted_n {
            return Err(bad());
        }
        let grant = |reserved, at| SlotGrant {
            reserved,
            at,
            now: shared.now,
            interval_ms,
            slowdown: shared.slowdown,
            blocked_until: shared.blocked_until,
            last_slot: shared.last_slot,
        };
        grants.extend(rest[3..3 + granted_n].iter().map(|&at| grant(true, at)));
        grants.extend((granted..count).map(|_| grant(false, ask)));
        rest = &rest[3 + granted_n..];
    }
    if !rest.is_empty() {
        return Err(bad());
    }
    Ok(grants)
}
