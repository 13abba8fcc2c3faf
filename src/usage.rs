//! What agent runs cost (docs/architecture.md §14c): tokens, dollars and time as each CLI reports
//! them in its final event, recorded with the run's outcome fact and summed per member and per
//! conversation. Every figure is optional: a CLI reports what it knows (Codex no cost, a crash
//! nothing), and a sum never invents what was not reported.

use serde::{Serialize, Serializer};

use crate::json::{self, FieldError, Path};

/// An amount in US dollars, as a CLI reports it (`total_cost_usd`). Always finite and not
/// negative (the reader refuses anything else), so it compares as a value.
#[derive(Debug, Clone, Copy, Default, PartialOrd)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Usd(f64);

impl Usd {
    /// `None` for a negative, infinite or NaN amount: no CLI reports one.
    pub fn new(dollars: f64) -> Option<Usd> {
        (dollars.is_finite() && dollars >= 0.0).then_some(Usd(dollars))
    }

    pub fn dollars(self) -> f64 {
        self.0
    }

    /// `$0.0123`: four decimals below a dollar (runs cost cents), two above.
    pub fn display(self) -> String {
        if self.0 < 1.0 {
            format!("${:.4}", self.0)
        } else {
            format!("${:.2}", self.0)
        }
    }

    /// A limit the user set (`maxCostUsd`) exactly as it is, written as money: `$0.50`,
    /// `$0.125`, `$5.00`, `$0.00005` (never rounded: a cap shown above what it is would read
    /// "reached" before it was).
    pub fn display_limit(self) -> String {
        // Rust's shortest form that reads back as the same number, never an exponent.
        let exact = self.0.to_string();
        match exact.split_once('.') {
            Some((_, decimals)) if decimals.len() >= 2 => format!("${exact}"),
            Some(_) => format!("${exact}0"),
            None => format!("${exact}.00"),
        }
    }
}

impl PartialEq for Usd {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

// Finite by construction, so equality is reflexive.
impl Eq for Usd {}

/// Read back from a notice or a protocol frame; a value no CLI reports is refused.
impl<'de> serde::Deserialize<'de> for Usd {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let dollars = f64::deserialize(d)?;
        Usd::new(dollars).ok_or_else(|| {
            serde::de::Error::custom(format!("{dollars} is not an amount of dollars"))
        })
    }
}

impl Serialize for Usd {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.0)
    }
}

/// Where the runs stand against a team's cost cap (`maxCostUsd`, "max cost $"): the cap and
/// what counts toward it. "Reached" is the conversation's own rule (no AI delivery starts once
/// what counts is at the cap or past it), read here by every host and view, so none can say
/// otherwise than what the conversation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CapStanding {
    pub cap: Usd,
    /// What the runs cost so far that counts toward the cap (team changes included).
    pub spent: Usd,
}

impl CapStanding {
    /// At the cap or past it: no agent is given a message until the cap is raised.
    pub fn reached(self) -> bool {
        self.spent >= self.cap
    }

    /// What is left under the cap, never below zero.
    pub fn left(self) -> Usd {
        Usd::new((self.cap.0 - self.spent.0).max(0.0)).unwrap_or_default()
    }

    /// How far past the cap the runs went (a run that started under it is not stopped by it);
    /// `None` at the cap or under it.
    pub fn past(self) -> Option<Usd> {
        (self.spent > self.cap).then_some(Usd(self.spent.0 - self.cap.0))
    }
}

/// What one run cost, as far as its CLI said. In JSON (camelCase, absent figures left out):
/// `{"inputTokens": 1200, "outputTokens": 80, "cachedTokens": 1000, "costUsd": 0.0031,
/// "durationMs": 5400}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(optional_fields))]
pub struct Usage {
    /// Tokens read, cached ones included.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// Of the input, tokens read from the provider's prompt cache.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<Usd>,
    /// How long the run took (the CLI's own figure, else the host's clock).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

impl Usage {
    /// Nothing was reported.
    pub fn is_empty(&self) -> bool {
        *self == Usage::default()
    }

    /// Adds `other` figure by figure; a figure stays absent only when neither reported it.
    pub fn add(&mut self, other: &Usage) {
        fn sum(a: &mut Option<u64>, b: Option<u64>) {
            if let Some(b) = b {
                *a = Some(a.unwrap_or(0).saturating_add(b));
            }
        }
        sum(&mut self.input_tokens, other.input_tokens);
        sum(&mut self.output_tokens, other.output_tokens);
        sum(&mut self.cached_tokens, other.cached_tokens);
        sum(&mut self.duration_ms, other.duration_ms);
        if let Some(b) = other.cost_usd {
            let a = self.cost_usd.map_or(0.0, Usd::dollars);
            self.cost_usd = Usd::new(a + b.dollars()).or(self.cost_usd);
        }
    }

    /// One line a person reads: `1200 in (1000 cached) · 80 out · $0.0031 · 5.4 s`; the
    /// figures not reported are left out, and nothing reported reads `no usage reported`.
    pub fn summary(&self) -> String {
        self.summary_or(Silence::NotReported)
    }

    /// [`Self::summary`], nothing reported said as `silence` gives the reason.
    pub fn summary_or(&self, silence: Silence) -> String {
        joined(self.figures(self.cost_usd.map(Usd::display)), silence)
    }

    /// The reported figures in words, in order, with `cost` as the cost's.
    fn figures(&self, cost: Option<String>) -> Vec<String> {
        let mut parts = Vec::new();
        if let Some(i) = self.input_tokens {
            parts.push(match self.cached_tokens {
                Some(c) if c > 0 => format!("{i} in ({c} cached)"),
                _ => format!("{i} in"),
            });
        } else if let Some(c) = self.cached_tokens {
            parts.push(format!("{c} cached"));
        }
        if let Some(o) = self.output_tokens {
            parts.push(format!("{o} out"));
        }
        parts.extend(cost);
        if let Some(ms) = self.duration_ms {
            parts.push(format!("{:.1} s", ms as f64 / 1000.0));
        }
        parts
    }
}

/// Why runs report no figures, as the host that ran them knows it: said in place of figures, so
/// a reader can tell a CLI that kept quiet from a simulator that has nothing to report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Silence {
    /// Their CLIs reported nothing (or there is no telling why).
    #[default]
    NotReported,
    /// The simulator answered them: it has no tokens, cost or time to report.
    Simulated,
}

impl Silence {
    /// The reason in words: `no usage reported`, `the simulator reports no usage`.
    pub fn words(self) -> &'static str {
        match self {
            Silence::NotReported => "no usage reported",
            Silence::Simulated => "the simulator reports no usage",
        }
    }
}

/// `parts` joined with ` · `, or why there are none.
fn joined(parts: Vec<String>, silence: Silence) -> String {
    if parts.is_empty() {
        silence.words().to_string()
    } else {
        parts.join(" · ")
    }
}

/// What a set of runs cost (docs/architecture.md §14c): the figures they reported, summed, how
/// many runs that is, and how many of them reported figures but no cost (Codex and Gemini
/// report none). The dollar total leaves those out, so with any of them it is a floor, and is
/// shown as one: a total that silently undercounts would mislead the person paying.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Spend {
    pub usage: Usage,
    pub runs: usize,
    /// Runs whose cost is not known: they reported usage without a cost, or were cut short
    /// before reporting (interrupted). (A run reporting nothing, such as a simulated one or one
    /// that could not start, cost nothing.)
    pub unpriced: usize,
}

impl Spend {
    /// Counts one run and what it reported. `cut_short`: its host stopped it before its CLI
    /// could report anything (an interrupted run), so its cost is not known either.
    pub fn add_run(&mut self, usage: Option<&Usage>, cut_short: bool) {
        self.runs += 1;
        if let Some(u) = usage {
            self.usage.add(u);
        }
        // A run that reported usage ran a CLI (a host times only those); without a cost, its
        // cost is not known.
        let ran_unpriced = usage.is_some_and(|u| !u.is_empty() && u.cost_usd.is_none());
        if cut_short || ran_unpriced {
            self.unpriced += 1;
        }
    }

    /// Adds the runs of `other`.
    pub fn add(&mut self, other: &Spend) {
        self.usage.add(&other.usage);
        self.runs += other.runs;
        self.unpriced += other.unpriced;
    }

    /// The cost as a person should read it: `$0.0123`, or `≥ $0.0123` when some runs reported
    /// no cost; `None` when no run reported one.
    pub fn cost(&self) -> Option<String> {
        let cost = self.usage.cost_usd?.display();
        Some(if self.unpriced > 0 {
            format!("≥ {cost}")
        } else {
            cost
        })
    }

    /// The cost in a few words, for a line that has room for no more: [`Self::cost`], else
    /// `cost not known` when some run's cost is not, else why nothing was reported.
    pub fn cost_or(&self, silence: Silence) -> String {
        self.cost().unwrap_or_else(|| {
            if self.unpriced > 0 {
                "cost not known".to_string()
            } else {
                silence.words().to_string()
            }
        })
    }

    /// The summed figures in words, the cost as [`Self::cost`] gives it:
    /// `1200 in · 80 out · ≥ $0.0031 · 5.4 s`, or `no usage reported`.
    pub fn figures(&self) -> String {
        self.figures_or(Silence::NotReported)
    }

    /// [`Self::figures`], nothing reported said as `silence` gives the reason.
    pub fn figures_or(&self, silence: Silence) -> String {
        joined(self.usage.figures(self.cost()), silence)
    }

    /// `N runs · <figures>`, and how many runs' cost is not known when some is not:
    /// `3 runs · 1200 in · 80 out · ≥ $0.0031 · 5.4 s (cost of 2 runs not known)`;
    /// `no runs yet` for none.
    pub fn summary(&self) -> String {
        self.summary_or(Silence::NotReported)
    }

    /// [`Self::summary`], nothing reported said as `silence` gives the reason:
    /// `2 runs · the simulator reports no usage`.
    pub fn summary_or(&self, silence: Silence) -> String {
        if self.runs == 0 {
            return "no runs yet".to_string();
        }
        let mut text = format!("{} · {}", runs_word(self.runs), self.figures_or(silence));
        match self.unpriced {
            0 => {}
            n if n == self.runs => text.push_str(" (cost not known)"),
            1 => text.push_str(" (cost of 1 run not known)"),
            n => text.push_str(&format!(" (cost of {n} runs not known)")),
        }
        text
    }
}

/// `1 run`, `3 runs`.
pub fn runs_word(runs: usize) -> String {
    if runs == 1 {
        "1 run".to_string()
    } else {
        format!("{runs} runs")
    }
}

/// Reads a fact's `usage` object by the rules of every reader here: `null` is absent, unknown
/// keys are ignored, an error names the path (`facts[4].usage.costUsd: …`).
pub(crate) fn usage_at(value: &serde_json::Value, path: &Path<'_>) -> Result<Usage, FieldError> {
    let obj = json::object(value, *path)?;
    let cost_usd = match obj.get("costUsd") {
        None => None,
        Some(v) => {
            let path = path.key("costUsd");
            let dollars = v
                .as_f64()
                .ok_or_else(|| path.wrong_type("a number of dollars", v))?;
            Some(
                Usd::new(dollars)
                    .ok_or_else(|| path.invalid(format!("{dollars} is not an amount")))?,
            )
        }
    };
    Ok(Usage {
        input_tokens: obj.opt_u64("inputTokens")?,
        output_tokens: obj.opt_u64("outputTokens")?,
        cached_tokens: obj.opt_u64("cachedTokens")?,
        cost_usd,
        duration_ms: obj.opt_u64("durationMs")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cap_is_reached_at_it_or_past_it_and_says_what_is_left_or_how_far_past() {
        let usd = |d| Usd::new(d).unwrap();
        for (cap, spent, reached, left, past) in [
            (0.5, 0.0, false, 0.5, None),
            (0.5, 0.25, false, 0.25, None),
            (0.5, 0.5, true, 0.0, None),
            (0.5, 0.75, true, 0.0, Some(0.25)),
        ] {
            let standing = CapStanding {
                cap: usd(cap),
                spent: usd(spent),
            };
            assert_eq!(standing.reached(), reached, "{standing:?}");
            assert_eq!(standing.left(), usd(left), "{standing:?}");
            assert_eq!(standing.past(), past.map(usd), "{standing:?}");
        }
    }

    #[test]
    fn a_limit_reads_exactly_as_set_with_two_decimals_at_least() {
        for (dollars, shown) in [
            (0.5, "$0.50"),
            (0.125, "$0.125"),
            (5.0, "$5.00"),
            (12.5, "$12.50"),
            (0.0031, "$0.0031"),
            (0.00005, "$0.00005"),
            (0.12345, "$0.12345"),
            (1234.5, "$1234.50"),
            (0.1, "$0.10"),
            (0.0, "$0.00"),
        ] {
            assert_eq!(Usd::new(dollars).unwrap().display_limit(), shown);
        }
    }

    #[test]
    fn sums_keep_unreported_figures_absent() {
        let mut total = Usage::default();
        total.add(&Usage {
            input_tokens: Some(100),
            cost_usd: Usd::new(0.5),
            ..Usage::default()
        });
        total.add(&Usage {
            input_tokens: Some(20),
            output_tokens: Some(7),
            ..Usage::default()
        });
        assert_eq!(total.input_tokens, Some(120));
        assert_eq!(total.output_tokens, Some(7));
        assert_eq!(total.cached_tokens, None);
        assert_eq!(total.cost_usd, Usd::new(0.5));
        assert_eq!(total.summary(), "120 in · 7 out · $0.5000");
        assert_eq!(Usage::default().summary(), "no usage reported");
    }

    #[test]
    fn a_spend_with_runs_that_report_no_cost_says_its_total_is_a_floor() {
        let claude = Usage {
            input_tokens: Some(100),
            cost_usd: Usd::new(0.5),
            duration_ms: Some(2000),
            ..Usage::default()
        };
        let codex = Usage {
            input_tokens: Some(20),
            output_tokens: Some(7),
            duration_ms: Some(1000),
            ..Usage::default()
        };
        // (the runs' usage, the summary, the cost)
        type Case<'a> = (&'a [Option<&'a Usage>], &'a str, Option<&'a str>);
        let cases: &[Case] = &[
            (&[], "no runs yet", None),
            (&[None], "1 run · no usage reported", None),
            (
                &[Some(&claude)],
                "1 run · 100 in · $0.5000 · 2.0 s",
                Some("$0.5000"),
            ),
            (
                &[Some(&claude), Some(&codex)],
                "2 runs · 120 in · 7 out · ≥ $0.5000 · 3.0 s (cost of 1 run not known)",
                Some("≥ $0.5000"),
            ),
            (
                &[Some(&codex), Some(&codex)],
                "2 runs · 40 in · 14 out · 2.0 s (cost not known)",
                None,
            ),
            (
                &[Some(&codex), Some(&codex), Some(&claude), None],
                "4 runs · 140 in · 14 out · ≥ $0.5000 · 4.0 s (cost of 2 runs not known)",
                Some("≥ $0.5000"),
            ),
        ];
        for (runs, summary, cost) in cases {
            let mut spend = Spend::default();
            for usage in *runs {
                spend.add_run(*usage, false);
            }
            assert_eq!(spend.summary(), *summary);
            assert_eq!(spend.cost().as_deref(), *cost, "{summary}");
        }
        // The host says why nothing was reported; a figure or an unknown cost outranks it.
        let mut simulated = Spend::default();
        simulated.add_run(None, false);
        simulated.add_run(None, false);
        assert_eq!(
            simulated.summary_or(Silence::Simulated),
            "2 runs · the simulator reports no usage"
        );
        assert_eq!(simulated.summary(), "2 runs · no usage reported");
        assert_eq!(
            simulated.cost_or(Silence::Simulated),
            "the simulator reports no usage"
        );
        assert_eq!(simulated.cost_or(Silence::NotReported), "no usage reported");
        let mut unknown = Spend::default();
        unknown.add_run(None, true);
        assert_eq!(unknown.cost_or(Silence::Simulated), "cost not known");
        let mut priced = Spend::default();
        priced.add_run(Some(&claude), false);
        assert_eq!(priced.cost_or(Silence::Simulated), "$0.5000");
        assert_eq!(
            priced.summary_or(Silence::Simulated),
            "1 run · 100 in · $0.5000 · 2.0 s"
        );
        // An interrupted run reported nothing, yet its cost is not known.
        let mut spend = Spend::default();
        spend.add_run(Some(&claude), false);
        spend.add_run(None, true);
        assert_eq!(
            spend.summary(),
            "2 runs · 100 in · ≥ $0.5000 · 2.0 s (cost of 1 run not known)"
        );
    }

    #[test]
    fn a_usage_object_reads_back_as_written_and_bad_figures_are_named() {
        let usage = Usage {
            input_tokens: Some(1200),
            output_tokens: Some(80),
            cached_tokens: Some(1000),
            cost_usd: Usd::new(0.0031),
            duration_ms: Some(5400),
        };
        let text = serde_json::to_string(&usage).unwrap();
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            text,
            r#"{"inputTokens":1200,"outputTokens":80,"cachedTokens":1000,"costUsd":0.0031,"durationMs":5400}"#
        );
        assert_eq!(usage_at(&json, &Path::Root).unwrap(), usage);
        assert_eq!(
            usage.summary(),
            "1200 in (1000 cached) · 80 out · $0.0031 · 5.4 s"
        );
        for (text, want) in [
            (
                r#"{"costUsd": "1"}"#,
                r#"costUsd: expected a number of dollars, found the string "1""#,
            ),
            (r#"{"costUsd": -1}"#, "costUsd: -1 is not an amount"),
            (
                r#"{"inputTokens": 1.5}"#,
                "inputTokens: expected a non-negative integer, found 1.5",
            ),
        ] {
            let v: serde_json::Value = serde_json::from_str(text).unwrap();
            assert_eq!(
                usage_at(&v, &Path::Root).unwrap_err().to_string(),
                want,
                "{text}"
            );
        }
    }
}
