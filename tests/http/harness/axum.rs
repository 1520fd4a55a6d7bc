//! The axum adapter under the suite.

use assetlib::Service;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use super::{Harness, Server};

/// `assetlib::axum::router` served by `axum::serve`, with the peer address as axum's
/// `ConnectInfo` (keyless requests are rate-limited by it).
pub(crate) struct Axum;

impl Harness for Axum {
    async fn spawn(service: Service) -> Server {
        let app =
            assetlib::axum::router(service.clone()).merge(assetlib::axum::thumbnails(service));
        serve(app).await
    }

    async fn spawn_under(service: Service, segment: &'static str) -> Server {
        let app = axum::Router::new().nest(&format!("/{segment}"), assetlib::axum::router(service));
        serve(app).await
    }
}

async fn serve(app: axum::Router) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("local address");
    let (tx, rx) = oneshot::channel::<()>();
    tokio::spawn(async move {
        let app = app.into_make_service_with_connect_info::<std::net::SocketAddr>();
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = rx.await;
            })
            .await
            .expect("axum server");
    });
    Server::new(format!("http://{addr}"), tx)
}
