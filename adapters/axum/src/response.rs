//! [`ApiResponse`]: core's [`Reply`] as an axum response.

use assetlib_core::{ApiError, Reply};
use axum::body::Body;
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

/// Core's [`Reply`] as an axum response: its status, its headers and its body, copied
/// unchanged (a download's body streamed, never gathered in memory). The only `IntoResponse`
/// of this crate.
#[derive(Debug)]
pub struct ApiResponse(pub Reply);

impl From<Reply> for ApiResponse {
    fn from(reply: Reply) -> Self {
        ApiResponse(reply)
    }
}

impl IntoResponse for ApiResponse {
    fn into_response(self) -> Response {
        copy(self.0).unwrap_or_else(|bad| {
            // A reply axum cannot carry is a bug in core; core's internal error logs it and
            // answers without internals.
            let reply = ApiError::internal(bad).into_reply();
            copy(reply).unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
        })
    }
}

/// Copies a reply into a response, or says which part of it HTTP cannot carry.
fn copy(reply: Reply) -> Result<Response, String> {
    let Reply {
        status,
        headers,
        body,
        stream,
    } = reply;
    let status = StatusCode::from_u16(status).map_err(|_| format!("invalid status {status}"))?;
    let body = match stream {
        Some(stream) => Body::from_stream(stream),
        None => Body::from(body),
    };
    let mut response = Response::new(body);
    *response.status_mut() = status;
    for (name, value) in headers {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("invalid header name {name:?}"))?;
        let value =
            HeaderValue::try_from(value).map_err(|_| format!("invalid value of header {name}"))?;
        response.headers_mut().append(name, value);
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_status_headers_and_body() {
        let reply = Reply::json_bytes(201, &b"{}"[..])
            .with_header("location", "/api/v1/assets/1")
            .with_header("vary", "a")
            .with_header("vary", "b");
        let response = ApiResponse(reply).into_response();
        assert_eq!(response.status(), StatusCode::CREATED);
        let h = response.headers();
        assert_eq!(h["content-type"], "application/json");
        assert_eq!(h["location"], "/api/v1/assets/1");
        let vary: Vec<_> = h.get_all("vary").iter().collect();
        assert_eq!(vary, ["a", "b"]);
    }

    #[test]
    fn a_reply_http_cannot_carry_becomes_cores_internal_error() {
        for reply in [
            Reply::empty(1000),
            Reply::empty(200).with_header("bad name", "x"),
            Reply::empty(200).with_header("x-bad", "line\nbreak"),
        ] {
            let response = ApiResponse(reply).into_response();
            assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
            assert_eq!(response.headers()["content-type"], "application/json");
        }
    }
}
