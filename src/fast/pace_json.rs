//! The `pace` member of a check's answer (`pace=true`) written by hand, as the rest of the answer
//! is: through serde (`PaceJson`, with two RFC 3339 times formatted by humantime and a float by
//! ryu) it cost more than the whole answer without it. Byte for byte what serde writes for
//! `PaceJson`, which `answer_json`'s tests hold it to over every variant and arbitrary values.

use super::json::{number, optional, serde_json_value, string};
use crate::clock::Timestamp;
use crate::pace_policy::millis;
use crate::pacing::Pace;

/// Appends `pace` as the JSON of its `PaceJson`.
pub(super) fn write_pace(out: &mut Vec<u8>, pace: &Pace) {
    out.extend_from_slice(if pace.reserved {
        br#"{"outcome":"reserved","next":"fetch","lane":"#
    } else {
        br#"{"outcome":"deferred","next":"ask_again","lane":"#
    });
    string(out, &pace.lane);
    out.extend_from_slice(br#","not_before":"#);
    timestamp_millis(out, pace.not_before);
    out.extend_from_slice(br#","wait_ms":"#);
    number(out, millis(pace.wait));
    out.extend_from_slice(br#","interval_ms":"#);
    number(out, millis(pace.interval));
    out.extend_from_slice(br#","interval_source":""#);
    out.extend_from_slice(pace.source.as_str().as_bytes());
    out.extend_from_slice(br#"","crawl_delay_line":"#);
    optional(out, pace.crawl_delay_line, number);
    out.extend_from_slice(if pace.capped {
        br#","capped":true,"slowdown":"#
    } else {
        br#","capped":false,"slowdown":"#
    });
    // Nearly always 1 (no pushback): serde_json's float formatting for the rest.
    if pace.slowdown == 1.0 {
        out.extend_from_slice(b"1.0");
    } else {
        serde_json_value(out, &pace.slowdown);
    }
    out.extend_from_slice(br#","retry_after_until":"#);
    optional(out, pace.retry_after_until, timestamp_millis);
    out.extend_from_slice(br#","scope":""#);
    out.extend_from_slice(pace.scope.as_str().as_bytes());
    out.extend_from_slice(br#"","fleet_size":"#);
    number(out, pace.fleet.size());
    out.extend_from_slice(br#","fleet_index":"#);
    optional(out, pace.fleet.index(), number);
    out.push(b'}');
}

/// A quoted RFC 3339 time to the millisecond, as `pacing::answer::rfc3339_millis` writes it.
fn timestamp_millis(out: &mut Vec<u8>, at: Timestamp) {
    out.push(b'"');
    super::timestamp::write_rfc3339_millis(out, at.to_system());
    out.push(b'"');
}
