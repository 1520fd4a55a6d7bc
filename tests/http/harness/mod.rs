//! How the suite starts an adapter: a [`Harness`] per adapter, each in one small file.

use std::future::Future;

use assetlib::Service;
use tokio::sync::oneshot;

pub(crate) mod axum;
pub(crate) mod warp;

/// Starts one adapter over real sockets.
pub(crate) trait Harness {
    /// Serves `service` with this adapter on a fresh `127.0.0.1:0` listener, at the root.
    fn spawn(service: Service) -> impl Future<Output = Server> + Send;

    /// Like [`Harness::spawn`], with the API nested under `/{segment}` the way an app of
    /// this framework would mount it.
    fn spawn_under(service: Service, segment: &'static str) -> impl Future<Output = Server> + Send;
}

/// A running server: its base URL, stopped when dropped.
pub(crate) struct Server {
    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub(crate) base_url: String,
    shutdown: Option<oneshot::Sender<()>>,
}

impl Server {
    /// A server at `base_url` that stops when `shutdown` fires.
    pub(crate) fn new(base_url: String, shutdown: oneshot::Sender<()>) -> Self {
        Server {
            base_url,
            shutdown: Some(shutdown),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}
