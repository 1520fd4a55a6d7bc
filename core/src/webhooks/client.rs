//! Sending one delivery: an HTTP `POST` through `reqwest` (rustls over graviola, trusting the
//! system's root certificates), signed as Standard Webhooks says, that follows no redirect,
//! ends at the timeout (15 s by default, the answer's body included), reads at most
//! [`MAX_ANSWER`] bytes of the answer, and connects only to public addresses (checked on the
//! addresses the connection uses, by a resolver of its own) unless private targets are
//! allowed.

use std::error::Error as _;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use super::sign;
use super::target::{self, Refused};

/// The most bytes of an answer's body read (so that the connection can be kept); a longer
/// body is left unread and its connection closed.
pub(crate) const MAX_ANSWER: usize = 64 * 1024;

/// The longest `last_error` kept.
const MAX_ERROR: usize = 500;

/// How an attempt went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Outcome {
    /// The answer's status code, if one came.
    pub(crate) status: Option<u16>,
    /// Why it failed; `None` for a 2xx.
    pub(crate) error: Option<String>,
}

/// Sends deliveries.
#[derive(Debug, Clone)]
pub(crate) struct Sender {
    client: reqwest::Client,
    allow_private: bool,
    timeout: Duration,
}

/// Resolves names as the system does, refusing names with an address that is not public.
#[derive(Debug)]
struct PublicOnly;

impl Resolve for PublicOnly {
    fn resolve(&self, name: Name) -> Resolving {
        Box::pin(async move {
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((name.as_str(), 0)).await?.collect();
            if addrs.is_empty() {
                return Err(Refused::Unresolved(name.as_str().to_owned()).into());
            }
            target::only_public(addrs.iter().map(SocketAddr::ip))?;
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// Why no sender could be made.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SenderError {
    /// The TLS configuration could not be made (graviola offers no protocol version rustls
    /// takes).
    #[error("webhook TLS: {0}")]
    Tls(#[from] rustls::Error),
    /// The HTTP client could not be made.
    #[error("webhook HTTP client: {0}")]
    Client(#[from] reqwest::Error),
}

/// The root certificates of the system (those it cannot read are left out, and logged).
fn system_roots() -> rustls::RootCertStore {
    let found = rustls_native_certs::load_native_certs();
    for e in &found.errors {
        tracing::warn!(error = %e, "a system root certificate store could not be read");
    }
    let mut roots = rustls::RootCertStore::empty();
    let (added, ignored) = roots.add_parsable_certificates(found.certs);
    tracing::debug!(added, ignored, "webhook TLS roots");
    roots
}

impl Sender {
    /// A sender whose attempts end after `timeout`; `allow_private` lets it reach any address.
    /// It trusts the system's root certificates.
    pub(crate) fn new(timeout: Duration, allow_private: bool) -> Result<Self, SenderError> {
        Self::trusting(system_roots(), timeout, allow_private)
    }

    /// [`Sender::new`], trusting the certificates of `roots`.
    pub(crate) fn trusting(
        roots: rustls::RootCertStore,
        timeout: Duration,
        allow_private: bool,
    ) -> Result<Self, SenderError> {
        let provider = Arc::new(rustls_graviola::default_provider());
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_root_certificates(roots)
            .with_no_client_auth();
        let mut builder = reqwest::Client::builder()
            .use_preconfigured_tls(tls)
            .redirect(reqwest::redirect::Policy::none())
            .timeout(timeout)
            .connect_timeout(timeout)
            .no_proxy()
            .user_agent(concat!("assetlib-webhooks/", env!("CARGO_PKG_VERSION")))
            .pool_idle_timeout(Duration::from_secs(60));
        if !allow_private {
            builder = builder.dns_resolver(Arc::new(PublicOnly));
        }
        Ok(Sender {
            client: builder.build()?,
            allow_private,
            timeout,
        })
    }

    /// Sends `body` to `url`, signed with `secret` as message `id` at `timestamp` (Unix
    /// seconds). A 2xx is success; anything else is a failure that says why.
    pub(crate) async fn send(
        &self,
        url: &str,
        secret: &str,
        id: &str,
        timestamp: i64,
        body: &str,
    ) -> Outcome {
        let failed = |error: String| Outcome {
            status: None,
            error: Some(error),
        };
        let url = match target::parse(url) {
            Ok(url) => url,
            Err(e) => return failed(e.to_string()),
        };
        if let Some(ip) = target::literal(&url).filter(|_| !self.allow_private)
            && let Err(e) = target::only_public([ip])
        {
            return failed(e.to_string());
        }
        let Some(signature) = sign::signature(secret, id, timestamp, body.as_bytes()) else {
            return failed("the webhook's secret cannot sign".to_owned());
        };
        let request = self
            .client
            .post(url)
            .header("content-type", "application/json")
            .header("webhook-id", id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signature)
            .body(body.to_owned());
        let mut response = match request.send().await {
            Ok(response) => response,
            Err(e) => return failed(self.describe(&e)),
        };
        let status = response.status().as_u16();
        // Read a small answer whole, so its connection is kept; stop early on a large one.
        let mut read = 0;
        while read < MAX_ANSWER {
            match response.chunk().await {
                Ok(Some(chunk)) => read += chunk.len(),
                Ok(None) | Err(_) => break,
            }
        }
        Outcome {
            status: Some(status),
            error: (!(200..300).contains(&status))
                .then(|| format!("the endpoint answered {status}")),
        }
    }

    /// What went wrong with a request that got no answer, in a line.
    fn describe(&self, e: &reqwest::Error) -> String {
        if e.is_timeout() {
            return format!("no answer within {} s", self.timeout.as_secs_f64());
        }
        // The deepest cause says most (a refused address, a reset connection).
        let mut text = e.to_string();
        let mut source = e.source();
        while let Some(cause) = source {
            if let Some(refused) = cause.downcast_ref::<Refused>() {
                return refused.to_string();
            }
            text = cause.to_string();
            source = cause.source();
        }
        let mut text = format!("could not deliver: {text}");
        if text.len() > MAX_ERROR {
            let mut end = MAX_ERROR;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::*;

    /// A listener on 127.0.0.1 answering 204 to every connection; how many connected.
    async fn endpoint() -> (u16, Arc<std::sync::atomic::AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let seen = Arc::clone(&count);
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let mut buf = [0u8; 4096];
                let _ = stream.read(&mut buf).await;
                let _ = stream
                    .write_all(b"HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n")
                    .await;
            }
        });
        (port, count)
    }

    /// At delivery, a name is refused by what it resolves to, and an address by itself: no
    /// connection is made. Allowed, the same URLs are delivered to.
    #[tokio::test]
    async fn private_targets_are_refused_at_delivery_before_any_connection() {
        let (port, connections) = endpoint().await;
        let public_only = Sender::new(Duration::from_secs(2), false).unwrap();
        for url in [
            format!("http://localhost:{port}/hook"),
            format!("http://127.0.0.1:{port}/hook"),
        ] {
            let outcome = public_only.send(&url, "whsec_AAAA", "evt_1", 1, "{}").await;
            assert_eq!(outcome.status, None, "{url}");
            let error = outcome.error.unwrap();
            assert!(
                error.starts_with("url must not lead to a loopback"),
                "{url}: {error}"
            );
        }
        assert_eq!(connections.load(std::sync::atomic::Ordering::SeqCst), 0);
        let any = Sender::new(Duration::from_secs(2), true).unwrap();
        let outcome = any
            .send(
                &format!("http://localhost:{port}/hook"),
                "whsec_AAAA",
                "evt_1",
                1,
                "{}",
            )
            .await;
        assert_eq!(
            outcome,
            Outcome {
                status: Some(204),
                error: None
            }
        );
        assert_eq!(connections.load(std::sync::atomic::Ordering::SeqCst), 1);
    }
}
