//! The accept loop: HTTP/1.1 connections served by hyper under the
//! server's [`Limits`], and the drain at shutdown.
//!
//! - At most `max_connections` connections are served at once. Beyond
//!   them the loop stops accepting: a new connection waits in the kernel's
//!   listen queue until one closes (it is not refused).
//! - A request head must arrive complete within `header_timeout` of the
//!   moment the server starts waiting for it; hyper's one timer covers a
//!   new connection, a slow head and an idle keep-alive connection alike,
//!   which are then closed. The body has `body_timeout` ([`crate::handlers`]
//!   reads it; 408 after that).
//! - With TLS ([`crate::tls`]) the handshake runs in the connection's own
//!   task and must end within `header_timeout` too.
//! - On shutdown the loop stops accepting, idle connections close, the
//!   requests in flight finish, and whatever is still open at `drain` is
//!   cut.
//!
//! axum's own `serve` sets none of these (no header timeout, no cap), so
//! the loop is written here on hyper's HTTP/1 connection builder.

use crate::Limits;
use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;

/// Serves `router` on `listener` (over TLS with `tls`) until `shutdown`
/// completes, then drains.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    tls: Option<TlsAcceptor>,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<()> {
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let (stop, stopping) = watch::channel(false);
    let mut connections = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        let slot = tokio::select! {
            () = &mut shutdown => break,
            slot = slots.clone().acquire_owned() => slot.expect("the semaphore is never closed"),
        };
        let stream = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    refused_accept(error).await;
                    continue;
                }
            },
        };
        while connections.try_join_next().is_some() {}
        let (router, stopping) = (router.clone(), stopping.clone());
        match &tls {
            None => connections.spawn(connection(stream, router, limits, stopping, slot)),
            Some(tls) => {
                let handshake = tls.accept(stream);
                connections.spawn(async move {
                    // A failed or slow handshake (a plain-http client) is
                    // closed; its client sees no answer.
                    if let Ok(Ok(stream)) =
                        tokio::time::timeout(limits.header_timeout, handshake).await
                    {
                        connection(stream, router, limits, stopping, slot).await;
                    }
                })
            }
        };
    }
    drop(listener);
    let _ = stop.send(true);
    let drained = tokio::time::timeout(limits.drain, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!(
            "{} connection(s) still open after {} s of draining were cut",
            connections.len(),
            limits.drain.as_secs_f64()
        );
        connections.shutdown().await;
    }
    Ok(())
}

/// An accept that failed: a connection that went away before it was
/// accepted is nothing; anything else (out of file descriptors) is logged
/// and waited out a little rather than retried in a busy loop.
async fn refused_accept(error: std::io::Error) {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(
        error.kind(),
        ConnectionAborted | ConnectionRefused | ConnectionReset
    ) {
        return;
    }
    tracing::error!("cannot accept a connection: {error}");
    tokio::time::sleep(Duration::from_millis(200)).await;
}

/// Serves one connection until it closes, or until shutdown lets its
/// request in flight finish; its slot frees when it ends.
async fn connection<I>(
    io: I,
    router: Router,
    limits: Limits,
    mut stopping: watch::Receiver<bool>,
    _slot: OwnedSemaphorePermit,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let served = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .serve_connection(TokioIo::new(io), TowerToHyperService::new(router));
    tokio::pin!(served);
    tokio::select! {
        _ = served.as_mut() => return,
        _ = stopping.wait_for(|stop| *stop) => served.as_mut().graceful_shutdown(),
    }
    let _ = served.await;
}
