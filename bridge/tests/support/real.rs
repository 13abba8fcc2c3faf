//! The world of a test against the real agent CLIs and ACP adapters (`real_clis.rs`,
//! `real_acp.rs`): the installed CLIs, a mock of every vendor's model API, and a directory
//! holding HOME, TMPDIR, the working directory, the team, agents file and database. Every
//! process a test starts carries its marker in its environment, so the test finds (and at its
//! end kills) exactly its own.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use super::mock_models::MockModels;

/// Where `cargo xtask test` put the CLIs and adapters: the `node_modules/.bin` holding them.
pub const CLIS_ENV: &str = "AGENT_CHATTER_REAL_CLIS";
/// How long anything here may take before a test gives up: far more than it ever needs.
pub const PATIENCE: Duration = Duration::from_secs(300);
/// The team's timeout: never reached by a run that works.
pub const NO_TIMEOUT_MS: u64 = 600_000;

/// One test's directory, mock and CLIs.
pub struct World {
    pub dir: tempfile::TempDir,
    pub mock: MockModels,
    /// The directory of the installed CLIs ([`CLIS_ENV`]).
    pub bin: PathBuf,
    /// The environment variable marking this suite's processes (its value: `dir`).
    mark_env: &'static str,
}

impl World {
    /// A new world with `subdirs` made, a page (`dist/index.html`) and Gemini set to an API key
    /// (else "Invalid auth method selected", exit 41) with one attempt per request. `None`
    /// (after saying so) when the CLIs are not installed: `cargo xtask test` installs them;
    /// each of `clis` must be there.
    pub fn new(
        test: &str,
        clis: &[&str],
        subdirs: &[&str],
        mark_env: &'static str,
    ) -> Option<World> {
        let Some(bin) = std::env::var_os(CLIS_ENV).map(PathBuf::from) else {
            eprintln!(
                "SKIPPED {test}: {CLIS_ENV} is not set (`cargo xtask test` installs the real \
                 agent CLIs and ACP adapters and sets it)"
            );
            return None;
        };
        for cli in clis {
            assert!(
                bin.join(cli).exists(),
                "{CLIS_ENV}={}: no {cli} there",
                bin.display()
            );
        }
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for sub in ["home/.gemini", "work", "tmp", "dist"]
            .iter()
            .chain(subdirs)
        {
            std::fs::create_dir_all(d.join(sub)).unwrap();
        }
        std::fs::write(
            d.join("dist/index.html"),
            "<!doctype html><title>page</title>",
        )
        .unwrap();
        std::fs::write(
            d.join("home/.gemini/settings.json"),
            json!({"security": {"auth": {"selectedType": "gemini-api-key"}},
                   "general": {"maxAttempts": 1}})
            .to_string(),
        )
        .unwrap();
        Some(World {
            dir,
            mock: MockModels::start(),
            bin,
            mark_env,
        })
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The environment every CLI gets (through the bridge, which passes its own on): nothing
    /// of the machine's but `path`, the mock as every vendor's API, no retries, and this
    /// test's marker. Claude's git context is off: started inside some checkout (CI's TMPDIR
    /// may be one), Claude appends that repository's status after our system part.
    pub fn vendor_env(&self, cmd: &mut Command, path: std::ffi::OsString) {
        let url = self.mock.base_url();
        cmd.env_clear()
            .env("PATH", path)
            .env("HOME", self.path("home"))
            .env("TMPDIR", self.path("tmp"))
            .env("NO_COLOR", "1")
            .env(self.mark_env, self.dir.path())
            .env("ANTHROPIC_BASE_URL", &url)
            .env("ANTHROPIC_API_KEY", "mock-key")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("CLAUDE_CODE_MAX_RETRIES", "0")
            .env("OPENAI_API_KEY", "mock-key")
            .env("GEMINI_API_KEY", "mock-key")
            .env("GOOGLE_GEMINI_BASE_URL", &url);
    }

    /// The processes of this test still running (but `except`): pid and command line.
    pub fn processes(&self, except: &[u32]) -> Vec<(u32, String)> {
        let mark = format!("{}={}", self.mark_env, self.dir.path().display());
        let mut found = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|p| p.parse::<u32>().ok())
            else {
                continue;
            };
            if except.contains(&pid) || !alive(pid) {
                continue;
            }
            let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
                continue;
            };
            if environ.split(|&b| b == 0).any(|v| v == mark.as_bytes()) {
                let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
                let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
                found.push((pid, cmdline.trim().to_string()));
            }
        }
        found
    }

    /// Waits (generously) for every process of this test but `except` to end; returns those
    /// still running then, after killing them (they are this test's own).
    pub fn leftovers(&self, except: &[u32]) -> Vec<(u32, String)> {
        self.left_after_waiting(except, |_| true)
    }

    /// [`World::leftovers`], but for the bridge's own watchdog (`agent-chatter __reap`), which
    /// lives as long as `serve`.
    pub fn leftovers_but_the_watchdog(&self, except: &[u32]) -> Vec<(u32, String)> {
        // `/proc/self/exe __reap MARK`
        self.left_after_waiting(except, |cmd| cmd.split(' ').nth(1) != Some("__reap"))
    }

    fn left_after_waiting(&self, except: &[u32], counts: fn(&str) -> bool) -> Vec<(u32, String)> {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let mut left = self.processes(except);
            left.retain(|(_, cmd)| counts(cmd));
            if left.is_empty() || Instant::now() > deadline {
                for (pid, _) in &left {
                    // SAFETY: kill(2) on a process this test started (it carries the marker).
                    unsafe { libc::kill(*pid as i32, libc::SIGKILL) };
                }
                return left;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for World {
    fn drop(&mut self) {
        for (pid, _) in self.processes(&[]) {
            // SAFETY: kill(2) on a process this test started (it carries the marker).
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
    }
}

/// Whether `pid` runs (a zombie does not).
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(") ")
            .next()
            .is_some_and(|s| !s.starts_with('Z'))
    })
}
