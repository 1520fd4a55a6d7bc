//! The connection loop both ready servers share, whatever framework answers the requests:
//! HTTP/1.1 over hyper with the limits DESIGN.md's "HTTP robustness" sets.
//!
//! - A request head must be complete within [`HEAD_TIMEOUT`] (10 s) of its first byte, so a
//!   client that sends half a head is cut off ([`TimedStream`] and [`HeadClock`]).
//! - A connection with no request under way closes after [`IDLE_TIMEOUT`] (60 s): hyper's
//!   own header timer, which counts from the moment it waits for a head.
//! - A body must keep arriving: that gap is core's (`Config::body_timeout`, 30 s).
//! - On the shutdown signal the listener closes, requests in flight get at most
//!   [`SHUTDOWN_GRACE`] (10 s) to finish, and then every connection still open is dropped, so
//!   a slow client never holds the process: the caller then flushes the store and exits 0.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{Instant, Sleep};

use super::BoxError;

/// Longest time a request head may take from its first byte to its end.
pub(crate) const HEAD_TIMEOUT: Duration = Duration::from_secs(10);

/// Longest time a connection stays open with no request under way.
pub(crate) const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

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
        .header_read_timeout(IDLE_TIMEOUT);
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
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
        let clock = Arc::new(HeadClock::default());
        let service = {
            let (clock, service) = (clock.clone(), service.clone());
            // Core rate-limits keyless requests by the client's address.
            hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
                request.extensions_mut().insert(assetlib::PeerAddr(peer));
                clock.head_complete();
                tower::ServiceExt::oneshot(service.clone(), request)
            })
        };
        let stream = TokioIo::new(TimedStream::new(stream, clock));
        let connection = graceful.watch(http.serve_connection(stream, service));
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

/// Where a connection is between requests, shared by its stream (which sees bytes) and its
/// service (which sees complete heads).
#[derive(Debug, Default)]
struct HeadClock {
    /// When the first byte of the head being read arrived, while that head is unfinished.
    started: Mutex<Option<Instant>>,
    /// From a complete head to the first byte of its answer: bytes read then are its body.
    in_request: AtomicBool,
}

impl HeadClock {
    /// `n` bytes arrived: outside a request they begin a head, whose deadline starts now.
    fn read(&self, n: usize) {
        if n > 0 && !self.in_request.load(Ordering::Acquire) {
            let mut started = self.started.lock().unwrap_or_else(PoisonError::into_inner);
            started.get_or_insert_with(Instant::now);
        }
    }

    /// The service got the request: its head is complete.
    fn head_complete(&self) {
        self.in_request.store(true, Ordering::Release);
        *self.started.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// The answer is being written: bytes read from now on begin the next head.
    fn answering(&self) {
        self.in_request.store(false, Ordering::Release);
    }

    /// The deadline of the head being read, if one is.
    fn deadline(&self) -> Option<Instant> {
        let started = self.started.lock().unwrap_or_else(PoisonError::into_inner);
        started.map(|t| t + HEAD_TIMEOUT)
    }
}

/// A TCP stream that fails its reads once a request head has taken longer than
/// [`HEAD_TIMEOUT`] since its first byte, so hyper closes the connection.
struct TimedStream {
    inner: TcpStream,
    clock: Arc<HeadClock>,
    timer: Option<Pin<Box<Sleep>>>,
}

impl TimedStream {
    fn new(inner: TcpStream, clock: Arc<HeadClock>) -> Self {
        TimedStream {
            inner,
            clock,
            timer: None,
        }
    }
}

impl AsyncRead for TimedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = &polled {
            let n = buf.filled().len() - before;
            self.clock.read(n);
            return polled;
        }
        if polled.is_pending()
            && let Some(deadline) = self.clock.deadline()
        {
            let timer = self
                .timer
                .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
            if timer.deadline() != deadline {
                timer.as_mut().reset(deadline);
            }
            if timer.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the request head took too long",
                )));
            }
        }
        polled
    }
}

impl AsyncWrite for TimedStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.clock.answering();
        Pin::new(&mut self.inner).poll_write(cx, data)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.clock.answering();
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
