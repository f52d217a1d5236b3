//! The tests of `fetch`.

use super::*;

#[test]
fn cache_control_lifetimes() {
    assert_eq!(
        cache_control_max_age("max-age=120"),
        Some(Duration::from_secs(120))
    );
    assert_eq!(
        cache_control_max_age("public, MAX-AGE=\"60\""),
        Some(Duration::from_secs(60))
    );
    assert_eq!(
        cache_control_max_age("max-age=600, s-maxage=30"),
        Some(Duration::from_secs(30))
    );
    assert_eq!(cache_control_max_age("no-cache"), Some(Duration::ZERO));
    assert_eq!(
        cache_control_max_age("max-age=60, no-store"),
        Some(Duration::ZERO)
    );
    assert_eq!(cache_control_max_age("public"), None);
    assert_eq!(cache_control_max_age("max-age=soon"), None);
}

#[test]
fn retry_after_seconds_and_dates() {
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_480);
    assert_eq!(retry_after("120", now), Some(Duration::from_secs(120)));
    assert_eq!(
        retry_after("Wed, 21 Oct 2015 07:30:00 GMT", now),
        Some(Duration::from_secs(120))
    );
    assert_eq!(
        retry_after(
            "Wed, 21 Oct 2015 07:00:00 GMT",
            now + Duration::from_secs(86_400)
        ),
        Some(Duration::ZERO)
    );
    assert_eq!(retry_after("soon", now), None);
}

#[test]
fn validators_are_kept_only_when_short_visible_ascii() {
    let kept = Validators::of(Some(b"W/\"abc\""), Some(b"Wed, 25 Nov 2026 10:00:00 GMT"));
    assert_eq!(kept.etag.as_deref(), Some("W/\"abc\""));
    assert_eq!(
        kept.last_modified.as_deref(),
        Some("Wed, 25 Nov 2026 10:00:00 GMT")
    );
    let long = vec![b'a'; MAX_VALIDATOR_BYTES + 1];
    let dropped = Validators::of(Some(&long), Some(b"bad\r\nheader"));
    assert!(dropped.is_empty());
    assert!(Validators::of(Some(b""), None).is_empty());
    let exact = vec![b'a'; MAX_VALIDATOR_BYTES];
    assert_eq!(
        Validators::of(Some(&exact), None).heap_size(),
        MAX_VALIDATOR_BYTES
    );
}
