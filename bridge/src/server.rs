//! `agent-chatter serve`: the page (web/dist) and the WebSocket of docs/architecture.md §14b
//! on 127.0.0.1, behind the guards of [`crate::guard`].

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::connect_info::{ConnectInfo, Connected};
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::serve::{IncomingStream, Listener};
use axum::Router;
use tower_http::services::{ServeDir, ServeFile};

use agent_chatter::protocol::{self, Command, Event, MAX_FRAME_BYTES};

use crate::guard::{self, Conn, Gate, Guarded, Limits, Rejection, REJECTIONS};
use crate::hub::{Hub, HubError};

/// What every request handler needs.
#[derive(Clone)]
pub struct AppState {
    pub hub: Hub,
    pub token: String,
    pub port: u16,
}

/// The router: `/api/ws`, then the page's files; every request passes the Host/Origin guard.
pub(crate) fn router(state: AppState, dist: PathBuf) -> Router {
    let index = dist.join("index.html");
    Router::new()
        .route("/api/ws", get(ws_upgrade))
        .fallback_service(ServeDir::new(dist).fallback(ServeFile::new(index)))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            host_and_origin,
        ))
        .with_state(state)
}

fn reject(why: &Rejection, what: &str) -> Response {
    REJECTIONS.note(why.kind(), || format!("rejected {what}: {why}"));
    let status = StatusCode::from_u16(why.status()).unwrap_or(StatusCode::FORBIDDEN);
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        format!("{why}\n"),
    )
        .into_response()
}

fn header_str(headers: &HeaderMap, name: header::HeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

async fn host_and_origin(
    State(state): State<AppState>,
    req: Request<Body>,
    next: Next,
) -> Response {
    let what = format!("{} {}", req.method(), req.uri().path());
    if let Err(why) = guard::check_host(header_str(req.headers(), header::HOST), state.port) {
        return reject(&why, &what);
    }
    if let Err(why) = guard::check_origin(header_str(req.headers(), header::ORIGIN), state.port) {
        return reject(&why, &what);
    }
    next.run(req).await
}

async fn ws_upgrade(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<Peer>,
    headers: HeaderMap,
    ws: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    if let Err(why) = guard::check_ws_origin(header_str(&headers, header::ORIGIN), state.port) {
        return reject(&why, "WebSocket upgrade");
    }
    // Not a WebSocket handshake (a plain GET, a missing header): axum's 400, logged as every
    // other rejection is.
    let ws = match ws {
        Ok(ws) => ws,
        Err(why) => {
            REJECTIONS.note("not a WebSocket handshake", || {
                format!("rejected WebSocket upgrade: {why}")
            });
            return why.into_response();
        }
    };
    ws.max_message_size(MAX_FRAME_BYTES)
        .max_frame_size(MAX_FRAME_BYTES)
        .on_upgrade(move |socket| connection(socket, state, peer))
}

async fn send(socket: &mut WebSocket, event: &Event) -> bool {
    send_frame(socket, protocol::encode_event(event)).await
}

async fn send_frame(socket: &mut WebSocket, frame: impl Into<String>) -> bool {
    socket
        .send(Message::Text(frame.into().into()))
        .await
        .is_ok()
}

/// One page: `hello{token}` first (anything else closes), then commands and events.
async fn connection(mut socket: WebSocket, state: AppState, peer: Peer) {
    let hello = match socket.recv().await {
        Some(Ok(Message::Text(text))) => protocol::decode_command(&text).ok(),
        Some(Ok(_)) => None,
        // Gone, or cut before its token (too slow, too much, or evicted: logged by the gate).
        Some(Err(_)) | None => return,
    };
    let why = match hello {
        Some(Command::Hello { token }) => guard::check_token(&token, &state.token).err(),
        _ => Some(Rejection::NoHello),
    };
    if let Some(why) = why {
        REJECTIONS.note(why.kind(), || format!("rejected WebSocket: {why}"));
        let _ = send(
            &mut socket,
            &Event::Error {
                message: why.to_string(),
            },
        )
        .await;
        let _ = socket.send(Message::Close(None)).await;
        return;
    }
    peer.0.authenticated();
    let Ok(attached) = state.hub.attach().await else {
        return;
    };
    let mut events = attached.events;
    if !send(&mut socket, &attached.session).await || !send(&mut socket, &attached.agents).await {
        return;
    }
    loop {
        tokio::select! {
            incoming = socket.recv() => {
                let text = match incoming {
                    Some(Ok(Message::Text(text))) => text,
                    Some(Ok(Message::Binary(_))) => {
                        let message = "binary frames are not part of the protocol: send JSON text".to_string();
                        if !send(&mut socket, &Event::Error { message }).await { return; }
                        continue;
                    }
                    Some(Ok(_)) => continue,
                    // Closed, or a protocol error (e.g. a frame above the limit): drop the page.
                    Some(Err(e)) => { eprintln!("bridge: WebSocket closed: {e}"); return; }
                    None => return,
                };
                if let Err(why) = handle(&state, &mut socket, &text).await {
                    let message = why.to_string();
                    if !send(&mut socket, &Event::Error { message }).await { return; }
                }
            }
            published = events.recv() => match published {
                Ok(published) => {
                    if !send_frame(&mut socket, published.frame()).await { return; }
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                    // Too far behind to patch: send the whole log again.
                    let Ok(event) = state.hub.session_event().await else { return };
                    if !send(&mut socket, &event).await { return; }
                }
                Err(_) => return,
            },
        }
    }
}

/// Why a command was not done, for its `error` event.
#[derive(Debug, thiserror::Error)]
enum Refusal {
    #[error(transparent)]
    Frame(#[from] protocol::FrameError),
    #[error(transparent)]
    Hub(#[from] HubError),
    #[error("hello: already connected")]
    HelloAgain,
}

async fn handle(state: &AppState, socket: &mut WebSocket, text: &str) -> Result<(), Refusal> {
    let hub = &state.hub;
    match protocol::decode_command(text)? {
        Command::Hello { .. } => return Err(Refusal::HelloAgain),
        Command::Apply { fact } => hub.apply(*fact).await?,
        Command::Cancel { to } => hub.cancel(&to).await?,
        Command::ListSessions => {
            let list = hub.sessions().await?;
            send(socket, &Event::Sessions { list }).await;
        }
        Command::OpenSession { id } => hub.open(Some(id)).await?,
        Command::NewSession => hub.open(None).await?,
    }
    Ok(())
}

/// The listening socket, bound before anything else starts (a port in use leaves nothing
/// behind), with the connection limits for this process's open-file limit.
pub struct Bound {
    tcp: tokio::net::TcpListener,
    gate: Arc<Gate>,
}

/// Binds `addr` (loopback only). Raises the open-file limit to its maximum first, and sets the
/// connection limits below it (see [`guard::Limits`]).
pub async fn bind(addr: SocketAddr) -> Result<Bound, String> {
    guard::check_bind(&addr)?;
    let limits = Limits::under(guard::raise_open_file_limit());
    let tcp = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {}", crate::files::reason(&e)))?;
    Ok(Bound {
        tcp,
        gate: Gate::new(limits),
    })
}

impl Bound {
    /// The bound port.
    pub fn port(&self) -> Result<u16, String> {
        Ok(self.tcp.local_addr().map_err(|e| e.to_string())?.port())
    }
}

impl Listener for Bound {
    type Io = Guarded;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Guarded, SocketAddr) {
        loop {
            let (tcp, addr) = match self.tcp.accept().await {
                Ok(accepted) => accepted,
                Err(e) => {
                    REJECTIONS.note("accept failed", || {
                        format!("cannot accept a connection: {e}")
                    });
                    // Out of descriptors (EMFILE) or memory: give the system a moment, as
                    // axum's own listener does.
                    if !matches!(
                        e.kind(),
                        std::io::ErrorKind::ConnectionAborted | std::io::ErrorKind::ConnectionReset
                    ) {
                        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    }
                    continue;
                }
            };
            // Frames are small and each is a whole message: Nagle's algorithm would hold one
            // back until the page's delayed ACK (~40 ms per relay).
            if let Err(e) = tcp.set_nodelay(true) {
                eprintln!("bridge: TCP_NODELAY not set on a connection: {e}");
            }
            if let Some(io) = self.gate.admit(tcp).await {
                return (io, addr);
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.tcp.local_addr()
    }
}

/// The connection a request came on, so the WebSocket can mark it authenticated.
#[derive(Clone)]
pub(crate) struct Peer(Arc<Conn>);

impl Connected<IncomingStream<'_, Bound>> for Peer {
    fn connect_info(stream: IncomingStream<'_, Bound>) -> Peer {
        Peer(Arc::clone(stream.io().conn()))
    }
}

/// Serves on `bound` until the process ends. Prints the page's URL with its token as the first
/// line of stdout.
pub async fn serve(
    bound: Bound,
    state_of: impl FnOnce(u16) -> AppState,
    dist: PathBuf,
) -> Result<(), String> {
    let port = bound.port()?;
    let state = state_of(port);
    println!("http://127.0.0.1:{port}/#token={}", state.token);
    let app = router(state, dist);
    // Rejections past the first of each kind are counted; this says how many, now and then.
    tokio::spawn(async {
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(5));
        loop {
            tick.tick().await;
            REJECTIONS.flush();
        }
    });
    axum::serve(bound, app.into_make_service_with_connect_info::<Peer>())
        .await
        .map_err(|e| format!("server stopped: {e}"))
}
