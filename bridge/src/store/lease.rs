//! One runner per session (docs/architecture.md §14): a bridge takes a session's lease when it
//! opens it, renews it while it lives, and checks it in each append's transaction; a holder
//! that is gone on this machine loses it at once, one that stops renewing after [`LEASE_MS`].

use std::time::Duration;

use rusqlite::{params, OptionalExtension, TransactionBehavior};

use super::{Db, Store, StoreError};
use crate::clock::now;

/// How long a lease lasts unless renewed: a holder that stops renewing (hung, suspended, or
/// on another machine and dead) loses its sessions after this long.
pub const LEASE_MS: i64 = 10_000;
/// How often a bridge renews its leases.
const LEASE_RENEW: Duration = Duration::from_secs(3);

/// A lease holder: the machine's boot, the process (its pid and start time, so a reused pid
/// is told apart), a random part (two stores in one process are two holders) and its PID
/// namespace (a container sharing the folder numbers its processes apart: its pid means
/// nothing here).
pub(super) struct Holder {
    pub(super) token: String,
    pub(super) pid: i64,
}

impl Holder {
    pub(super) fn new() -> Holder {
        let pid = std::process::id();
        let mut random = [0u8; 8];
        let _ = getrandom::fill(&mut random);
        let random: String = random.iter().map(|b| format!("{b:02x}")).collect();
        Holder {
            token: format!(
                "{}/{pid}/{}/{random}/{}",
                boot_id().unwrap_or_default(),
                start_time(pid as i64).unwrap_or_default(),
                pid_namespace().unwrap_or_default()
            ),
            pid: pid as i64,
        }
    }
}

impl Store {
    /// Takes (or renews) the lease on `session`: this store runs it from now on, and no other
    /// bridge will ([`StoreError::Held`]) while this one lives. The lease is renewed every few
    /// seconds while the store is open; a holder that is gone (a process of this machine that
    /// ended, even by SIGKILL) loses it at once, one that stops renewing after [`LEASE_MS`].
    pub(crate) fn lease(&self, session: i64) -> Result<(), StoreError> {
        let mut db = self.writable()?;
        let Db { conn, me, .. } = &mut *db;
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        claim(&tx, me, session)?;
        tx.commit()?;
        Ok(())
    }

    /// Gives up the lease on `session` (if this store holds it).
    pub(crate) fn release(&self, session: i64) {
        let db = self.db();
        if let Err(e) = db.conn.execute(
            "DELETE FROM leases WHERE session_id = ?1 AND holder = ?2",
            params![session, db.me.token],
        ) {
            eprintln!("agent-chatter: warning: the lease on session {session} was not given up: {e}; it expires within {} s", LEASE_MS / 1000);
        }
    }
}

impl Db {
    /// Renews this store's leases every [`LEASE_RENEW`].
    pub(super) fn renew(&mut self) {
        if self.renewed.elapsed() < LEASE_RENEW {
            return;
        }
        self.renewed = std::time::Instant::now();
        let until = now().0 as i64 + LEASE_MS;
        if let Err(e) = self.conn.execute(
            "UPDATE leases SET expires_ms = ?1 WHERE holder = ?2",
            params![until, self.me.token],
        ) {
            eprintln!("agent-chatter: warning: the session's lease was not renewed: {e}");
        }
    }
}

/// Takes or renews `me`'s lease on `session` in `tx`, unless another holder has it: one that
/// is alive and renewed it less than [`LEASE_MS`] ago.
pub(super) fn claim(
    tx: &rusqlite::Transaction<'_>,
    me: &Holder,
    session: i64,
) -> Result<(), StoreError> {
    let now = now().0 as i64;
    let held: Option<(String, i64, i64)> = tx
        .query_row(
            "SELECT holder, pid, expires_ms FROM leases WHERE session_id = ?1",
            [session],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    if let Some((holder, pid, expires_ms)) = held {
        if holder != me.token && expires_ms > now && !holder_is_gone(&holder) {
            return Err(StoreError::Held {
                session,
                pid,
                left_s: (expires_ms - now + 999) / 1000,
            });
        }
    }
    tx.execute(
        "INSERT OR REPLACE INTO leases (session_id, holder, pid, expires_ms) VALUES (?1, ?2, ?3, ?4)",
        params![session, me.token, me.pid, now + LEASE_MS],
    )?;
    Ok(())
}

/// This machine's boot (Linux), to know that a holder's pid is one of this machine's.
fn boot_id() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// This process's PID namespace (`pid:[4026531836]`), so a holder's pid is known to be one
/// this process can look up.
fn pid_namespace() -> Option<String> {
    std::fs::read_link("/proc/self/ns/pid")
        .ok()
        .map(|link| link.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty() && !s.contains('/'))
}

/// When process `pid` started, in clock ticks since boot, unless it is gone or a zombie.
fn start_time(pid: i64) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    // After the name: state (field 3), …, starttime (field 22).
    (fields.first() != Some(&"Z")).then(|| fields.get(19).map(|s| s.to_string()))?
}

/// Whether the holder named `token` is a process of this machine and PID namespace that is
/// gone (killed, ended): its lease is then free at once, not only when it expires. A holder on
/// another machine or in another PID namespace (a container sharing the folder) cannot be
/// looked up: it is never taken for gone, and keeps its lease while it renews it.
fn holder_is_gone(token: &str) -> bool {
    let mut parts = token.split('/');
    let (Some(boot), Some(pid), Some(start)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    // Holders written before namespaces were named have four parts: taken as this one's.
    if let Some(namespace) = parts.nth(1) {
        if Some(namespace) != pid_namespace().as_deref() {
            return false;
        }
    }
    let Ok(pid) = pid.parse::<i64>() else {
        return false;
    };
    match boot_id() {
        Some(here) if here == boot && !start.is_empty() => {
            start_time(pid).as_deref() != Some(start)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_holder_in_another_pid_namespace_is_never_taken_for_gone() {
        let boot = boot_id().expect("Linux");
        let here = pid_namespace().expect("Linux");
        // A pid no process of this namespace has: gone, were it this namespace's.
        let dead = "999999999";
        let table = [
            (format!("{boot}/{dead}/1234/ab/{here}"), true),
            (format!("{boot}/{dead}/1234/ab/pid:[1]"), false),
            (format!("{boot}/{dead}/1234/ab"), true),
            (format!("another-boot/{dead}/1234/ab/{here}"), false),
        ];
        for (token, gone) in table {
            assert_eq!(holder_is_gone(&token), gone, "{token}");
        }
    }
}
