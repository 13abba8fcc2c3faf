//! The watchdog that stops agents when the bridge dies, however it dies (docs/architecture.md
//! §14c). `PR_SET_PDEATHSIG` reaches the agent's own process only, and npm's `codex` and
//! `gemini` are launchers whose child does the work; a `kill -9` of the bridge runs no
//! destructor. So, at the first run, the bridge starts this executable again as a small
//! process of its own session (`agent-chatter __reap`, out of reach of the terminal's signals
//! and of the bridge's group) holding the read end of a pipe. The bridge writes `+PGID` when an
//! agent's process group starts and `-PGID` when it is gone; when the pipe ends — the bridge
//! exited or was killed — the watchdog kills every group still listed, and every process that
//! carries this bridge's mark ([`BRIDGE_MARK`], given to each agent and inherited by what
//! it starts): a tool's shell an ACP adapter started in a session of its own has left the
//! agent's group, and once the agent died with the bridge, its parentage too. Then it exits.
//!
//! Only an executable that answers `__reap` (the `agent-chatter` binary, which calls
//! [`enable`]) starts one; elsewhere (the library's own tests) runs go without it, with the
//! parent-death signal and the group kills of a live bridge only. Linux only.

/// The hidden subcommand that runs the watchdog.
pub const COMMAND: &str = "__reap";

/// The variable every agent is started with and every process it starts inherits, naming this
/// bridge: the watchdog finds by it what an agent started even once it left the agent's group
/// and parentage (a tool's shell in a session of its own, reparented when the agent died with
/// the bridge), where neither a group kill nor `process::descendants` reaches.
pub(crate) const BRIDGE_MARK: &str = "AGENT_CHATTER_BRIDGE";

/// This bridge's value of [`BRIDGE_MARK`]: its process id and start time, which no other
/// bridge shares.
pub(crate) fn bridge_mark() -> &'static str {
    static MARK: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    MARK.get_or_init(|| {
        let started = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        format!("{}-{started}", std::process::id())
    })
}

/// Every live process whose environment holds [`BRIDGE_MARK`] with the value `mark`, read
/// from `/proc` (Linux). Processes of other users cannot be read, nor be ours.
#[cfg(target_os = "linux")]
fn marked(mark: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let wanted = format!("{BRIDGE_MARK}={mark}");
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            std::fs::read(format!("/proc/{p}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == wanted.as_bytes()))
        })
        .collect()
}

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::BTreeSet;
    use std::io::{BufRead, Write};
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Mutex;

    static ENABLED: AtomicBool = AtomicBool::new(false);

    /// The bridge's side: the pipe to the watchdog (none yet, or it died) and the groups
    /// running, so a new watchdog learns all of them.
    struct Watch {
        pipe: Option<std::fs::File>,
        groups: BTreeSet<u32>,
    }

    static WATCH: Mutex<Watch> = Mutex::new(Watch {
        pipe: None,
        groups: BTreeSet::new(),
    });

    pub(super) fn enable() {
        ENABLED.store(true, Ordering::Relaxed);
    }

    pub(crate) fn watch(group: u32) {
        update(group, true);
    }

    pub(crate) fn forget(group: u32) {
        update(group, false);
    }

    fn update(group: u32, running: bool) {
        if !ENABLED.load(Ordering::Relaxed) {
            return;
        }
        let Ok(mut watch) = WATCH.lock() else { return };
        if running {
            watch.groups.insert(group);
        } else {
            watch.groups.remove(&group);
        }
        let line = format!("{}{group}\n", if running { '+' } else { '-' });
        if let Some(pipe) = watch.pipe.as_mut() {
            if pipe.write_all(line.as_bytes()).is_ok() {
                return;
            }
            // The watchdog is gone (killed by someone): start another below.
            watch.pipe = None;
        }
        if watch.groups.is_empty() {
            return;
        }
        match start() {
            Ok(mut pipe) => {
                let all: String = watch.groups.iter().map(|g| format!("+{g}\n")).collect();
                if pipe.write_all(all.as_bytes()).is_ok() {
                    watch.pipe = Some(pipe);
                }
            }
            Err(e) => eprintln!(
                "bridge: the watchdog that stops agents should the bridge be killed could not \
                 start: {e}"
            ),
        }
    }

    /// Starts the watchdog: this executable (`/proc/self/exe`, even if replaced on disk since),
    /// in a session of its own, reading the returned pipe's other end as its stdin.
    fn start() -> std::io::Result<std::fs::File> {
        let mut fds = [0; 2];
        // SAFETY: pipe2(2) writes two descriptors into the array it is given.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } == -1 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: both descriptors were just created and are owned by nothing else. Both are
        // close-on-exec, so no agent inherits the write end (the watchdog would never see
        // its end while that agent lives); the read end becomes the watchdog's stdin.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let mut cmd = Command::new("/proc/self/exe");
        cmd.arg(super::COMMAND)
            .arg(super::bridge_mark())
            .stdin(Stdio::from(read))
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: between fork and exec the closure calls only setsid(2), async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        // Not waited for: it ends after the bridge does.
        cmd.spawn()?;
        Ok(std::fs::File::from(write))
    }

    /// The watchdog's own work (`agent-chatter __reap MARK`): reads `+PGID` and `-PGID` lines
    /// on stdin until it ends, then kills every group still listed and every process marked as
    /// the bridge's (`MARK`).
    pub fn reap() {
        let mark = std::env::args().nth(2).filter(|m| !m.is_empty());
        // Out of the terminal's reach already (its own session); a hangup or interrupt meant
        // for the bridge must not stop it before it has done its work either.
        // SAFETY: signal(2) with SIG_IGN installs no handler code.
        unsafe {
            libc::signal(libc::SIGHUP, libc::SIG_IGN);
            libc::signal(libc::SIGINT, libc::SIG_IGN);
        }
        let mut groups = BTreeSet::new();
        let mut lines = std::io::stdin().lock();
        let mut line = String::new();
        loop {
            line.clear();
            match lines.read_line(&mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let line = line.trim();
            let (running, group) = match line.split_at_checked(1) {
                Some(("+", g)) => (true, g),
                Some(("-", g)) => (false, g),
                _ => continue,
            };
            let Ok(group) = group.parse::<i32>() else {
                continue;
            };
            if group <= 1 {
                continue;
            }
            if running {
                groups.insert(group);
            } else {
                groups.remove(&group);
            }
        }
        // Found before anything is killed, though the agents themselves may be gone already
        // (their parent-death signal came with the bridge's end).
        let strays = mark.map_or_else(Vec::new, |m| super::marked(&m));
        for group in groups {
            // SAFETY: kill(2) with a negative pid signals the process group; no memory shared.
            unsafe {
                libc::kill(-group, libc::SIGKILL);
            }
        }
        for pid in strays.into_iter().filter_map(|p| i32::try_from(p).ok()) {
            // SAFETY: kill(2) on a process id; no memory is shared.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
    }
}

#[cfg(target_os = "linux")]
pub use linux::reap;
#[cfg(target_os = "linux")]
pub(crate) use linux::{forget, watch};

/// Called by the `agent-chatter` binary, which answers [`COMMAND`]: runs start the watchdog.
#[cfg(target_os = "linux")]
pub fn enable() {
    linux::enable();
}

#[cfg(not(target_os = "linux"))]
pub fn enable() {}

/// The watchdog's own work (`agent-chatter __reap`): reads `+PGID`/`-PGID` lines on stdin
/// until it ends, then kills every group still listed.
#[cfg(not(target_os = "linux"))]
pub fn reap() {}

#[cfg(not(target_os = "linux"))]
pub(crate) fn watch(_: u32) {}

#[cfg(not(target_os = "linux"))]
pub(crate) fn forget(_: u32) {}
