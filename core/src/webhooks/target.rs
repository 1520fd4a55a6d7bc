//! Where a webhook may send: an absolute `http` or `https` URL whose host is, and resolves
//! only to, public addresses. Loopback, private, link-local, shared (CGNAT), unspecified,
//! multicast, documentation and reserved addresses are refused, also when an IPv6 address
//! carries one of them (IPv4-mapped `::ffff:a.b.c.d`, IPv4-translated `::ffff:0:a.b.c.d`,
//! NAT64 `64:ff9b::a.b.c.d`, 6to4; IPv4-compatible `::a.b.c.d`, local-use NAT64
//! `64:ff9b:1::/48` and Teredo are refused whatever they carry), unless the service allows
//! private targets
//! ([`crate::Config::webhook_allow_private`]). The check runs when a webhook is made or
//! changed and again at every delivery, on the addresses the connection then uses (so a name
//! that resolves elsewhere later is caught).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use url::Url;

/// The longest webhook URL, in bytes.
pub const MAX_URL_LEN: usize = 2048;

/// A URL a webhook may not use, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// Not an absolute `http`/`https` URL with a host.
    #[error("url must be an absolute http or https URL of at most 2048 bytes")]
    NotHttp,
    /// The host is, or resolves to, an address that is not public.
    #[error("url must not lead to a loopback, private, link-local or reserved address ({0})")]
    Private(IpAddr),
    /// The URL names port 0, where no server listens.
    #[error("url must not name port 0")]
    PortZero,
    /// The host's name does not resolve.
    #[error("url's host {0} does not resolve to any address")]
    Unresolved(String),
}

/// Parses a webhook URL: absolute, `http` or `https`, with a host, no fragment (dropped), a
/// port other than 0; at most [`MAX_URL_LEN`] bytes. Control characters make it fail (the
/// `url` crate refuses them).
pub fn parse(raw: &str) -> Result<Url, Refused> {
    if raw.len() > MAX_URL_LEN || raw.chars().any(char::is_control) {
        return Err(Refused::NotHttp);
    }
    let mut url = Url::parse(raw).map_err(|_| Refused::NotHttp)?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(Refused::NotHttp);
    }
    if url.port() == Some(0) {
        return Err(Refused::PortZero);
    }
    url.set_fragment(None);
    Ok(url)
}

/// The address of a URL whose host is one (IPv6 in brackets included).
pub fn literal(url: &Url) -> Option<IpAddr> {
    match url.host()? {
        url::Host::Ipv4(v4) => Some(IpAddr::V4(v4)),
        url::Host::Ipv6(v6) => Some(IpAddr::V6(v6)),
        url::Host::Domain(_) => None,
    }
}

/// Checks where `url` leads, resolving its host's name (its port too): every address must be
/// public unless `allow_private`.
#[cfg(feature = "webhooks")]
pub async fn check(url: &Url, allow_private: bool) -> Result<(), Refused> {
    if allow_private {
        return Ok(());
    }
    if let Some(ip) = literal(url) {
        return only_public([ip]);
    }
    let host = url.host_str().ok_or(Refused::NotHttp)?;
    let port = url.port_or_known_default().unwrap_or(80);
    let addrs: Vec<IpAddr> = tokio::net::lookup_host((host, port))
        .await
        .map_err(|_| Refused::Unresolved(host.to_owned()))?
        .map(|a| a.ip())
        .collect();
    if addrs.is_empty() {
        return Err(Refused::Unresolved(host.to_owned()));
    }
    only_public(addrs)
}

/// `Ok` when every address is public.
pub fn only_public(addrs: impl IntoIterator<Item = IpAddr>) -> Result<(), Refused> {
    match addrs.into_iter().find(|ip| !is_public(*ip)) {
        Some(ip) => Err(Refused::Private(ip)),
        None => Ok(()),
    }
}

/// Whether `ip` is a public unicast address.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(a == 0 // "this network", unspecified
        || a == 10
        || a == 127
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
        || (a == 169 && b == 254)
        || (a == 172 && (16..32).contains(&b))
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 192 && b == 0 && c == 2) // documentation
        || (a == 192 && b == 168)
        || (a == 198 && (18..20).contains(&b)) // benchmarking
        || (a == 198 && b == 51 && c == 100) // documentation
        || (a == 203 && b == 0 && c == 113) // documentation
        || a >= 224) // multicast, reserved, broadcast
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    if let Some(v4) = embedded_v4(ip) {
        return is_public_v4(v4);
    }
    !(ip.is_unspecified()
        || ip.is_loopback()
        || (s[0] & 0xfe00) == 0xfc00 // unique local
        || (s[0] & 0xffc0) == 0xfe80 // link-local
        || (s[0] & 0xffc0) == 0xfec0 // site-local (deprecated)
        || (s[0] & 0xff00) == 0xff00 // multicast
        || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
        || (s[0] == 0x2001 && s[1] == 0) // Teredo: an IPv4 address in disguise
        || (s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1) // local-use NAT64 (64:ff9b:1::/48)
        || s[..6] == [0; 6]) // IPv4-compatible (deprecated) and the rest of ::/96
}

/// The IPv4 address an IPv6 address stands for: IPv4-mapped (`::ffff:a.b.c.d`),
/// IPv4-translated (`::ffff:0:a.b.c.d`, RFC 2765), NAT64 (`64:ff9b::a.b.c.d`) and 6to4
/// (`2002:AABB:CCDD::/48`).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let tail = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    if s[..5] == [0; 5] && s[5] == 0xffff {
        return Some(tail(s[6], s[7]));
    }
    if s[..4] == [0; 4] && s[4] == 0xffff && s[5] == 0 {
        return Some(tail(s[6], s[7]));
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return Some(tail(s[6], s[7]));
    }
    if s[0] == 0x2002 {
        return Some(tail(s[1], s[2]));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_and_special_addresses_are_not_public() {
        for ip in [
            "127.0.0.1",
            "127.255.0.9",
            "10.0.0.1",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "192.0.2.7",
            "::1",
            "::",
            "fe80::1",
            "fd00::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:10.1.2.3",
            "64:ff9b::a9fe:a9fe",
            "2002:7f00:1::",
            "2001:db8::1",
            "::127.0.0.1",
            "::7f00:1",
            "::8.8.8.8",
            "::ffff:0:7f00:1",
            "::ffff:0:127.0.0.1",
            "::ffff:0:10.0.0.1",
            "64:ff9b::127.0.0.1",
            "64:ff9b::7f00:1",
            "64:ff9b:1::8.8.8.8",
        ] {
            assert!(!is_public(ip.parse().unwrap()), "{ip}");
        }
        for ip in [
            "93.184.215.14",
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
            "::ffff:0:8.8.8.8",
            "64:ff9b::8.8.8.8",
        ] {
            assert!(is_public(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn only_http_urls_with_a_host() {
        for bad in [
            "ftp://example.com/x",
            "file:///etc/passwd",
            "mailto:a@example.com",
            "/relative",
            "http://",
            "https://exa mple.com",
            "http://example.com/\n",
            "",
        ] {
            assert_eq!(parse(bad), Err(Refused::NotHttp), "{bad:?}");
        }
        for zero in [
            "http://example.com:0/",
            "https://[::1]:0/h",
            "http://8.8.8.8:00/",
        ] {
            assert_eq!(parse(zero), Err(Refused::PortZero), "{zero:?}");
        }
        let url = parse("HTTPS://Example.COM/hook#frag").unwrap();
        assert_eq!(url.as_str(), "https://example.com/hook");
        assert_eq!(
            literal(&parse("http://[::1]:8080/").unwrap()),
            Some("::1".parse().unwrap())
        );
    }

    #[cfg(feature = "webhooks")]
    #[tokio::test]
    async fn names_are_checked_by_what_they_resolve_to() {
        let local = parse("http://localhost:9/hook").unwrap();
        assert!(matches!(
            check(&local, false).await,
            Err(Refused::Private(_))
        ));
        assert_eq!(check(&local, true).await, Ok(()));
        let literal = parse("http://169.254.169.254/latest").unwrap();
        assert_eq!(
            check(&literal, false).await,
            Err(Refused::Private("169.254.169.254".parse().unwrap()))
        );
        let nowhere = parse("http://no-such-host.invalid/").unwrap();
        assert!(matches!(
            check(&nowhere, false).await,
            Err(Refused::Unresolved(_))
        ));
    }
}
