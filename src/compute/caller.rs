//! Who asked for a job on the compute threads: each caller has a share of them of its own
//! (`docs/behaviour.md`, "A fair share of the compute").

use std::hash::BuildHasher;
use std::net::IpAddr;
use std::sync::OnceLock;

/// The caller a job is queued for. Jobs of one caller are served in the order they came; jobs of
/// different callers take turns ([`super::Compute::offload`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Caller {
    /// A job whose caller is not known (the library used directly, a test): all such jobs share
    /// one queue.
    #[default]
    Unknown,
    /// A caller known by its address: an IPv4 address, or an IPv6 address's /64, since one
    /// host is given a whole /64 and could otherwise ask from as many addresses as it likes.
    Address(IpAddr),
    /// A caller known by its API token (`--api-tokens`): a keyed hash of it, so that the token
    /// itself is not kept, and no caller can choose a token that shares another's queue.
    Token(u64),
}

impl Caller {
    /// The caller at `address`.
    pub fn address(address: IpAddr) -> Caller {
        Caller::Address(match address.to_canonical() {
            IpAddr::V4(v4) => IpAddr::V4(v4),
            IpAddr::V6(v6) => {
                let prefix = u128::from(v6) & !u128::from(u64::MAX);
                IpAddr::V6(prefix.into())
            }
        })
    }

    /// The caller presenting `token` (the `Authorization` header's value).
    pub fn token(token: &[u8]) -> Caller {
        // A key drawn once per process: the hash cannot be steered from outside.
        static KEY: OnceLock<std::collections::hash_map::RandomState> = OnceLock::new();
        Caller::Token(KEY.get_or_init(Default::default).hash_one(token))
    }

    /// The caller of a request: by its token when the service has tokens and the request shows
    /// one, else by its peer's address, if known.
    pub fn of(token: Option<&[u8]>, peer: Option<IpAddr>) -> Caller {
        match (token, peer) {
            (Some(token), _) => Caller::token(token),
            (None, Some(address)) => Caller::address(address),
            (None, None) => Caller::Unknown,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ipv6_host_is_one_caller_whatever_address_of_its_64_it_uses() {
        let a: IpAddr = "2001:db8:1:2::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:ffff::9".parse().unwrap();
        let other: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(Caller::address(a), Caller::address(b));
        assert_ne!(Caller::address(a), Caller::address(other));
    }

    #[test]
    fn ipv4_addresses_are_callers_of_their_own_however_written() {
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let mapped: IpAddr = "::ffff:192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        assert_eq!(Caller::address(a), Caller::address(mapped));
        assert_ne!(Caller::address(a), Caller::address(b));
    }

    #[test]
    fn a_token_names_the_caller_before_its_address() {
        let peer: IpAddr = "192.0.2.1".parse().unwrap();
        let a = Caller::of(Some(b"Bearer a"), Some(peer));
        assert_eq!(a, Caller::of(Some(b"Bearer a"), None));
        assert_ne!(a, Caller::of(Some(b"Bearer b"), Some(peer)));
        assert_ne!(a, Caller::of(None, Some(peer)));
        assert_eq!(Caller::of(None, None), Caller::Unknown);
    }
}
