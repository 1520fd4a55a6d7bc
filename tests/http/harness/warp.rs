//! The warp adapter under the suite.

use assetlib::Service;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use warp::Filter;

use super::{Harness, Server};

/// `assetlib::warp::routes` with `recover`, served by `warp::serve`.
pub(crate) struct Warp;

impl Harness for Warp {
    const STREAMS_BODIES: bool = false;

    async fn spawn(service: Service) -> Server {
        let app = assetlib::warp::routes(service.clone())
            .or(assetlib::warp::thumbnails(service))
            .unify();
        serve(app).await
    }

    async fn spawn_under(service: Service, segment: &'static str) -> Server {
        serve(warp::path(segment).and(assetlib::warp::routes(service))).await
    }
}

async fn serve<F>(routes: F) -> Server
where
    F: Filter<Extract = (assetlib::warp::ApiResponse,), Error = warp::Rejection>
        + Clone
        + Send
        + Sync
        + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("local address");
    let (tx, rx) = oneshot::channel::<()>();
    let app = routes.recover(assetlib::warp::recover);
    tokio::spawn(
        warp::serve(app)
            .incoming(listener)
            .graceful(async move {
                let _ = rx.await;
            })
            .run(),
    );
    Server::new(format!("http://{addr}"), tx)
}
