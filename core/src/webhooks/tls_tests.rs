//! The webhook sender over TLS, against a real HTTPS endpoint on 127.0.0.1 whose certificate a
//! throwaway CA (made with the `openssl` command) signed: a sender trusting that CA delivers;
//! one trusting only the system's roots refuses the endpoint's certificate.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::client::Sender;

/// Runs `openssl` with `args` in `dir`; it must succeed.
fn openssl(dir: &Path, args: &[&str]) {
    let status = Command::new(assetlib_testkit::tools::OPENSSL.require())
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("run openssl");
    assert!(status.success(), "openssl {args:?} failed");
}

/// A CA and a certificate for 127.0.0.1 it signed, as PEM files in `dir`: `ca.pem`,
/// `leaf.pem` and `leaf.key`.
fn certificates(dir: &Path) {
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let mut ca = vec![
        "req",
        "-x509",
        "-days",
        "2",
        "-subj",
        "/CN=assetlib test CA",
    ];
    ca.extend(ec);
    ca.extend(["-keyout", "ca.key", "-out", "ca.pem"]);
    openssl(dir, &ca);
    let mut request = vec!["req", "-new", "-subj", "/CN=127.0.0.1"];
    request.extend(ec);
    request.extend(["-keyout", "leaf.key", "-out", "leaf.csr"]);
    openssl(dir, &request);
    std::fs::write(
        dir.join("leaf.ext"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .expect("write leaf.ext");
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "leaf.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "leaf.ext",
            "-out",
            "leaf.pem",
        ],
    );
}

/// An HTTPS endpoint on 127.0.0.1 answering each request 204 and sending back what it read,
/// with `leaf.pem` and `leaf.key` of `dir`; its port, and the requests' heads as they come.
async fn endpoint(dir: &Path) -> (u16, tokio::sync::mpsc::UnboundedReceiver<String>) {
    let chain = vec![CertificateDer::from_pem_file(dir.join("leaf.pem")).expect("leaf.pem")];
    let key = PrivateKeyDer::from_pem_file(dir.join("leaf.key")).expect("leaf.key");
    let provider = Arc::new(rustls_graviola::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .expect("server certificate");
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("address").port();
    let (heads, seen) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, heads) = (acceptor.clone(), heads.clone());
            tokio::spawn(async move {
                // A refused handshake (the untrusting sender) simply ends the connection.
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let mut read = Vec::new();
                let mut buf = [0u8; 4096];
                while !read.windows(4).any(|w| w == b"\r\n\r\n") {
                    match tls.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => read.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = heads.send(String::from_utf8_lossy(&read).into_owned());
                let answer = b"HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n";
                let _ = tls.write_all(answer).await;
                let _ = tls.shutdown().await;
            });
        }
    });
    (port, seen)
}

#[tokio::test]
async fn deliveries_go_over_tls_to_an_endpoint_the_roots_vouch_for() {
    let dir = tempfile::tempdir().expect("temporary directory");
    certificates(dir.path());
    let (port, mut heads) = endpoint(dir.path()).await;
    let url = format!("https://127.0.0.1:{port}/hook");
    let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

    let mut roots = rustls::RootCertStore::empty();
    let ca = CertificateDer::from_pem_file(dir.path().join("ca.pem")).expect("ca.pem");
    roots.add(ca).expect("the CA as a root");
    let trusting = Sender::trusting(roots, Duration::from_secs(5), true).expect("sender");
    let outcome = trusting
        .send(&url, secret, "msg_1", 1_700_000_000, "{}")
        .await;
    assert_eq!((outcome.status, outcome.error), (Some(204), None));
    let head = heads.recv().await.expect("the endpoint read a request");
    assert!(head.starts_with("POST /hook HTTP/1.1\r\n"), "{head}");
    assert!(head.contains("webhook-id: msg_1\r\n"), "{head}");

    // The system's roots do not know the throwaway CA: the certificate is refused, and the
    // attempt says so.
    let untrusting = Sender::new(Duration::from_secs(5), true).expect("sender");
    let outcome = untrusting
        .send(&url, secret, "msg_2", 1_700_000_000, "{}")
        .await;
    assert_eq!(outcome.status, None);
    let error = outcome.error.unwrap_or_default();
    assert!(error.to_lowercase().contains("certificate"), "{error}");
}
