//! Per-key rate limits ([`crate::Config::rate_limit`]): a GCRA budget per API key, in this
//! process's memory, from the `governor` crate.

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

/// The limiter of one service.
pub(crate) struct Limiter {
    limiter: RateLimiter<Uuid, HashMapStateStore<Uuid>, DefaultClock>,
    clock: DefaultClock,
    checks: AtomicU32,
}

impl std::fmt::Debug for Limiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Limiter").finish_non_exhaustive()
    }
}

impl Limiter {
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
    pub(crate) fn check(&self, key: Uuid) -> Result<(), ApiError> {
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
        let limiter = Limiter::new(limit(1, 3));
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
    fn quiet_keys_are_forgotten() {
        let limiter = Limiter::new(limit(1_000_000, 1));
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
