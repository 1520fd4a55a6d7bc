//! Signed download links: `?expires=<unix seconds>&signature=<base64url HMAC-SHA256>` on a
//! download path, so a plain link can download without a key until it expires.
//!
//! The signature covers what the link opens (an asset's file, an image variant of it with its
//! canonical parameters, or a library's zip, by id), its
//! expiry and what it was minted with ([`Grant`]: `grant=paid` for a key with `read:paid`,
//! `pass=<pass id>` for a library pass, nothing for any other key), under the store's secret ([`crate::MetaStore::signing_secret`]), so every replica
//! signs and checks alike. Signatures are compared in constant time.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use uuid::Uuid;

use crate::error::ApiError;

/// The longest a link may live, in seconds (7 days).
pub(crate) const MAX_EXPIRES_IN: u64 = 7 * 24 * 3600;
/// How long a link lives when `expires_in` is not given, in seconds.
pub(crate) const DEFAULT_EXPIRES_IN: u64 = 3600;
/// How far a replica's clock may run behind the one that signed, in seconds.
const CLOCK_SKEW: u64 = 300;

/// The refusal of every bad link, whatever is wrong with it.
pub(crate) const INVALID: ApiError =
    ApiError::Unauthorized("Signed link is invalid or has expired");

/// What a link opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target<'a> {
    /// An asset's file.
    Asset(Uuid),
    /// A library's zip.
    Library(Uuid),
    /// An image variant of an asset: its id and the variant's canonical parameters
    /// ([`crate::variant::VariantSpec::canonical`]).
    Image(Uuid, &'a str),
}

/// What minted a link, and so what it may download when used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Grant {
    /// A key without `read:paid`: free files only, judged when the link is used.
    Free,
    /// A key with `read:paid`: paid files too.
    Paid,
    /// A library pass (by id): what the pass opens, checked against the pass when used.
    Pass(Uuid),
}

fn mac(secret: &[u8; 32], target: Target<'_>, expires: u64, grant: Grant) -> Hmac<Sha256> {
    // A 32-byte key is always accepted: HMAC takes keys of any length.
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret)
        .unwrap_or_else(|_| unreachable!("HMAC accepts keys of any length"));
    let subject = match target {
        Target::Asset(id) => format!("asset:{id}"),
        Target::Library(id) => format!("library:{id}"),
        Target::Image(id, spec) => format!("image:{id}:{spec}"),
    };
    match grant {
        Grant::Free => mac.update(format!("{subject}:{expires}").as_bytes()),
        Grant::Paid => mac.update(format!("{subject}:{expires}:paid").as_bytes()),
        Grant::Pass(pass) => mac.update(format!("{subject}:{expires}:pass:{pass}").as_bytes()),
    }
    mac
}

/// The query of a link to `target` valid until `expires` (unix seconds), minted with `grant`.
pub(crate) fn query(secret: &[u8; 32], target: Target<'_>, expires: u64, grant: Grant) -> String {
    let signature =
        URL_SAFE_NO_PAD.encode(mac(secret, target, expires, grant).finalize().into_bytes());
    match grant {
        Grant::Free => format!("expires={expires}&signature={signature}"),
        Grant::Paid => format!("expires={expires}&grant=paid&signature={signature}"),
        Grant::Pass(pass) => format!("expires={expires}&pass={pass}&signature={signature}"),
    }
}

/// Whether a query string carries a signed link's parameters (then the request is judged by
/// them, not as a keyless request).
pub(crate) fn is_signed(query: Option<&str>) -> bool {
    query.is_some_and(|q| {
        form_urlencoded::parse(q.as_bytes())
            .any(|(name, _)| name == "expires" || name == "signature")
    })
}

/// Checks the link parameters in `query` for `target` at `now` (unix seconds): exactly one
/// `expires` (decimal digits, not past, at most 7 days and the clock skew ahead), at most one
/// of `grant=paid` and `pass=<id>`, and exactly one `signature` that matches them. Anything
/// else is 401. Answers what minted the link.
pub(crate) fn verify(
    secret: &[u8; 32],
    target: Target<'_>,
    query: Option<&str>,
    now: u64,
) -> Result<Grant, ApiError> {
    let (mut expires, mut signature, mut grant, mut pass) = (None, None, None, None);
    for (name, value) in form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
        let slot = match name.as_ref() {
            "expires" => &mut expires,
            "signature" => &mut signature,
            "grant" => &mut grant,
            "pass" => &mut pass,
            _ => continue,
        };
        if slot.replace(value).is_some() {
            return Err(INVALID);
        }
    }
    let grant = match (grant.as_deref(), pass.as_deref()) {
        (None, None) => Grant::Free,
        (Some("paid"), None) => Grant::Paid,
        (None, Some(pass)) => Grant::Pass(crate::validate::strict_id(pass).ok_or(INVALID)?),
        _ => return Err(INVALID),
    };
    let (Some(expires), Some(signature)) = (expires, signature) else {
        return Err(INVALID);
    };
    if expires.is_empty() || !expires.bytes().all(|b| b.is_ascii_digit()) {
        return Err(INVALID);
    }
    let expires: u64 = expires.parse().map_err(|_| INVALID)?;
    if expires < now || expires > now.saturating_add(MAX_EXPIRES_IN + CLOCK_SKEW) {
        return Err(INVALID);
    }
    let signature = URL_SAFE_NO_PAD
        .decode(signature.as_bytes())
        .map_err(|_| INVALID)?;
    mac(secret, target, expires, grant)
        .verify_slice(&signature)
        .map_err(|_| INVALID)?;
    Ok(grant)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: [u8; 32] = [9; 32];
    const NOW: u64 = 1_800_000_000;

    fn target() -> Target<'static> {
        Target::Asset(Uuid::from_u128(5))
    }

    const PASS: Uuid = Uuid::from_u128(77);

    #[test]
    fn an_image_link_opens_its_variant_only() {
        let id = Uuid::from_u128(5);
        let card = Target::Image(id, "w=640&h=400&fit=cover&format=auto&q=80");
        let q = query(&SECRET, card, NOW + 60, Grant::Free);
        assert_eq!(verify(&SECRET, card, Some(&q), NOW).ok(), Some(Grant::Free));
        for other in [
            Target::Image(id, "w=2048&h=400&fit=cover&format=auto&q=80"),
            Target::Image(Uuid::from_u128(6), "w=640&h=400&fit=cover&format=auto&q=80"),
            Target::Asset(id),
        ] {
            assert!(verify(&SECRET, other, Some(&q), NOW).is_err(), "{other:?}");
        }
    }

    #[test]
    fn a_link_verifies_until_it_expires() {
        for grant in [Grant::Free, Grant::Paid, Grant::Pass(PASS)] {
            let q = query(&SECRET, target(), NOW + 60, grant);
            assert!(is_signed(Some(&q)));
            assert_eq!(verify(&SECRET, target(), Some(&q), NOW).ok(), Some(grant));
            assert_eq!(
                verify(&SECRET, target(), Some(&q), NOW + 60).ok(),
                Some(grant)
            );
            assert!(verify(&SECRET, target(), Some(&q), NOW + 61).is_err());
        }
        // Links minted before grants existed verify as they did.
        let old = query(&SECRET, target(), NOW + 60, Grant::Free);
        assert!(!old.contains("grant") && !old.contains("pass"));
    }

    #[test]
    fn a_grant_cannot_be_added_or_changed() {
        let free = query(&SECRET, target(), NOW + 60, Grant::Free);
        let paid = query(&SECRET, target(), NOW + 60, Grant::Paid);
        let pass = query(&SECRET, target(), NOW + 60, Grant::Pass(PASS));
        let sig = |q: &str| q.split("signature=").nth(1).unwrap_or_default().to_owned();
        let other = Uuid::from_u128(78);
        for q in [
            format!("{free}&grant=paid"),
            format!("{free}&pass={PASS}"),
            format!("expires={}&grant=free&signature={}", NOW + 60, sig(&paid)),
            format!("expires={}&pass={other}&signature={}", NOW + 60, sig(&pass)),
            format!("expires={}&signature={}", NOW + 60, sig(&pass)),
            format!("{pass}&grant=paid"),
            format!("{paid}&grant=paid"),
            format!("{pass}&pass={PASS}"),
            format!("expires={}&pass=alp_x&signature={}", NOW + 60, sig(&pass)),
        ] {
            assert!(verify(&SECRET, target(), Some(&q), NOW).is_err(), "{q}");
        }
    }

    #[test]
    fn every_bad_link_is_refused() {
        let good = query(&SECRET, target(), NOW + 60, Grant::Free);
        let sig = good
            .split("signature=")
            .nth(1)
            .unwrap_or_default()
            .to_owned();
        let far = NOW + MAX_EXPIRES_IN + CLOCK_SKEW + 1;
        let bad = [
            String::new(),
            format!("expires={}", NOW + 60),
            format!("signature={sig}"),
            format!("{good}&expires={}", NOW + 60),
            format!("{good}&signature={sig}"),
            format!("expires=+{}&signature={sig}", NOW + 60),
            format!("expires=abc&signature={sig}"),
            format!("expires={}&signature={sig}", NOW + 61),
            format!("expires={}&signature=AAAA", NOW + 60),
            format!("expires={}&signature=%%%", NOW + 60),
            query(&SECRET, target(), far, Grant::Free),
            query(&[8; 32], target(), NOW + 60, Grant::Free),
            query(
                &SECRET,
                Target::Library(Uuid::from_u128(5)),
                NOW + 60,
                Grant::Free,
            ),
            query(
                &SECRET,
                Target::Asset(Uuid::from_u128(6)),
                NOW + 60,
                Grant::Free,
            ),
        ];
        for q in bad {
            assert!(verify(&SECRET, target(), Some(&q), NOW).is_err(), "{q}");
        }
        assert!(verify(&SECRET, target(), None, NOW).is_err());
    }
}
