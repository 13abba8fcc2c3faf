//! Who may talk to the bridge (docs/architecture.md §14). The page runs real agent CLIs on this
//! machine, so every request is checked like Jupyter's server checks its own: the Host header
//! (against DNS rebinding), the Origin (against other sites in the same browser) and, on the
//! WebSocket, the per-launch token. Each rejection names its reason, which the server logs and
//! returns.

use std::net::{IpAddr, SocketAddr};

use subtle::ConstantTimeEq;
use thiserror::Error;

/// Why a request was turned away.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub(crate) enum Rejection {
    #[error("missing Host header")]
    NoHost,
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
    /// 400 for a malformed request, 403 for a refused one.
    pub(crate) fn status(&self) -> u16 {
        match self {
            Rejection::NoHost => 400,
            _ => 403,
        }
    }
}

/// The names a loopback request may use for this server (the port must be the bound one).
const LOOPBACK_NAMES: [&str; 3] = ["127.0.0.1", "localhost", "[::1]"];

/// Refuses to serve anything but loopback: a bridge runs agent CLIs on behalf of whoever
/// connects, so it must never be reachable from another machine.
pub(crate) fn check_bind(addr: &SocketAddr) -> Result<(), String> {
    match addr.ip() {
        IpAddr::V4(ip) if ip.is_loopback() => Ok(()),
        IpAddr::V6(ip) if ip.is_loopback() => Ok(()),
        ip => Err(format!(
            "refusing to listen on {ip}: the bridge runs agent commands for whoever connects, so it listens on 127.0.0.1 only"
        )),
    }
}

/// `Host` must be `127.0.0.1:PORT`, `localhost:PORT` or `[::1]:PORT`.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_binds_are_allowed() {
        for (addr, ok) in [
            ("127.0.0.1:8080", true),
            ("[::1]:8080", true),
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
            (Some("[::1]:8080"), Ok(())),
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
