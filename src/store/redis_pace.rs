//! The pacing state on Redis (docs/politeness.md): one hash per origin,
//! `robotsd:{<origin>}:pace`, in the origin's hash slot beside its record, with the fields of
//! [`PaceState`]: `l` (last slot), `b` (blocked until), `s` (slowdown in thousandths) and `a`
//! (when it was set), all in milliseconds on Redis's own clock.
//!
//! Each change is one script, so that it is atomic however many replicas call it at once, and
//! reads Redis's `TIME`, so that the replicas' clocks do not enter into it. The scripts do the
//! arithmetic of [`crate::pace_policy`] in Lua, on the same integers; a test runs the same
//! sequence of operations through both and compares them.
//!
//! This file builds the calls and reads their replies; the store (`redis_store.rs`) sends them,
//! as it sends the record's (`redis_record.rs`), and stands above both (issue 42).

use std::time::Duration;

use super::lua::Lua;
use super::{PaceReading, StoreError};
use crate::pace_policy::{
    MAX_SLOWDOWN, PaceState, RunShared, SLOW_GROWS_TENTHS, SLOWDOWN_HALF_LIFE_MS,
    SUCCESS_KEEPS_TENTHS, Signal, SlotGrant, SlotRequest, SlotRun, UNSLOWED, millis,
};

/// Reads the state and Redis's now, and defines `slowdown_at(now)` as the policy does. The
/// constants come from the policy (`format!` below), so the two cannot drift apart.
pub(super) const PRELUDE: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local f = redis.call('HMGET', KEYS[1], 'l', 'b', 's', 'a')
local last = tonumber(f[1]) or 0
local blocked = tonumber(f[2]) or 0
local slowdown = math.max(tonumber(f[3]) or UNSLOWED, UNSLOWED)
local slowdown_set = tonumber(f[4]) or 0
local function slowdown_at(at)
  local excess = slowdown - UNSLOWED
  if excess <= 0 then return UNSLOWED end
  local elapsed = math.max(at - slowdown_set, 0)
  return UNSLOWED + math.floor(excess * 2 ^ (-elapsed / HALF_LIFE))
end
";

/// ARGV: keep (ms), then for each run of reservations of one request, in turn: how many,
/// interval, largest interval, longest wait and guard band (ms). Each run is
/// [`PaceState::reserve_run`] after the ones before it, at one `now`: the reservations of one
/// lane that arrive together share the call. Returns `{first, interval, granted}` for each run,
/// then `{now, slowdown, blocked_until, last}`.
const RESERVE: &str = r"
local slow = slowdown_at(now)
local out = {}
local wrote = false
for i = 2, #ARGV - 4, 5 do
  local count = tonumber(ARGV[i])
  local interval = tonumber(ARGV[i + 1])
  local max_interval = math.max(tonumber(ARGV[i + 2]), interval)
  local max_wait = tonumber(ARGV[i + 3])
  local applied = math.min(math.floor(interval * slow / UNSLOWED), max_interval)
  local period = applied + tonumber(ARGV[i + 4])
  local first = math.max(now, blocked)
  if last > 0 then first = math.max(first, last + period) end
  local granted = 0
  if first - now <= max_wait then
    if period == 0 then
      granted = count
    else
      granted = math.min(count, math.floor((now + max_wait - first) / period) + 1)
    end
    last = first + (granted - 1) * period
    wrote = true
  end
  out[#out + 1] = first
  out[#out + 1] = applied
  out[#out + 1] = granted
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

/// ARGV: 0 (success), 1 (pushback) or 2 (slow), the `Retry-After` in ms or -1, keep (ms), and 1 to
/// create the state or 0 to change only a state that exists. Returns the state after it and
/// now, as [`read`] does; or `exists` 0, and nothing written.
const SIGNAL: &str = r"
if ARGV[4] == '0' and redis.call('EXISTS', KEYS[1]) == 0 then
  return {0, 0, 0, 0, 0, now}
end
local slow = slowdown_at(now)
if ARGV[1] == '1' then
  slow = math.min(slow * 2, MAX_SLOWDOWN)
  local after = tonumber(ARGV[2])
  if after >= 0 then blocked = math.max(blocked, now + after) end
elseif ARGV[1] == '2' then
  slow = math.min(math.floor(slow * SLOW_TENTHS / 10), MAX_SLOWDOWN)
else
  slow = UNSLOWED + math.floor((slow - UNSLOWED) * KEEP_TENTHS / 10)
end
redis.call('HSET', KEYS[1], 's', string.format('%d', slow), 'a', string.format('%d', now),
  'b', string.format('%d', blocked))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {1, last, blocked, slow, now, now}
";

/// Returns `{exists, last, blocked, slowdown, set_at, now}`.
const READ: &str = r"
return {redis.call('EXISTS', KEYS[1]), last, blocked, slowdown, slowdown_set, now}
";

/// The script `body` after the prelude, with the policy's constants filled in.
pub(super) fn script(body: &str) -> String {
    format!("{PRELUDE}{body}")
        .replace("UNSLOWED", &UNSLOWED.to_string())
        .replace("MAX_SLOWDOWN", &MAX_SLOWDOWN.to_string())
        .replace("HALF_LIFE", &SLOWDOWN_HALF_LIFE_MS.to_string())
        .replace("KEEP_TENTHS", &SUCCESS_KEEPS_TENTHS.to_string())
        .replace("SLOW_TENTHS", &SLOW_GROWS_TENTHS.to_string())
}

/// The three scripts, built once.
pub(super) struct Scripts {
    pub(super) reserve: Lua,
    pub(super) signal: Lua,
    pub(super) read: Lua,
}

impl Scripts {
    pub(super) fn new() -> Scripts {
        Scripts {
            reserve: Lua::new(script(RESERVE)),
            signal: Lua::new(script(SIGNAL)),
            read: Lua::new(script(READ)),
        }
    }
}

/// The key of a lane's pacing state: in the lane's own hash slot.
pub(super) fn pace_key(lane: &str) -> String {
    format!("robotsd:{{{lane}}}:pace")
}

fn count_of(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

/// Six integers, as the signal and read scripts return.
fn six(values: Vec<i64>) -> Result<[u64; 6], StoreError> {
    <[i64; 6]>::try_from(values)
        .map(|v| v.map(count_of))
        .map_err(|v| StoreError::Failed(format!("pacing script returned {} values", v.len())))
}

/// The runs of one request that `requests` make, in their order: each request and how many
/// times it comes in a row. Made once a call, for both [`reserve`] and [`granted`].
pub(super) fn runs(requests: &[SlotRequest]) -> Vec<(SlotRequest, u64)> {
    let mut runs: Vec<(SlotRequest, u64)> = Vec::new();
    for request in requests {
        match runs.last_mut() {
            Some((last, count)) if last == request => *count += 1,
            _ => runs.push((*request, 1)),
        }
    }
    runs
}

/// The call that reserves `lane`'s next slots, one for each reservation of `runs` in turn;
/// [`granted`] reads its reply.
pub(super) fn reserve(
    scripts: &Scripts,
    lane: &str,
    runs: &[(SlotRequest, u64)],
    keep: Duration,
) -> redis::Cmd {
    let mut command = scripts.reserve.call(&[pace_key(lane)]);
    command.arg(millis(keep).max(1));
    run_args(&mut command, runs);
    command
}

/// Adds `runs` to a reservation script's arguments, five numbers each: how many, interval,
/// largest interval, longest wait and guard band (ms).
pub(super) fn run_args(command: &mut redis::Cmd, runs: &[(SlotRequest, u64)]) {
    for &(request, count) in runs {
        command
            .arg(count)
            .arg(request.interval_ms)
            .arg(request.max_interval_ms)
            .arg(request.max_wait_ms)
            .arg(request.guard_ms);
    }
}

/// The slots a [`reserve`] call for `runs` grants, one for each reservation, in their order.
pub(super) fn granted(
    reply: Vec<i64>,
    runs: &[(SlotRequest, u64)],
) -> Result<Vec<SlotGrant>, StoreError> {
    if reply.len() != runs.len() * 3 + 4 {
        return Err(StoreError::Failed(format!(
            "pacing script returned {} values for {} runs",
            reply.len(),
            runs.len()
        )));
    }
    let values: Vec<u64> = reply.into_iter().map(count_of).collect();
    let (slots, tail) = values.split_at(runs.len() * 3);
    let shared = RunShared {
        now: tail[0],
        slowdown: tail[1],
        blocked_until: tail[2],
        last_slot: tail[3],
    };
    let total = runs.iter().map(|&(_, count)| count).sum::<u64>();
    let mut grants = Vec::with_capacity(usize::try_from(total).unwrap_or(0));
    for (&(request, count), slot) in runs.iter().zip(slots.chunks_exact(3)) {
        let run = SlotRun {
            first: slot[0],
            interval_ms: slot[1],
            granted: slot[2].min(count),
        };
        grants.extend((0..count).map(|index| run.grant(index, request, shared)));
    }
    Ok(grants)
}

/// The call that reports `signal` into `lane`'s state: `create` 1 creates the state, 0 changes
/// only a state that exists. [`reading`] reads its reply.
pub(super) fn signal(
    scripts: &Scripts,
    lane: &str,
    signal: Signal,
    keep: Duration,
    create: u8,
) -> redis::Cmd {
    let (kind, after) = match signal {
        Signal::Success => (0, -1),
        Signal::Slow => (2, -1),
        Signal::Pushback { retry_after_ms } => (
            1,
            retry_after_ms.map_or(-1, |ms| i64::try_from(ms).unwrap_or(i64::MAX)),
        ),
    };
    let mut command = scripts.signal.call(&[pace_key(lane)]);
    command
        .arg(kind)
        .arg(after)
        .arg(millis(keep).max(1))
        .arg(create);
    command
}

/// The call that reads `origin`'s state; [`reading`] reads its reply.
pub(super) fn read(scripts: &Scripts, origin: &str) -> redis::Cmd {
    scripts.read.call(&[pace_key(origin)])
}

/// The state a [`signal`] or [`read`] call's reply shows, with Redis's now; `None` when the lane
/// has none.
pub(super) fn reading(reply: Vec<i64>) -> Result<Option<PaceReading>, StoreError> {
    let [exists, last_slot, blocked_until, slowdown, slowdown_at, now] = six(reply)?;
    Ok((exists == 1).then_some(PaceReading {
        state: PaceState {
            last_slot,
            blocked_until,
            slowdown,
            slowdown_at,
        },
        now,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scripts_carry_the_policy_s_constants() {
        let scripts = Scripts::new();
        for body in [&scripts.reserve, &scripts.signal, &scripts.read].map(Lua::text) {
            assert!(body.contains("math.max(tonumber(f[3]) or 1000, 1000)"));
            assert!(body.contains("2 ^ (-elapsed / 60000)"));
            assert!(!body.contains("UNSLOWED") && !body.contains("HALF_LIFE"));
        }
        assert!(scripts.signal.text().contains("math.min(slow * 2, 64000)"));
        assert!(scripts.signal.text().contains("* 9 / 10"));
        assert!(scripts.signal.text().contains("math.floor(slow * 15 / 10)"));
    }

    #[test]
    fn pacing_keys_share_the_origin_s_hash_tag() {
        assert_eq!(
            pace_key("https://example.com:8443"),
            "robotsd:{https://example.com:8443}:pace"
        );
    }
}
