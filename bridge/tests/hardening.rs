//! The bridge against a hostile or careless machine (issue #28): sockets that never send the
//! token, a database deleted, unwritable or planted, a page folder with symlinks, a taken
//! port. Real processes, real sockets, real SQLite files.

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use support::{bin, team, Bridge};

/// `agent-chatter serve` on the files of a [`Bridge::new_dir`] directory, its stderr kept in
/// `stderr.log` there; `nofile` sets its open-file limit (soft and hard) before it starts.
fn start(dir: tempfile::TempDir, nofile: Option<u64>, args: &[&str]) -> Bridge {
    let d = dir.path();
    let mut cmd = serve_command(d, 0, args);
    cmd.stdout(Stdio::piped())
        .stderr(std::fs::File::create(d.join("stderr.log")).unwrap());
    if let Some(n) = nofile {
        use std::os::unix::process::CommandExt;
        // SAFETY: setrlimit is async-signal-safe and touches only this (forked) process.
        unsafe {
            cmd.pre_exec(move || {
                let limit = libc::rlimit {
                    rlim_cur: n,
                    rlim_max: n,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            });
        }
    }
    let mut child = cmd.spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let rest = line
        .trim()
        .strip_prefix("http://127.0.0.1:")
        .unwrap_or_else(|| panic!("first line: {line:?}; stderr: {}", stderr_of(d)));
    let (port, token) = rest.split_once("/#token=").unwrap();
    Bridge {
        port: port.parse().unwrap(),
        token: token.to_string(),
        child,
        dir,
    }
}

/// `serve` on the files in `d` (database, page, team, agents), plus `args`.
fn serve_command(d: &Path, port: u16, args: &[&str]) -> Command {
    let mut cmd = Command::new(bin());
    cmd.args(["serve", "--port", &port.to_string()])
        .arg("--db")
        .arg(d.join("sessions.db"))
        .arg("--dist")
        .arg(d.join("dist"))
        .arg("--team")
        .arg(d.join("team.json"))
        .arg("--agents")
        .arg(d.join("agents.json"))
        .args(args);
    cmd
}

fn stderr_of(d: &Path) -> String {
    std::fs::read_to_string(d.join("stderr.log")).unwrap_or_default()
}

/// A bridge's whole run when it is expected to refuse to start: (exit code, stderr).
fn refused_start(cmd: &mut Command) -> (Option<i32>, String) {
    let out = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
        .wait_with_output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A socket that asks for the WebSocket, as the page does, and then says nothing.
fn upgrade_without_hello(port: u16) -> Option<TcpStream> {
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    let request = format!(
        "GET /api/ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: http://127.0.0.1:{port}\r\n\
         Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
         Sec-WebSocket-Version: 13\r\n\r\n"
    );
    s.write_all(request.as_bytes()).ok()?;
    Some(s)
}

/// Waits until the bridge closes `s` (EOF or an error); false after `limit`.
fn closed_within(s: &mut TcpStream, limit: Duration) -> bool {
    let end = Instant::now() + limit;
    let mut buf = [0u8; 4096];
    loop {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        s.set_read_timeout(Some(left)).unwrap();
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return false,
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => return false,
            Err(_) => return true,
        }
    }
}

// ---- 1. Before the token -------------------------------------------------------------------

/// Issue #28.1: under a 256 open-file limit, 400 sockets that never send the token neither
/// keep the page out nor take the descriptors an agent launch needs.
#[tokio::test]
async fn sockets_without_the_token_never_lock_out_the_page_nor_an_agent_launch() {
    let bridge = start(
        Bridge::new_dir(&team(None), "claude-stream.sh"),
        Some(256),
        &[],
    );
    let port = bridge.port;
    let held = tokio::task::spawn_blocking(move || {
        (0..400)
            .filter_map(|_| upgrade_without_hello(port))
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    assert!(held.len() > 100, "only {} sockets opened", held.len());

    let (mut page, _) = tokio::time::timeout(Duration::from_secs(30), bridge.hello())
        .await
        .expect("the page could not connect past the held sockets");
    page.send(json!({"v": 1, "type": "apply", "fact": {"type": "human", "text": "[NEXT: max] go", "sender": null, "at": 1}}))
        .await;
    let outcome = page
        .until(|e| {
            e["type"] == "fact"
                && ["replied", "failed"].contains(&e["fact"]["type"].as_str().unwrap_or(""))
        })
        .await;
    assert_eq!(outcome["fact"]["type"], "replied", "{outcome}");
    drop(held);
    let log = stderr_of(bridge.dir.path());
    assert!(
        log.contains("waiting for its token: 64 were waiting, the limit"),
        "{log}"
    );
}

/// Issue #28.1: a socket that has not sent the token within the handshake time is closed, and
/// a flood of them leaves a line or two in the log, not one per socket.
#[test]
fn a_socket_without_the_token_is_closed_after_the_handshake_time_and_logged_once() {
    let bridge = start(Bridge::new_dir(&team(None), "claude-stream.sh"), None, &[]);
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], bridge.port));
    let mut silent: Vec<TcpStream> = (0..20)
        .map(|_| TcpStream::connect_timeout(&addr, Duration::from_secs(2)).unwrap())
        .collect();
    let mut upgraded: Vec<TcpStream> = (0..20)
        .map(|_| upgrade_without_hello(bridge.port).unwrap())
        .collect();
    // The handshake time is 10 s; a minute is only a bound for a slow machine.
    for s in silent.iter_mut().chain(&mut upgraded) {
        assert!(closed_within(s, Duration::from_secs(60)), "still open");
    }
    let log = stderr_of(bridge.dir.path());
    let lines = log.lines().filter(|l| l.contains("no token")).count();
    assert!((1..=2).contains(&lines), "{lines} lines about it:\n{log}");
    assert!(
        log.contains("closed a connection: no token within 10 s"),
        "{log}"
    );
}

/// Issue #28.1: before the token a socket may send a few KiB, not most of a 16 MiB frame.
#[test]
fn more_than_64_kib_before_the_token_closes_the_socket() {
    let bridge = start(Bridge::new_dir(&team(None), "claude-stream.sh"), None, &[]);
    let mut s = upgrade_without_hello(bridge.port).unwrap();
    // A masked text frame announcing 8 MiB, and 256 KiB of it.
    let size: u64 = 8 << 20;
    let mut frame = vec![0x81, 0xFF];
    frame.extend_from_slice(&size.to_be_bytes());
    frame.extend_from_slice(&[0, 0, 0, 0]);
    frame.extend(std::iter::repeat_n(b'x', 256 * 1024));
    // The bridge may close mid-write: that is the point.
    let _ = s.write_all(&frame);
    assert!(closed_within(&mut s, Duration::from_secs(60)), "still open");
    let log = stderr_of(bridge.dir.path());
    assert!(
        log.contains("closed a connection: more than 64 KiB sent before the token"),
        "{log}"
    );
}

// ---- 10. Smaller -----------------------------------------------------------------------------

/// Issue #28.10: a start that fails on a taken port leaves no session behind.
#[test]
fn a_start_on_a_taken_port_leaves_no_session_behind() {
    let dir = Bridge::new_dir(&team(None), "claude-stream.sh");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let mut cmd = serve_command(dir.path(), port, &[]);
    let (code, stderr) = refused_start(&mut cmd);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("cannot listen on 127.0.0.1:{port}")),
        "{stderr}"
    );
    let out = Command::new(bin())
        .args(["sessions", "--db"])
        .arg(dir.path().join("sessions.db"))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "", "sessions left");
}

/// Issue #28.10: `[::1]` is not a name of this bridge (it listens on 127.0.0.1 only), neither as
/// Host nor as Origin; `localhost`, which browsers do reach it by, is.
#[test]
fn ipv6_loopback_names_are_refused_and_localhost_is_not() {
    let bridge = Bridge::start(Bridge::new_dir(&team(None), "claude-stream.sh"), None);
    let port = bridge.port;
    let host = format!("127.0.0.1:{port}");
    let v6_host = format!("[::1]:{port}");
    let v6_origin = format!("http://[::1]:{port}");
    let localhost = format!("localhost:{port}");
    let localhost_origin = format!("http://localhost:{port}");
    let (status, body) = bridge.get("/", &[("Host", &v6_host)]);
    assert_eq!(status, 403, "{body}");
    let (status, body) = bridge.get("/", &[("Host", &host), ("Origin", &v6_origin)]);
    assert_eq!(status, 403, "{body}");
    let (status, body) = bridge.get("/", &[("Host", &localhost), ("Origin", &localhost_origin)]);
    assert_eq!(status, 200, "{body}");
}
