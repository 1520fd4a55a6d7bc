//! Rate limits ([`crate::Config::rate_limit`]): a GCRA budget per API key, and one of the same
//! size per client address for requests without a key, in this process's memory, from the
//! `governor` crate.

use std::hash::Hash;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU32, Ordering};

use governor::clock::{Clock, DefaultClock};
use governor::state::keyed::HashMapStateStore;
use governor::{Quota, RateLimiter};
use uuid::Uuid;

use crate::error::ApiError;

/// A per-key budget: `per_second` requests each second on average, up to `burst` at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// Requests per second a key may make on average.
    pub per_second: NonZeroU32,
    /// Requests a key may make at once after a quiet spell.
    pub burst: NonZeroU32,
}

/// Checks between two sweeps of keys whose budget is full again (they are forgotten, so the
/// map holds only keys seen lately).
const SWEEP_EVERY: u32 = 4096;

/// The budgets of one service: per key, and per client address for keyless requests.
#[derive(Debug)]
pub(crate) struct Budgets {
    keys: Limiter<Uuid>,
    addresses: Limiter<IpAddr>,
}

impl Budgets {
    pub(crate) fn new(limit: RateLimit) -> Self {
        Budgets {
            keys: Limiter::new(limit),
            addresses: Limiter::new(limit),
        }
    }

    /// Spends one request of `key`'s budget (see [`Limiter::check`]).
    pub(crate) fn check_key(&self, key: Uuid) -> Result<(), ApiError> {
        self.keys.check(key)
    }

    /// Spends one request of the budget that keyless requests from `client` share. IPv6
    /// clients are counted by their /64 network (one host usually holds a whole one);
    /// requests whose address is unknown share one budget.
    pub(crate) fn check_address(&self, client: Option<IpAddr>) -> Result<(), ApiError> {
        let bucket = match client {
            Some(IpAddr::V6(v6)) => match v6.to_ipv4_mapped() {
                Some(v4) => IpAddr::V4(v4),
                None => IpAddr::V6((u128::from(v6) & !u128::from(u64::MAX)).into()),
            },
            Some(v4) => v4,
            None => IpAddr::V6(std::net::Ipv6Addr::UNSPECIFIED),
        };
        self.addresses.check(bucket)
    }
}

/// One kind of budget, kept per `K`.
pub(crate) struct Limiter<K: Hash + Eq + Clone> {
    limiter: RateLimiter<K, HashMapStateStore<K>, DefaultClock>,
    clock: DefaultClock,
    checks: AtomicU32,
}

impl<K: Hash + Eq + Clone> std::fmt::Debug for Limiter<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Limiter").finish_non_exhaustive()
    }
}

impl<K: Hash + Eq + Clone> Limiter<K> {
    pub(crate) fn new(limit: RateLimit) -> Self {
        let quota = Quota::per_second(limit.per_second).allow_burst(limit.burst);
        let clock = DefaultClock::default();
        Limiter {
            limiter: RateLimiter::new(quota, HashMapStateStore::default(), clock.clone()),
            clock,
            checks: AtomicU32::new(0),
        }
    }

    /// Spends one request of `key`'s budget, or answers 429 with the whole seconds (at least
    /// one) until the next request is allowed.
    pub(crate) fn check(&self, key: K) -> Result<(), ApiError> {
        if self.checks.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
            self.limiter.retain_recent();
            self.limiter.shrink_to_fit();
        }
        self.limiter.check_key(&key).map_err(|not_until| {
            let wait = not_until.wait_time_from(self.clock.now());
            let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
            ApiError::TooManyRequests {
                retry_after: seconds.max(1),
            }
        })
    }

    /// Keys with state kept now.
    #[cfg(test)]
    fn tracked(&self) -> usize {
        self.limiter.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limit(per_second: u32, burst: u32) -> RateLimit {
        RateLimit {
            per_second: NonZeroU32::new(per_second).unwrap(),
            burst: NonZeroU32::new(burst).unwrap(),
        }
    }

    #[test]
    fn a_burst_is_allowed_then_429_with_retry_after() {
        let limiter = Limiter::<Uuid>::new(limit(1, 3));
        let key = Uuid::from_u128(1);
        for _ in 0..3 {
            assert!(limiter.check(key).is_ok());
        }
        match limiter.check(key) {
            Err(ApiError::TooManyRequests { retry_after }) => assert_eq!(retry_after, 1),
            other => panic!("{other:?}"),
        }
        assert!(
            limiter.check(Uuid::from_u128(2)).is_ok(),
            "another key has its own"
        );
    }

    #[test]
    fn keyless_requests_share_a_budget_per_address() {
        let limits = Budgets::new(limit(1, 2));
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        for _ in 0..2 {
            assert!(limits.check_address(Some(a)).is_ok());
        }
        assert!(
            limits.check_address(Some(a)).is_err(),
            "a's budget is spent"
        );
        assert!(limits.check_address(Some(b)).is_ok(), "b has its own");
        assert!(
            limits.check_key(Uuid::from_u128(1)).is_ok(),
            "keys have their own"
        );
        // One IPv6 /64 is one client; an IPv4-mapped address is its IPv4 address.
        let v6 = |s: &str| Some(s.parse::<IpAddr>().unwrap());
        assert!(limits.check_address(v6("2001:db8::1")).is_ok());
        assert!(limits.check_address(v6("2001:db8::ffff:1")).is_ok());
        assert!(limits.check_address(v6("2001:db8::2")).is_err());
        assert!(limits.check_address(v6("2001:db8:0:1::1")).is_ok());
        assert!(limits.check_address(v6("::ffff:192.0.2.1")).is_err());
        // Unknown addresses share one budget.
        assert!(limits.check_address(None).is_ok());
        assert!(limits.check_address(None).is_ok());
        assert!(limits.check_address(None).is_err());
    }

    #[test]
    fn quiet_keys_are_forgotten() {
        let limiter = Limiter::<Uuid>::new(limit(1_000_000, 1));
        for i in 0..SWEEP_EVERY * 2 {
            let _ = limiter.check(Uuid::from_u128(u128::from(i)));
        }
        assert!(
            limiter.tracked() < SWEEP_EVERY as usize * 2,
            "{}",
            limiter.tracked()
        );
    }
}
