//! The agent's stdout (docs/architecture.md §14c): a regular file it writes, read as it grows
//! and decoded, closed when the agent and every helper let go of it, and what of it is kept
//! for a reply too big for the conversation or a failed run.

use tokio::sync::mpsc;

use super::decode::{Decoder, Retry};

/// What is kept of stdout for a reply too big for the conversation or a failed run: its
/// first and its last this many bytes.
pub(crate) const KEPT_END: usize = 1024 * 1024;
/// How much of the output file is read at once (and so the most one plain delta holds).
pub(super) const READ_BYTES: usize = 64 * 1024;

/// The agent's stdout: a regular file it writes, read as it grows through the bridge's own
/// descriptor at a position of its own (`pread`: the two descriptors share one file offset,
/// which the agent's writes move).
pub(super) struct Tail {
    file: std::fs::File,
    read: u64,
    /// Up to where the file's blocks were given back (Linux): what was read is not kept on
    /// disk, so an agent printing gigabytes fills no disk.
    released: u64,
    buf: Vec<u8>,
    pub(super) decoder: Decoder,
    pub(super) output: Output,
    retries: Option<mpsc::UnboundedSender<Retry>>,
    /// Says when the agent's stdout is closed, where the system can tell.
    closed: Option<Closed>,
}

impl Tail {
    pub(super) fn new(
        file: std::fs::File,
        decoder: Decoder,
        retries: Option<mpsc::UnboundedSender<Retry>>,
        closed: Option<Closed>,
    ) -> Tail {
        Tail {
            file,
            read: 0,
            released: 0,
            buf: vec![0; READ_BYTES],
            decoder,
            output: Output::default(),
            retries,
            closed,
        }
    }

    /// Whether the agent's stdout is closed: nothing more can be written to it.
    pub(super) fn closed(&mut self) -> bool {
        self.closed.as_mut().is_some_and(Closed::seen)
    }

    /// Reads what the agent has written so far — up to the file's length now, so a helper
    /// that writes on as fast as it is read cannot keep this going — sending its text deltas
    /// to `deltas`; returns how many bytes were read.
    pub(super) async fn read(&mut self, deltas: &mpsc::UnboundedSender<String>) -> u64 {
        use std::os::unix::fs::FileExt;
        let end = self.file.metadata().map_or(u64::MAX, |m| m.len());
        let mut total = 0;
        while self.read < end {
            let want =
                usize::try_from(end - self.read).map_or(self.buf.len(), |n| n.min(self.buf.len()));
            let n = match self.file.read_at(&mut self.buf[..want], self.read) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            let chunk = &self.buf[..n];
            self.output.push(chunk);
            for delta in self.decoder.push(chunk) {
                let _ = deltas.send(delta);
            }
            for retry in self.decoder.take_retries() {
                if let Some(retries) = &self.retries {
                    let _ = retries.send(retry);
                }
            }
            self.read += n as u64;
            total += n as u64;
            self.release();
            // A long output leaves the timeout, a cancel and the relay their turn.
            tokio::task::yield_now().await;
        }
        total
    }

    #[cfg(target_os = "linux")]
    fn release(&mut self) {
        use std::os::fd::AsRawFd;
        const STEP: u64 = 16 * 1024 * 1024;
        let upto = self.read / STEP * STEP;
        if upto > self.released {
            // SAFETY: fallocate(2) on a descriptor this owns; no memory is shared. A file
            // system that cannot punch holes keeps the blocks: nothing else changes.
            unsafe {
                libc::fallocate(
                    self.file.as_raw_fd(),
                    libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                    self.released as libc::off_t,
                    (upto - self.released) as libc::off_t,
                );
            }
            self.released = upto;
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn release(&mut self) {}
}

/// A descriptor of our own on the agent's output file `file` (read, and written only to give
/// read blocks back). On Linux it is opened anew, not a copy of `file`'s: the agent's open file
/// is then its alone, and its last copy closed is what [`Closed`] sees.
#[cfg(target_os = "linux")]
pub(super) fn reader_of(file: &std::fs::File) -> std::io::Result<std::fs::File> {
    use std::os::fd::AsRawFd;
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(format!("/proc/self/fd/{}", file.as_raw_fd()))
}

#[cfg(not(target_os = "linux"))]
pub(super) fn reader_of(file: &std::fs::File) -> std::io::Result<std::fs::File> {
    file.try_clone()
}

/// Whether the agent's stdout is closed (Linux): an output file has no end to read, but the
/// system says when the last descriptor that writes it is closed (inotify's `IN_CLOSE_WRITE`),
/// by the agent and every helper that holds a copy of it. Elsewhere the run ends at the final
/// event or the exit.
#[cfg(target_os = "linux")]
pub(super) struct Closed {
    inotify: std::os::fd::OwnedFd,
    seen: bool,
}

#[cfg(target_os = "linux")]
impl Closed {
    /// Watches the file `ours` reads, for the agent's close (each open file's last close is
    /// one event; ours is closed after the run). `None` when the system cannot watch it: the
    /// run then ends at the final event or the exit.
    pub(super) fn watch(ours: &std::fs::File) -> Option<Closed> {
        use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
        // SAFETY: inotify_init1 takes flags and returns a new descriptor (or -1).
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        if fd < 0 {
            return None;
        }
        // SAFETY: `fd` is a new descriptor that nothing else owns.
        let inotify = unsafe { OwnedFd::from_raw_fd(fd) };
        let path = std::ffi::CString::new(format!("/proc/self/fd/{}", ours.as_raw_fd())).ok()?;
        // SAFETY: the path is NUL-terminated and only read.
        let watch = unsafe { libc::inotify_add_watch(fd, path.as_ptr(), libc::IN_CLOSE_WRITE) };
        (watch >= 0).then_some(Closed {
            inotify,
            seen: false,
        })
    }

    /// Whether the last writer has closed the file, by now.
    fn seen(&mut self) -> bool {
        use std::os::fd::AsRawFd;
        if !self.seen {
            let mut events = [0u8; 4096];
            // SAFETY: reads into a buffer this owns, of its length; the descriptor does not
            // block.
            let n = unsafe {
                libc::read(
                    self.inotify.as_raw_fd(),
                    events.as_mut_ptr().cast(),
                    events.len(),
                )
            };
            // Only IN_CLOSE_WRITE is watched (IN_IGNORED would say the watch is gone, and
            // the file with it: nothing more can be written either).
            self.seen = n > 0;
        }
        self.seen
    }
}

#[cfg(not(target_os = "linux"))]
pub(super) struct Closed;

#[cfg(not(target_os = "linux"))]
impl Closed {
    pub(super) fn watch(_: &std::fs::File) -> Option<Closed> {
        None
    }

    fn seen(&mut self) -> bool {
        false
    }
}

/// What is kept of an agent's stdout, for a reply too big for the conversation or a failed run
/// (stored in the database's `outputs`): its first and its last [`KEPT_END`] bytes, and the
/// count of the bytes dropped between them.
#[derive(Debug, Default)]
pub(crate) struct Output {
    head: Vec<u8>,
    /// The last bytes read: up to twice [`KEPT_END`], the last [`KEPT_END`] of them kept.
    tail: Vec<u8>,
    total: u64,
}

impl Output {
    /// `bytes` as a run's output (an ACP agent's stderr: its stdout is the protocol's).
    pub(crate) fn of(bytes: &[u8]) -> Output {
        let mut output = Output::default();
        output.push(bytes);
        output
    }

    fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let to_head = (KEPT_END - self.head.len()).min(bytes.len());
        self.head.extend_from_slice(&bytes[..to_head]);
        self.tail.extend_from_slice(&bytes[to_head..]);
        if self.tail.len() > 2 * KEPT_END {
            let extra = self.tail.len() - KEPT_END;
            self.tail.drain(..extra);
        }
    }

    fn tail(&self) -> &[u8] {
        &self.tail[self.tail.len().saturating_sub(KEPT_END)..]
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The bytes dropped between the first and the last ones kept.
    pub(crate) fn dropped(&self) -> u64 {
        self.total - (self.head.len() + self.tail().len()) as u64
    }

    /// What is stored: the output, or its first bytes, a line saying how many were dropped,
    /// and its last bytes.
    pub(crate) fn bytes(&self) -> Vec<u8> {
        let mut bytes = self.head.clone();
        if self.dropped() > 0 {
            bytes.extend_from_slice(
                format!(
                    "\n[agent-chatter: {} bytes of this output were dropped here]\n",
                    self.dropped()
                )
                .as_bytes(),
            );
        }
        bytes.extend_from_slice(self.tail());
        bytes
    }

    /// Where the output is, as a failure's reason says it.
    pub(crate) fn where_kept(&self) -> String {
        if self.dropped() == 0 {
            format!(
                "its output ({} bytes) is kept in the session database (`agent-chatter outputs` prints it)",
                self.total
            )
        } else {
            format!(
                "its output ({} bytes) is kept in part in the session database (`agent-chatter outputs` prints it): \
                 the first and the last {KEPT_END} bytes; the {} bytes between were dropped",
                self.total,
                self.dropped()
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_output_kept_is_its_first_and_last_megabyte_and_the_count_between() {
        let mut output = Output::default();
        output.push(b"small");
        assert_eq!((output.bytes(), output.dropped()), (b"small".to_vec(), 0));
        assert_eq!(
            output.where_kept(),
            "its output (5 bytes) is kept in the session database (`agent-chatter outputs` prints it)"
        );
        let mut output = Output::default();
        for letter in b'a'..=b'e' {
            for _ in 0..16 {
                output.push(&vec![letter; KEPT_END / 16]);
            }
        }
        assert_eq!(output.dropped(), 3 * KEPT_END as u64);
        let bytes = output.bytes();
        assert!(bytes.starts_with(&vec![b'a'; KEPT_END]));
        assert!(bytes.ends_with(&vec![b'e'; KEPT_END]));
        assert_eq!(
            &bytes[KEPT_END..bytes.len() - KEPT_END],
            b"\n[agent-chatter: 3145728 bytes of this output were dropped here]\n"
        );
        assert_eq!(
            output.where_kept(),
            "its output (5242880 bytes) is kept in part in the session database \
             (`agent-chatter outputs` prints it): the first and the last 1048576 bytes; the \
             3145728 bytes between were dropped"
        );
    }
}
