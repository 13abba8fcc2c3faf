//! The agent's process: its own process group, killed as a whole, and (on Linux) killed with
//! the bridge however the bridge dies (docs/architecture.md §14c). Everything here touches the
//! OS's process calls; the run's logic (pipes, decoding, timeouts) is in `run`.

use tokio::process::Command;

/// Makes `cmd` start in a process group of its own (so a timeout or cancel reaches everything
/// it starts) that dies with the bridge, marked as this bridge's (`reaper::BRIDGE_MARK`).
pub(crate) fn own_group(cmd: &mut Command) {
    cmd.process_group(0);
    cmd.env(super::reaper::BRIDGE_MARK, super::reaper::bridge_mark());
    die_with_the_bridge(cmd);
}

/// On Linux the agent is killed when the bridge dies, however it dies: a `kill -9` skips every
/// destructor, and an agent left running would work on beside its own re-delivery after the
/// session is resumed. Only the agent's own process is reached: a CLI that is a wrapper
/// running its real work in a child (npm's `codex` runs a native binary) leaves that child to
/// the wrapper, and the watchdog of `reaper` stops the whole group. The signal follows the
/// spawning thread, a tokio worker that lives as long as the runtime (so `run` must not be
/// called from `spawn_blocking`).
#[cfg(target_os = "linux")]
fn die_with_the_bridge(cmd: &mut Command) {
    let bridge = std::process::id();
    // SAFETY: between fork and exec the closure calls only prctl(2) and getppid(2), which are
    // async-signal-safe, and allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            // The bridge died before the signal was armed: do not start orphaned. (An error
            // from the OS's numbers: nothing may be allocated here.)
            if libc::getppid() as u32 != bridge {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_the_bridge(_: &mut Command) {}

/// The agent's process group while it runs, listed with the watchdog (`reaper`) that kills it
/// should the bridge die: dropped before the run is over (a timeout, a cancel, or the run
/// itself dropped), it kills the group — the agent and everything it started.
/// (`kill_on_drop` would kill the agent alone, orphaning its helpers.)
pub(crate) struct GroupGuard(Option<u32>);

impl GroupGuard {
    /// The group led by `pid` (the agent, started in a group of its own).
    pub(crate) fn new(pid: Option<u32>) -> GroupGuard {
        if let Some(pid) = pid {
            super::reaper::watch(pid);
        }
        GroupGuard(pid)
    }

    /// Kills the group now. Its leader may have exited and been reaped: a helper still in the
    /// group keeps the group's id in use, so it names no other process; were the group empty,
    /// the id could name a new group only if process ids wrapped around within the half
    /// second this is called after the exit.
    pub(crate) fn kill(&mut self) {
        if let Some(pid) = self.0.and_then(|p| i32::try_from(p).ok()) {
            // SAFETY: kill(2) with a negative pid signals the process group; no memory is shared.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
    }

    /// The run is over and its group killed: nothing more to kill (its id may be reused from
    /// here on), and the watchdog forgets it.
    pub(crate) fn release(&mut self) {
        if let Some(pid) = self.0.take() {
            super::reaper::forget(pid);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
        self.release();
    }
}

/// Every live descendant of `pid` (children, their children, …), read from `/proc` (Linux;
/// elsewhere none). An ACP adapter may start a tool's shell in a session of its own, outside
/// the agent's group; a process that is still a descendant is found here and stopped too.
#[cfg(target_os = "linux")]
pub(crate) fn descendants(pid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let parents: Vec<(u32, u32)> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|p| {
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).ok()?;
            // `pid (comm) state ppid …`: the command name may hold spaces and parentheses.
            let after = stat.rsplit_once(") ")?.1;
            let ppid = after.split_whitespace().nth(1)?.parse().ok()?;
            Some((p, ppid))
        })
        .collect();
    let mut found = vec![pid];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(
            parents
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    found.remove(0);
    found
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn descendants(_: u32) -> Vec<u32> {
    Vec::new()
}

/// Kills each of `pids` (processes found by [`descendants`] a moment before).
pub(crate) fn kill_each(pids: &[u32]) {
    for pid in pids.iter().filter_map(|p| i32::try_from(*p).ok()) {
        // SAFETY: kill(2) on a process id; no memory is shared.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
}
