//! Who may talk to the bridge (docs/architecture.md §14). The page runs real agent CLIs on this
//! machine, so every request is checked like Jupyter's server checks its own: the Host header
//! (against DNS rebinding), the Origin (against other sites in the same browser) and, on the
//! WebSocket, the per-launch token. Each rejection names its reason, which the server logs and
//! returns.

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use subtle::ConstantTimeEq;
use thiserror::Error;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::Notify;
use tokio::time::Sleep;

/// Why a request was turned away.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub(crate) enum Rejection {
    #[error("missing Host header")]
    NoHost,
    /// RFC 9112 §3.2: a request with more than one Host field is answered 400.
    #[error("more than one Host header")]
    ManyHosts,
    #[error("Host {0:?} is not a loopback name on the bound port (DNS rebinding guard)")]
    ForeignHost(String),
    #[error("Origin {0:?} is not this page's origin")]
    ForeignOrigin(String),
    #[error("missing Origin header on a WebSocket upgrade")]
    NoOrigin,
    #[error("the first frame must be hello with the launch token")]
    NoHello,
    #[error("wrong token")]
    WrongToken,
}

impl Rejection {
    /// The kind, for the rejection log (one line per kind and window).
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Rejection::NoHost => "no Host",
            Rejection::ManyHosts => "many Hosts",
            Rejection::ForeignHost(_) => "foreign Host",
            Rejection::ForeignOrigin(_) => "foreign Origin",
            Rejection::NoOrigin => "no Origin",
            Rejection::NoHello => "no hello",
            Rejection::WrongToken => "wrong token",
        }
    }

    /// 400 for a malformed request, 403 for a refused one.
    pub(crate) fn status(&self) -> u16 {
        match self {
            Rejection::NoHost | Rejection::ManyHosts => 400,
            _ => 403,
        }
    }
}

/// The names a request may use for this server (the port must be the bound one): the address
/// it listens on, and `localhost`, which browsers resolve to it (they try 127.0.0.1 when `::1`
/// refuses). `[::1]` is not one: the bridge does not listen there.
const LOOPBACK_NAMES: [&str; 2] = ["127.0.0.1", "localhost"];

/// Refuses to serve anything but loopback: a bridge runs agent CLIs on behalf of whoever
/// connects, so it must never be reachable from another machine.
pub(crate) fn check_bind(addr: &SocketAddr) -> Result<(), String> {
    match addr.ip() {
        IpAddr::V4(ip) if ip.is_loopback() => Ok(()),
        ip => Err(format!(
            "refusing to listen on {ip}: the bridge runs agent commands for whoever connects, so it listens on 127.0.0.1 only"
        )),
    }
}

/// A request carries one `Host` field (`hosts`: how many it has), as RFC 9112 §3.2 requires:
/// with two, which one a proxy or a browser meant is not known.
pub(crate) fn check_one_host(hosts: usize) -> Result<(), Rejection> {
    if hosts > 1 {
        Err(Rejection::ManyHosts)
    } else {
        Ok(())
    }
}

/// `Host` must be `127.0.0.1:PORT` or `localhost:PORT`.
pub(crate) fn check_host(host: Option<&str>, port: u16) -> Result<(), Rejection> {
    let host = host.ok_or(Rejection::NoHost)?;
    let ok = LOOPBACK_NAMES
        .iter()
        .any(|name| host.eq_ignore_ascii_case(&format!("{name}:{port}")));
    if ok {
        Ok(())
    } else {
        Err(Rejection::ForeignHost(host.to_string()))
    }
}

/// `Origin`, when present, must be exactly `http://<loopback name>:PORT`; `null` (sandboxed
/// frames, file://) and every other site are refused. A plain page load has no Origin and
/// is allowed; a WebSocket upgrade must carry one ([`check_ws_origin`]).
pub(crate) fn check_origin(origin: Option<&str>, port: u16) -> Result<(), Rejection> {
    let Some(origin) = origin else {
        return Ok(());
    };
    let ok = LOOPBACK_NAMES
        .iter()
        .any(|name| origin == format!("http://{name}:{port}"));
    if ok {
        Ok(())
    } else {
        Err(Rejection::ForeignOrigin(origin.to_string()))
    }
}

/// Browsers always send Origin on a WebSocket upgrade; one without it is not our page.
pub(crate) fn check_ws_origin(origin: Option<&str>, port: u16) -> Result<(), Rejection> {
    match origin {
        None => Err(Rejection::NoOrigin),
        some => check_origin(some, port),
    }
}

/// Compares the token in constant time (no timing oracle on its bytes).
pub(crate) fn check_token(given: &str, expected: &str) -> Result<(), Rejection> {
    let same: bool = given.as_bytes().ct_eq(expected.as_bytes()).into();
    if same {
        Ok(())
    } else {
        Err(Rejection::WrongToken)
    }
}

/// A new 256-bit token from the OS RNG, hex-encoded.
pub fn new_token() -> Result<String, String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| format!("the OS random generator failed: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

// ---------------------------------------------------------------------------------------------
// Connections before the token (docs/architecture.md §14, "Limits"). Any local process can
// open sockets to the bridge; until a connection has sent the token it gets little: a few
// seconds, a few KiB, and one of a few slots, the oldest of which goes to the newcomer when
// they are all taken. So sockets that never say hello cannot hold the page out, nor take the
// file descriptors an agent launch needs.

/// File descriptors kept for everything that is not a connection: agent launches (pipes and a
/// pidfd each), the database (three files), the runtime.
const RESERVED_FDS: u64 = 128;
/// At most this many connections, whatever the open-file limit.
const MAX_CONNECTIONS: usize = 512;
/// At most this many connections without the token at once.
const MAX_WAITING: usize = 64;
/// Time from accept to the token: a page sends it within milliseconds.
pub(crate) const HANDSHAKE: Duration = Duration::from_secs(10);
/// Bytes a connection may send before its token is checked: request headers and the hello
/// frame take about 1 KiB; loading the page takes a few of those on one connection.
pub(crate) const PREAUTH_BYTES: u64 = 64 * 1024;
/// Repeated rejections of one kind are logged once per this long, with their count.
const LOG_WINDOW: Duration = Duration::from_secs(10);

/// How many connections the bridge takes, and how long and how much it listens before the
/// token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    pub(crate) max_connections: usize,
    pub(crate) max_waiting: usize,
    pub(crate) handshake: Duration,
    pub(crate) preauth_bytes: u64,
}

impl Limits {
    /// The limits under an open-file limit of `nofile`: connections stay [`RESERVED_FDS`]
    /// below it, so an agent launch never fails for want of a descriptor.
    pub(crate) fn under(nofile: u64) -> Limits {
        let room = usize::try_from(nofile.saturating_sub(RESERVED_FDS)).unwrap_or(usize::MAX);
        let max_connections = room.clamp(4, MAX_CONNECTIONS);
        Limits {
            max_connections,
            max_waiting: (max_connections / 2).min(MAX_WAITING),
            handshake: HANDSHAKE,
            preauth_bytes: PREAUTH_BYTES,
        }
    }
}

/// Raises the soft open-file limit to the hard one (many systems start processes at 1024
/// while allowing far more) and returns the soft limit now in force.
pub(crate) fn raise_open_file_limit() -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit only read and write the struct passed.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return 1024;
        }
        if limit.rlim_cur < limit.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: limit.rlim_max,
                rlim_max: limit.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                limit = raised;
            }
        }
    }
    #[allow(clippy::unnecessary_cast)] // rlim_t is not u64 everywhere
    let soft = limit.rlim_cur as u64;
    soft
}

/// Rejections, logged once per kind and [`LOG_WINDOW`] with how many more there were, so a
/// flood of sockets leaves a few lines, not one per socket.
pub(crate) struct RejectionLog {
    windows: Mutex<Vec<(&'static str, Instant, u64)>>,
}

/// The bridge's one log of rejections.
pub(crate) static REJECTIONS: RejectionLog = RejectionLog {
    windows: Mutex::new(Vec::new()),
};

impl RejectionLog {
    /// Logs `line()` (prefixed `bridge: `) unless a rejection of `kind` was logged less than
    /// [`LOG_WINDOW`] ago; then it is only counted, for [`Self::flush`].
    pub(crate) fn note(&self, kind: &'static str, line: impl FnOnce() -> String) {
        let mut windows = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        match windows.iter_mut().find(|(k, _, _)| *k == kind) {
            Some((_, since, more)) if now.duration_since(*since) < LOG_WINDOW => *more += 1,
            Some(window) => {
                summary(window);
                *window = (kind, now, 0);
                eprintln!("bridge: {}", line());
            }
            None => {
                windows.push((kind, now, 0));
                eprintln!("bridge: {}", line());
            }
        }
    }

    /// Says how many rejections of each kind went unlogged in a window that has ended.
    pub(crate) fn flush(&self) {
        let mut windows = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        windows.retain(|window| {
            let open = now.duration_since(window.1) < LOG_WINDOW;
            if !open {
                summary(window);
            }
            open
        });
    }
}

fn summary(&(kind, since, more): &(&'static str, Instant, u64)) {
    if more > 0 {
        eprintln!(
            "bridge: {more} more like that ({kind}) in the last {} s",
            since.elapsed().as_secs().max(1)
        );
    }
}

/// Where a connection stands.
const WAITING: u8 = 0;
const AUTHENTICATED: u8 = 1;
/// Closed to make room for a newer one; its socket is still open until its task sees it.
const EVICTED: u8 = 2;
const GONE: u8 = 3;

/// What the listener knows of the connections it let in.
pub(crate) struct Gate {
    limits: Limits,
    /// Sockets open (every state but gone).
    open: AtomicUsize,
    /// Connections waiting for their token (not evicted).
    waiting: AtomicUsize,
    /// Evicted connections whose socket is not closed yet.
    evicting: AtomicUsize,
    /// Told when a socket closes.
    closed: Notify,
    /// The connections without the token, oldest first (some may have moved on since).
    queue: Mutex<VecDeque<Weak<Conn>>>,
}

/// One connection, as its socket and its requests both see it.
pub(crate) struct Conn {
    gate: Arc<Gate>,
    state: AtomicU8,
    /// The task reading the socket, woken to close it when it is evicted.
    waker: Mutex<Option<Waker>>,
    /// It has sent a byte: a browser sends its request as soon as it connects, so a
    /// connection that has said nothing is the first to make room ([`Gate::admit`]).
    spoke: std::sync::atomic::AtomicBool,
}

impl Conn {
    /// The token was right: no deadline, size or slot limit from now on.
    pub(crate) fn authenticated(&self) {
        if self.moved(WAITING, AUTHENTICATED) {
            self.gate.waiting.fetch_sub(1, Ordering::AcqRel);
        }
    }

    fn state(&self) -> u8 {
        self.state.load(Ordering::Acquire)
    }

    fn moved(&self, from: u8, to: u8) -> bool {
        self.state
            .compare_exchange(from, to, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// Closes this connection if it is still waiting for its token.
    fn evict(&self) -> bool {
        if !self.moved(WAITING, EVICTED) {
            return false;
        }
        self.gate.waiting.fetch_sub(1, Ordering::AcqRel);
        self.gate.evicting.fetch_add(1, Ordering::AcqRel);
        if let Some(waker) = self.waker.lock().unwrap_or_else(|e| e.into_inner()).take() {
            waker.wake();
        }
        true
    }
}

impl Gate {
    pub(crate) fn new(limits: Limits) -> Arc<Gate> {
        Arc::new(Gate {
            limits,
            open: AtomicUsize::new(0),
            waiting: AtomicUsize::new(0),
            evicting: AtomicUsize::new(0),
            closed: Notify::new(),
            queue: Mutex::new(VecDeque::new()),
        })
    }

    /// Lets `tcp` in, or closes it when the bridge holds as many connections as it takes.
    /// When as many are waiting for their token as may, the oldest of them that has sent
    /// nothing (else the oldest) is closed to make room: a page connecting now is let in,
    /// whoever holds sockets open, and the page's own requests (its HTML, script and wasm,
    /// which carry no token) are not cut by a flood of sockets that never speak.
    pub(crate) async fn admit(self: &Arc<Gate>, tcp: TcpStream) -> Option<Guarded> {
        let limits = self.limits;
        if self.waiting.load(Ordering::Acquire) >= limits.max_waiting {
            let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
            queue.retain(|c| c.upgrade().is_some_and(|c| c.state() == WAITING));
            let silent = queue.iter().position(|c| {
                c.upgrade()
                    .is_some_and(|c| !c.spoke.load(Ordering::Acquire))
            });
            let evicted = match silent.and_then(|at| queue.remove(at)) {
                Some(conn) => conn.upgrade().is_some_and(|conn| conn.evict()),
                None => std::iter::from_fn(|| queue.pop_front())
                    .filter_map(|conn| conn.upgrade())
                    .any(|conn| conn.evict()),
            };
            drop(queue);
            if evicted {
                REJECTIONS.note("waiting for the token", || {
                    format!(
                        "closed the oldest connection waiting for its token: {} were waiting, the limit",
                        limits.max_waiting
                    )
                });
            }
        }
        // Connections just evicted are closing: wait for them rather than turn this one away.
        loop {
            let closed = self.closed.notified();
            if self.open.load(Ordering::Acquire) < limits.max_connections {
                break;
            }
            if self.evicting.load(Ordering::Acquire) == 0 {
                REJECTIONS.note("over the connection limit", || {
                    format!(
                        "refused a connection: the bridge holds {} connections, its limit",
                        limits.max_connections
                    )
                });
                return None;
            }
            let _ = tokio::time::timeout(Duration::from_secs(1), closed).await;
        }
        let conn = Arc::new(Conn {
            gate: Arc::clone(self),
            state: AtomicU8::new(WAITING),
            waker: Mutex::new(None),
            spoke: std::sync::atomic::AtomicBool::new(false),
        });
        let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        if queue.len() >= 2 * limits.max_waiting {
            queue.retain(|c| c.upgrade().is_some_and(|c| c.state() == WAITING));
        }
        queue.push_back(Arc::downgrade(&conn));
        drop(queue);
        self.open.fetch_add(1, Ordering::AcqRel);
        self.waiting.fetch_add(1, Ordering::AcqRel);
        Some(Guarded {
            tcp,
            conn,
            deadline: Box::pin(tokio::time::sleep(limits.handshake)),
            read: 0,
            cut: false,
        })
    }
}

/// A connection's socket, closed (its reads and writes fail) when it has not sent the token
/// within the handshake time, has sent too much before it, or was evicted for a newer one.
pub struct Guarded {
    tcp: TcpStream,
    conn: Arc<Conn>,
    deadline: Pin<Box<Sleep>>,
    read: u64,
    cut: bool,
}

impl Guarded {
    pub(crate) fn conn(&self) -> &Arc<Conn> {
        &self.conn
    }

    /// Before the token: an error when this connection is to be closed. Registers the task
    /// to be woken at the deadline or on eviction.
    fn refused(&mut self, cx: &mut Context<'_>) -> Option<io::Error> {
        match self.conn.state() {
            WAITING if !self.cut => {}
            WAITING | EVICTED | GONE => return Some(self.cut(io::ErrorKind::ConnectionAborted)),
            _ => return None,
        }
        *self.conn.waker.lock().unwrap_or_else(|e| e.into_inner()) = Some(cx.waker().clone());
        // Evicted meanwhile (its waker was not there yet to be woken).
        if self.conn.state() == EVICTED {
            return Some(self.cut(io::ErrorKind::ConnectionAborted));
        }
        if self.deadline.as_mut().poll(cx).is_ready() {
            let limits = self.conn.gate.limits;
            REJECTIONS.note("no token in time", || {
                format!(
                    "closed a connection: no token within {} s",
                    limits.handshake.as_secs()
                )
            });
            return Some(self.cut(io::ErrorKind::TimedOut));
        }
        None
    }

    fn cut(&mut self, kind: io::ErrorKind) -> io::Error {
        self.cut = true;
        kind.into()
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        let gate = &self.conn.gate;
        match self.conn.state.swap(GONE, Ordering::AcqRel) {
            WAITING => gate.waiting.fetch_sub(1, Ordering::AcqRel),
            EVICTED => gate.evicting.fetch_sub(1, Ordering::AcqRel),
            _ => 0,
        };
        gate.open.fetch_sub(1, Ordering::AcqRel);
        gate.closed.notify_waiters();
    }
}

impl AsyncRead for Guarded {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if let Some(error) = this.refused(cx) {
            return Poll::Ready(Err(error));
        }
        let before = buf.filled().len();
        let poll = Pin::new(&mut this.tcp).poll_read(cx, buf);
        if this.conn.state() == WAITING {
            let read = (buf.filled().len() - before) as u64;
            if read > 0 && this.read == 0 {
                this.conn.spoke.store(true, Ordering::Release);
            }
            this.read += read;
            let limit = this.conn.gate.limits.preauth_bytes;
            if this.read > limit {
                REJECTIONS.note("too much before the token", || {
                    format!(
                        "closed a connection: more than {} KiB sent before the token",
                        limit / 1024
                    )
                });
                return Poll::Ready(Err(this.cut(io::ErrorKind::InvalidData)));
            }
        }
        poll
    }
}

impl AsyncWrite for Guarded {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        if let Some(error) = self.refused(cx) {
            return Poll::Ready(Err(error));
        }
        Pin::new(&mut self.tcp).poll_write(cx, data)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if let Some(error) = self.refused(cx) {
            return Poll::Ready(Err(error));
        }
        Pin::new(&mut self.tcp).poll_write_vectored(cx, data)
    }

    fn is_write_vectored(&self) -> bool {
        self.tcp.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_binds_are_allowed() {
        for (addr, ok) in [
            ("127.0.0.1:8080", true),
            // The Host and Origin guards know the IPv4 names only.
            ("[::1]:8080", false),
            ("0.0.0.0:8080", false),
            ("192.168.1.5:8080", false),
            ("[::]:8080", false),
        ] {
            let addr: SocketAddr = addr.parse().unwrap();
            assert_eq!(check_bind(&addr).is_ok(), ok, "{addr}");
        }
    }

    #[test]
    fn host_must_be_a_loopback_name_on_the_bound_port() {
        let cases = [
            (Some("127.0.0.1:8080"), Ok(())),
            (Some("localhost:8080"), Ok(())),
            (Some("LOCALHOST:8080"), Ok(())),
            (
                Some("[::1]:8080"),
                Err(Rejection::ForeignHost("[::1]:8080".into())),
            ),
            (
                Some("127.0.0.1:9999"),
                Err(Rejection::ForeignHost("127.0.0.1:9999".into())),
            ),
            (
                Some("evil.example:8080"),
                Err(Rejection::ForeignHost("evil.example:8080".into())),
            ),
            (
                Some("127.0.0.1"),
                Err(Rejection::ForeignHost("127.0.0.1".into())),
            ),
            (None, Err(Rejection::NoHost)),
        ];
        for (host, want) in cases {
            assert_eq!(check_host(host, 8080), want, "{host:?}");
        }
    }

    #[test]
    fn origin_must_match_exactly() {
        let cases = [
            (None, true),
            (Some("http://127.0.0.1:8080"), true),
            (Some("http://localhost:8080"), true),
            (Some("null"), false),
            (Some("http://[::1]:8080"), false),
            (Some("http://127.0.0.1:8081"), false),
            (Some("https://127.0.0.1:8080"), false),
            (Some("http://127.0.0.1:8080.evil.example"), false),
            (Some("http://evil.example"), false),
        ];
        for (origin, ok) in cases {
            assert_eq!(check_origin(origin, 8080).is_ok(), ok, "{origin:?}");
        }
        assert_eq!(check_ws_origin(None, 8080), Err(Rejection::NoOrigin));
    }

    #[test]
    fn connections_stay_well_below_the_open_file_limit() {
        for (nofile, connections, waiting) in [
            (1 << 20, 512, 64),
            (1024, 512, 64),
            (256, 128, 64),
            (160, 32, 16),
            (64, 4, 2),
        ] {
            let limits = Limits::under(nofile);
            assert_eq!(
                (limits.max_connections, limits.max_waiting),
                (connections, waiting),
                "{nofile}"
            );
        }
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(check_token("abc", "abc").is_ok());
        assert_eq!(check_token("abd", "abc"), Err(Rejection::WrongToken));
        assert_eq!(check_token("ab", "abc"), Err(Rejection::WrongToken));
        assert_eq!(check_token("", "abc"), Err(Rejection::WrongToken));
    }

    #[test]
    fn tokens_are_256_bits_and_differ() {
        let a = new_token().unwrap();
        let b = new_token().unwrap();
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
    }
}
