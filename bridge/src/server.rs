//! `agent-chatter serve`: the page (web/dist) and the WebSocket of docs/architecture.md §14b
//! on 127.0.0.1, behind the guards of [`crate::guard`].

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::connect_info::{ConnectInfo, Connected};
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{FromRequestParts, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::serve::{IncomingStream, Listener};
use axum::Router;
use futures_util::{SinkExt, StreamExt};
use hyper_util::rt::TokioIo;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
use tokio_tungstenite::tungstenite::protocol::frame::Frame;
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Bytes, Message, Utf8Bytes};
use tokio_tungstenite::WebSocketStream;

use agent_chatter::protocol::{self, Command, Event, MAX_FRAME_BYTES};

use crate::guard::{self, Conn, Gate, Guarded, Limits, Rejection, REJECTIONS};
use crate::hub::{Attached, Hub, HubError};
pub use crate::page::Page;

/// What every request handler needs.
#[derive(Clone)]
pub struct AppState {
    pub hub: Hub,
    pub token: String,
    pub port: u16,
}

/// The router: `/api/ws`, then the page's files (compressed where the browser accepts it);
/// every request passes the Host/Origin guard, and every response carries the page's
/// security headers.
pub(crate) fn router(state: AppState, page: Page) -> Router {
    let csp = HeaderValue::from_str(&page.content_security_policy(state.port))
        .unwrap_or_else(|_| HeaderValue::from_static("default-src 'none'"));
    Router::new()
        .route("/api/ws", get(ws_upgrade))
        .fallback_service(page.files())
        .layer(middleware::from_fn(move |req, next| {
            crate::page::headers(csp.clone(), req, next)
        }))
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
    if let Err(why) = guard::check_one_host(req.headers().get_all(header::HOST).iter().count()) {
        return reject(&why, &what);
    }
    if let Err(why) = guard::check_host(header_str(req.headers(), header::HOST), state.port) {
        return reject(&why, &what);
    }
    if let Err(why) = guard::check_origin(header_str(req.headers(), header::ORIGIN), state.port) {
        return reject(&why, &what);
    }
    next.run(req).await
}

/// A page's WebSocket: tungstenite's, on the upgraded connection, so large events can be sent
/// as fragments ([`send_frame`]).
type WebSocket = WebSocketStream<TokioIo<hyper::upgrade::Upgraded>>;

async fn ws_upgrade(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<Peer>,
    request: Request,
) -> Response {
    let (mut parts, _) = request.into_parts();
    if let Err(why) = guard::check_ws_origin(header_str(&parts.headers, header::ORIGIN), state.port)
    {
        return reject(&why, "WebSocket upgrade");
    }
    // axum checks the handshake (GET, Connection, Upgrade, key, version) and answers a request
    // that is none with its 400; the upgrade itself is taken out first and kept here, so its
    // only complaint about a true handshake is that it cannot upgrade it.
    let upgrade = parts.extensions.remove::<hyper::upgrade::OnUpgrade>();
    let checked = WebSocketUpgrade::from_request_parts(&mut parts, &state).await;
    let (Some(upgrade), Err(WebSocketUpgradeRejection::ConnectionNotUpgradable(_)), Some(key)) = (
        upgrade,
        &checked,
        parts.headers.get(header::SEC_WEBSOCKET_KEY),
    ) else {
        let why = match checked {
            Err(why) => why,
            Ok(_) => unreachable!("the upgrade was taken out of the request"),
        };
        REJECTIONS.note("not a WebSocket handshake", || {
            format!("rejected WebSocket upgrade: {why}")
        });
        return why.into_response();
    };
    let accept = tokio_tungstenite::tungstenite::handshake::derive_accept_key(key.as_bytes());
    tokio::spawn(async move {
        let Ok(upgraded) = upgrade.await else {
            return;
        };
        let socket =
            WebSocket::from_raw_socket(TokioIo::new(upgraded), Role::Server, Some(socket_config()))
                .await;
        connection(socket, state, peer).await;
    });
    Response::builder()
        .status(StatusCode::SWITCHING_PROTOCOLS)
        .header(header::CONNECTION, "upgrade")
        .header(header::UPGRADE, "websocket")
        .header(header::SEC_WEBSOCKET_ACCEPT, accept)
        .body(Body::empty())
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// The socket's limits and buffers. Before each read attempt tungstenite zero-fills up to the
/// read buffer's size, and the connection loop makes one each time it sends an event: with the
/// 128 KiB default that was most of the bridge's instructions. Pages send small frames; a
/// larger one (up to MAX_FRAME_BYTES) is read in more chunks.
fn socket_config() -> WebSocketConfig {
    WebSocketConfig::default()
        .max_message_size(Some(MAX_FRAME_BYTES))
        .max_frame_size(Some(MAX_FRAME_BYTES))
        .read_buffer_size(READ_BUFFER_BYTES)
}

/// The WebSocket read buffer (see [`socket_config`]).
const READ_BUFFER_BYTES: usize = 8 * 1024;

/// Events are sent in fragments of at most this size: tungstenite writes a frame whole into
/// the connection's write buffer, which keeps the size of the largest frame until the
/// connection closes, so one 15 MiB event would keep 15 MiB per page (docs/architecture.md
/// §14, "Memory"). A page reads the fragments as one message.
const FRAGMENT_BYTES: usize = 64 * 1024;

async fn send(socket: &mut WebSocket, event: &Event) -> bool {
    send_frame(socket, protocol::encode_event(event).into()).await
}

/// [`send`] for an event not needed once encoded (the whole log): it is freed before the frame
/// is sent.
async fn send_owned(socket: &mut WebSocket, event: Event) -> bool {
    let frame = protocol::encode_event(&event);
    drop(event);
    send_frame(socket, frame.into()).await
}

/// Sends `frame` as one text message, in fragments of [`FRAGMENT_BYTES`] (each a slice of the
/// frame, not a copy); after a large one, the memory freed meanwhile goes back to the system.
async fn send_frame(socket: &mut WebSocket, frame: Utf8Bytes) -> bool {
    let large = frame.len() >= LARGE_FRAME;
    let sent = if frame.len() <= FRAGMENT_BYTES {
        socket.send(Message::Text(frame)).await.is_ok()
    } else {
        send_fragments(socket, Bytes::from(frame)).await
    };
    if large {
        give_back_freed_memory();
    }
    sent
}

/// A text message of more than one fragment: the first says text, the others continue it, the
/// last is final (RFC 6455 §5.4; a fragment may end inside a UTF-8 character).
async fn send_fragments(socket: &mut WebSocket, text: Bytes) -> bool {
    let mut start = 0;
    while start < text.len() {
        let end = (start + FRAGMENT_BYTES).min(text.len());
        let kind = if start == 0 {
            Data::Text
        } else {
            Data::Continue
        };
        let fragment = Frame::message(
            text.slice(start..end),
            OpCode::Data(kind),
            end == text.len(),
        );
        if socket.send(Message::Frame(fragment)).await.is_err() {
            return false;
        }
        start = end;
    }
    true
}

/// One page: `hello{token}` first (anything else closes), then commands and events.
async fn connection(mut socket: WebSocket, state: AppState, peer: Peer) {
    let hello = match socket.next().await {
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
    // The whole log is not kept once sent (not for as long as the page stays connected).
    let Attached {
        mut events,
        session,
        agents,
        live,
    } = attached;
    if !send_owned(&mut socket, session).await || !send_owned(&mut socket, agents).await {
        return;
    }
    // What the run in flight streamed before this page connected, and its open questions.
    for event in live {
        if !send_owned(&mut socket, event).await {
            return;
        }
    }
    loop {
        tokio::select! {
            incoming = socket.next() => {
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
                let large = text.len() >= LARGE_FRAME;
                let done = handle(&state, &mut socket, &text).await;
                drop(text);
                if large {
                    give_back_freed_memory();
                }
                if let Err(why) = done {
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
                    if !send_owned(&mut socket, event).await { return; }
                }
                Err(_) => return,
            },
        }
    }
}

/// A frame this large (a team with a long instruction, up to 16 MiB) leaves copies behind
/// once handled: the text, its parse, the stored JSON.
const LARGE_FRAME: usize = 1 << 20;

/// Blocks of this size or more are mapped for themselves and unmapped when freed
/// ([`large_blocks_from_the_system`]).
const MMAP_THRESHOLD: usize = 1 << 20;

/// Makes the allocator take every block of [`MMAP_THRESHOLD`] or more straight from the system
/// and hand it back when it is freed (docs/architecture.md §14, "Memory"). glibc does so from
/// 128 KiB by default, but raises that threshold to the size of any such block freed (up to
/// 32 MiB): after one large frame its copies (the frame, its parse, the encoded event) are
/// carved from the arenas and stay in the bridge's footprint once freed (a 15 MiB team cost
/// +90 MiB for good, +60 MiB with this). Call it first thing, before any thread starts.
pub fn large_blocks_from_the_system() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a parameter of the allocator; called before other threads.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD as libc::c_int);
    }
}

/// Hands memory freed after a large frame back to the system: glibc keeps freed small blocks
/// in its arenas (large ones are unmapped: [`large_blocks_from_the_system`]).
fn give_back_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of the allocator's arenas.
    unsafe {
        libc::malloc_trim(0);
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
        Command::RenameSession { id, name } => hub.rename(id, name).await?,
        Command::SearchSessions { query } => {
            let hits = hub.search(query.clone()).await?;
            send(socket, &Event::SearchResults { query, hits }).await;
        }
        Command::ForkSession { id, upto } => hub.fork(id, upto).await?,
        Command::AnswerApproval {
            to,
            request,
            option,
        } => hub.answer_approval(to, request, option, "page").await?,
        Command::LeaveTeam { session, member } => hub.leave_team(session, member).await?,
        Command::RunDetails { session, to, at } => {
            let details = hub.run_details(session, to, at).await?;
            send(socket, &Event::RunDetails(details)).await;
        }
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
    let tcp = tokio::net::TcpListener::bind(addr).await.map_err(|e| {
        // The usual cause: another bridge (or anything else) holds the port.
        let hint = if e.kind() == std::io::ErrorKind::AddrInUse {
            " (another bridge already running? `--port N` picks another port, `--port 0` any free one)"
                .to_string()
        } else {
            String::new()
        };
        format!("cannot listen on {addr}: {}{hint}", crate::files::reason(&e))
    })?;
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
    page: Page,
) -> Result<(), String> {
    let port = bound.port()?;
    let state = state_of(port);
    println!("http://127.0.0.1:{port}/#token={}", state.token);
    let app = router(state, page);
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
