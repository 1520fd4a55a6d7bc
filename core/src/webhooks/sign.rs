//! Standard Webhooks signatures: a webhook's secret is `whsec_` and the base64 of 32 random
//! bytes; a delivery carries `webhook-id`, `webhook-timestamp` (Unix seconds) and
//! `webhook-signature: v1,<base64 of HMAC-SHA256(secret bytes, "{id}.{timestamp}.{body}")>`.
//!
//! [`verify`] is what a receiver written in Rust checks (it also checks the timestamp against
//! its own clock: [`verify_at`]).

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The prefix of a webhook secret.
pub const SECRET_PREFIX: &str = "whsec_";

/// How far a delivery's timestamp may be from the receiver's clock (5 minutes, as the Standard
/// Webhooks libraries allow).
pub const TOLERANCE_SECONDS: i64 = 300;

/// A new random secret: `whsec_` and the base64 of 32 random bytes.
///
/// # Errors
/// When the system's random source fails.
pub fn new_secret() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(format!("{SECRET_PREFIX}{}", STANDARD.encode(bytes)))
}

/// The key bytes of a secret (`whsec_` optional, then base64).
fn key(secret: &str) -> Option<Vec<u8>> {
    let encoded = secret.strip_prefix(SECRET_PREFIX).unwrap_or(secret);
    STANDARD.decode(encoded).ok().filter(|k| !k.is_empty())
}

fn mac(key: &[u8], id: &str, timestamp: i64, body: &[u8]) -> Option<Hmac<Sha256>> {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key).ok()?;
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    Some(mac)
}

/// The `webhook-signature` value of a delivery: `v1,` and the base64 HMAC-SHA256; `None` when
/// `secret` is not a secret.
pub fn signature(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> Option<String> {
    let mac = mac(&key(secret)?, id, timestamp, body)?;
    Some(format!(
        "v1,{}",
        STANDARD.encode(mac.finalize().into_bytes())
    ))
}

/// Whether one of the space-separated signatures of `header` is the `v1` signature of the
/// delivery (compared in constant time). The timestamp is not checked against a clock.
pub fn verify(secret: &str, id: &str, timestamp: i64, body: &[u8], header: &str) -> bool {
    let Some(key) = key(secret) else {
        return false;
    };
    header.split(' ').any(|one| {
        let Some(sig) = one
            .strip_prefix("v1,")
            .and_then(|s| STANDARD.decode(s).ok())
        else {
            return false;
        };
        mac(&key, id, timestamp, body).is_some_and(|m| m.verify_slice(&sig).is_ok())
    })
}

/// [`verify`], and the timestamp within [`TOLERANCE_SECONDS`] of `now` (Unix seconds).
pub fn verify_at(
    secret: &str,
    (id, timestamp, body): (&str, i64, &[u8]),
    header: &str,
    now: i64,
) -> bool {
    (timestamp - now).abs() <= TOLERANCE_SECONDS && verify(secret, id, timestamp, body, header)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of the Standard Webhooks specification.
    #[test]
    fn the_specification_example_signs_alike() {
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
        let body = br#"{"test": 2432232314}"#;
        let sig = signature(secret, id, 1_614_265_330, body).unwrap();
        assert_eq!(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
        assert!(verify(
            secret,
            id,
            1_614_265_330,
            body,
            &format!("v1,bogus {sig}")
        ));
        assert!(!verify(secret, id, 1_614_265_331, body, &sig));
        assert!(!verify(
            secret,
            id,
            1_614_265_330,
            b"{\"test\": 2432232315}",
            &sig
        ));
        assert!(!verify_at(
            secret,
            (id, 1_614_265_330, body),
            &sig,
            1_614_265_330 + 301
        ));
        assert!(verify_at(
            secret,
            (id, 1_614_265_330, body),
            &sig,
            1_614_265_330 - 300
        ));
    }

    #[test]
    fn secrets_are_32_random_bytes() {
        let a = new_secret().unwrap();
        assert!(a.starts_with(SECRET_PREFIX));
        assert_eq!(key(&a).unwrap().len(), 32);
        assert_ne!(a, new_secret().unwrap());
        assert_eq!(signature("whsec_", "x", 1, b""), None);
    }
}
