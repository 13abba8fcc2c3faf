//! Named, timed steps with banners and a one-line summary, so a CI log shows at a glance which
//! step failed and where the time went.

use std::time::{Duration, Instant};

enum Outcome {
    Passed(Duration),
    Failed(Duration),
    Skipped(String),
}

/// The steps of one command, in the order they ran.
pub struct Steps {
    command: &'static str,
    done: Vec<(String, Outcome)>,
    started: Instant,
}

impl Steps {
    pub fn new(command: &'static str) -> Steps {
        Steps {
            command,
            done: Vec::new(),
            started: Instant::now(),
        }
    }

    /// Runs one step between banners; an error is returned as is, after a FAILED banner.
    pub fn run(
        &mut self,
        name: &str,
        step: impl FnOnce() -> Result<(), String>,
    ) -> Result<(), String> {
        eprintln!("\n==> xtask {}: {name}", self.command);
        let start = Instant::now();
        let result = step();
        let took = start.elapsed();
        match &result {
            Ok(()) => {
                eprintln!("==> ok: {name} ({})", format_duration(took));
                self.done.push((name.to_string(), Outcome::Passed(took)));
            }
            Err(message) => {
                eprintln!(
                    "\n==> FAILED: {name} after {}\n    {message}",
                    format_duration(took)
                );
                self.done.push((name.to_string(), Outcome::Failed(took)));
            }
        }
        result
    }

    /// Records a step that does not apply yet (its files do not exist), with the reason.
    pub fn skip(&mut self, name: &str, reason: &str) {
        eprintln!("\n==> xtask {}: {name}: skipped ({reason})", self.command);
        self.done
            .push((name.to_string(), Outcome::Skipped(reason.to_string())));
    }

    /// `xtask test: ok in 1m02s | setup 0.4s, fmt 0.3s, … | skipped: wasm tests (no wasm/Cargo.toml)`.
    pub fn summary(&self) -> String {
        let failed = self
            .done
            .iter()
            .any(|(_, o)| matches!(o, Outcome::Failed(_)));
        let ran: Vec<String> = self
            .done
            .iter()
            .filter_map(|(name, outcome)| match outcome {
                Outcome::Passed(d) => Some(format!("{name} {}", format_duration(*d))),
                Outcome::Failed(d) => Some(format!("{name} FAILED {}", format_duration(*d))),
                Outcome::Skipped(_) => None,
            })
            .collect();
        let skipped: Vec<String> = self
            .done
            .iter()
            .filter_map(|(name, outcome)| match outcome {
                Outcome::Skipped(reason) => Some(format!("{name} ({reason})")),
                _ => None,
            })
            .collect();
        let mut line = format!(
            "xtask {}: {} in {} | {}",
            self.command,
            if failed { "FAILED" } else { "ok" },
            format_duration(self.started.elapsed()),
            ran.join(", ")
        );
        if !skipped.is_empty() {
            line.push_str(" | skipped: ");
            line.push_str(&skipped.join(", "));
        }
        line
    }
}

/// `0.42s`, `12.3s`, `2m05s`.
pub fn format_duration(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs < 10.0 {
        format!("{secs:.2}s")
    } else if secs < 60.0 {
        format!("{secs:.1}s")
    } else {
        let whole = d.as_secs();
        format!("{}m{:02}s", whole / 60, whole % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_short_and_readable() {
        let cases = [
            (Duration::from_millis(420), "0.42s"),
            (Duration::from_millis(12_340), "12.3s"),
            (Duration::from_secs(125), "2m05s"),
        ];
        for (d, want) in cases {
            assert_eq!(format_duration(d), want);
        }
    }

    #[test]
    fn summary_lists_ran_steps_then_skipped_ones() {
        let mut steps = Steps::new("test");
        steps.run("fmt", || Ok(())).expect("ok");
        steps.skip("wasm tests", "no wasm/Cargo.toml");
        let line = steps.summary();
        assert!(line.starts_with("xtask test: ok in "), "{line}");
        assert!(line.contains("| fmt "), "{line}");
        assert!(
            line.ends_with("| skipped: wasm tests (no wasm/Cargo.toml)"),
            "{line}"
        );
    }

    #[test]
    fn summary_reports_a_failed_step() {
        let mut steps = Steps::new("test");
        let result = steps.run("clippy", || Err("`cargo clippy` failed".to_string()));
        assert!(result.is_err());
        let line = steps.summary();
        assert!(line.starts_with("xtask test: FAILED in "), "{line}");
        assert!(line.contains("clippy FAILED"), "{line}");
    }
}
