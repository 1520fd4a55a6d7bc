//! The connection loop both ready servers share, whatever framework answers the requests:
//! HTTP/1.1 over hyper with the limits DESIGN.md's "HTTP robustness" sets.
//!
//! - A request head must arrive within [`HEAD_TIMEOUT`] (10 s) from the moment the server
//!   waits for it, so a client that sends half a head is cut off. hyper counts this from the
//!   end of the previous answer, so an idle keep-alive connection is closed after the same
//!   10 s (a shorter idle time than DESIGN's 60 s, never a longer one).
//! - A body must keep arriving: that gap is core's (`Config::body_timeout`, 30 s).
//! - On the shutdown signal the listener closes, requests in flight get at most
//!   [`SHUTDOWN_GRACE`] (10 s) to finish, and then every connection still open is dropped, so
//!   a slow client never holds the process: the caller then flushes the store and exits 0.

use std::convert::Infallible;
use std::future::Future;
use std::time::Duration;

use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;

use super::BoxError;

/// Longest time the server waits for a request head.
pub(crate) const HEAD_TIMEOUT: Duration = Duration::from_secs(10);

/// Longest time requests in flight get to finish after the shutdown signal.
pub(crate) const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Serves `service` on `listener` until `shutdown` resolves, then winds down as the module
/// docs say.
pub(crate) async fn serve<S, B>(
    listener: TcpListener,
    service: S,
    shutdown: impl Future<Output = ()>,
) -> Result<(), BoxError>
where
    S: tower::Service<hyper::Request<Incoming>, Response = hyper::Response<B>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(HEAD_TIMEOUT);
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of file descriptors and the like: wait a moment, keep serving.
                    tracing::warn!(error = %e, "cannot accept a connection");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // Answers are small and whole: send them at once.
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error = %e, "cannot set TCP_NODELAY");
        }
        let service = TowerToHyperService::new(service.clone());
        let connection = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => tracing::info!("every request in flight is answered"),
        () = tokio::time::sleep(SHUTDOWN_GRACE) => tracing::warn!(
            "closing the connections still open {} s after the shutdown signal",
            SHUTDOWN_GRACE.as_secs()
        ),
    }
    Ok(())
}
