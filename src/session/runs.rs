//! What the agents' runs did and cost (docs/architecture.md §14c): each run's outcome
//! ([`Run`]), the deliveries they answered, the usage per member and per session, and the
//! cost cap (a team's `maxCostUsd`), whose spend carries over a team change.

use serde::Serialize;

use super::{Fact, Failure, Session};
use crate::message::MemberId;
use crate::usage::{CapStanding, Spend, Usage, Usd};

/// How one agent run ended, as the session recorded it (docs/architecture.md §14c): the page's
/// per-delivery usage, the marks on incomplete replies, the reasons behind failure notices.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Run {
    pub to: MemberId,
    /// Position of the message it ended in: the reply, or the failure's notice.
    pub message: usize,
    pub usage: Option<Usage>,
    /// The CLI's reason the reply may be cut short.
    pub incomplete: Option<String>,
    /// The full reason, when it failed.
    pub failed: Option<String>,
    /// The kind of failure, when its host stated one (a timeout, a cancel, …).
    pub failure: Option<Failure>,
}

impl Run {
    /// How it ended, in the one word the page, `chat` and the transcripts all use for it
    /// (docs/architecture.md §14c): `replied`, `incomplete`, `failed`, `cancelled` or
    /// `timed out`.
    pub fn outcome(&self) -> &'static str {
        match (&self.failed, self.failure) {
            (Some(_), Some(Failure::Cancelled)) => "cancelled",
            (Some(_), Some(Failure::Timeout)) => "timed out",
            (Some(_), _) => "failed",
            (None, _) if self.incomplete.is_some() => "incomplete",
            (None, _) => "replied",
        }
    }

    /// Its host stopped it before its CLI could report (kind `interrupted`): what it cost is
    /// not known, though it reported nothing.
    pub fn cut_short(&self) -> bool {
        self.failure == Some(Failure::Interrupted)
    }

    /// What it reported, as every view and total counts it: a run that did not reply and
    /// reported `$0` (Claude's `result` of a failed run) counted nothing, so its cost is not
    /// reported (`—`, "cost not known"), never `$0.0000`.
    pub fn reported_usage(&self) -> Option<Usage> {
        let mut usage = self.usage?;
        if self.failed.is_some() && usage.cost_usd.is_some_and(|c| c.dollars() == 0.0) {
            usage.cost_usd = None;
        }
        Some(usage)
    }

    /// Whether the message it ended in enters the other agents' later prompts: a reply does,
    /// a failure's notice as [`Failure::reaches_prompts`] says (one of no stated kind does).
    pub fn reaches_prompts(&self) -> bool {
        self.failed.is_none() || self.failure.is_none_or(Failure::reaches_prompts)
    }

    /// What happened to a run that did not reply, as a sentence's verb: `failed`, `was
    /// cancelled` or `timed out` ([`Self::outcome`]'s word), `None` when it replied.
    pub fn failed_verb(&self) -> Option<&'static str> {
        self.failed.as_ref()?;
        Some(match self.failure {
            Some(Failure::Cancelled) => "was cancelled",
            Some(Failure::Timeout) => "timed out",
            _ => "failed",
        })
    }
}

/// Runs, deliveries, usage and the cost cap.
impl Session {
    /// Every run's outcome in this conversation (since the team was set), oldest first.
    pub fn runs(&self) -> &[Run] {
        &self.runs
    }

    /// Every delivery of this conversation (since the team was set) in the order they were
    /// made: the position of its `[MESSAGE]` and its recipient (id). A member's n-th delivery
    /// ended in its n-th run ([`Self::runs`]); one more is in flight.
    pub fn deliveries(&self) -> Vec<(usize, &str)> {
        let mut all: Vec<(usize, usize, usize, &str)> = self
            .deliveries
            .iter()
            .flat_map(|(at, ds)| {
                ds.iter()
                    .enumerate()
                    .map(move |(k, d)| (d.seen, *at, k, d.to.as_str()))
            })
            .collect();
        // Built when `seen` messages were stored: one at a time, so that is their order (the
        // deliveries of one message in the order they were made).
        all.sort_unstable_by_key(|d| (d.0, d.1, d.2));
        all.into_iter().map(|(_, at, _, to)| (at, to)).collect()
    }

    /// How many runs ended before the last team change: counted in [`Self::usage`], not listed
    /// in [`Self::runs`] (their prompts were built by the earlier team).
    pub fn earlier_runs(&self) -> usize {
        self.earlier.iter().map(|(_, spend)| spend.runs).sum()
    }

    /// The run that answered `member`'s prompt whose `[MESSAGE]` is message `at` (its newest
    /// such delivery), once it ended: its first run ending after the delivery was made, as
    /// one runs at a time. `None` while it runs or waits, or with no such delivery.
    pub fn answer(&self, member: &str, at: usize) -> Option<&Run> {
        let seen = self.delivery(member, at)?.seen;
        let from = self.runs.partition_point(|r| r.message < seen);
        self.runs[from..].iter().find(|r| r.to == member)
    }

    /// The run that ended in message `at` (its reply or failure notice), if one did.
    pub fn run_at(&self, at: usize) -> Option<&Run> {
        let i = self.runs.partition_point(|r| r.message < at);
        self.runs.get(i).filter(|r| r.message == at)
    }

    /// What `member`'s runs (every member's, for `None`) have cost in this session, and how
    /// many runs that is: those before the last team change too ([`Self::earlier_runs`]).
    pub fn usage(&self, member: Option<&str>) -> Spend {
        let mut total = Spend::default();
        for (_, spend) in self
            .earlier
            .iter()
            .filter(|(to, _)| member.is_none_or(|m| *to == m))
        {
            total.add(spend);
        }
        for run in self
            .runs
            .iter()
            .filter(|r| member.is_none_or(|m| r.to == m))
        {
            total.add_run(run.reported_usage().as_ref(), run.cut_short());
        }
        total
    }

    /// What each member's runs cost in this session (team changes included), one entry per
    /// member who ran at all, in the order they first ran: the cost view's rows
    /// (docs/architecture.md §14c). Their sum is [`Self::usage`] of every member.
    pub fn usage_by_member(&self) -> Vec<(MemberId, Spend)> {
        let mut all: Vec<(MemberId, Spend)> = self.earlier.clone();
        for run in &self.runs {
            let i = match all.iter().position(|(to, _)| *to == run.to) {
                Some(i) => i,
                None => {
                    all.push((run.to.clone(), Spend::default()));
                    all.len() - 1
                }
            };
            all[i]
                .1
                .add_run(run.reported_usage().as_ref(), run.cut_short());
        }
        all
    }

    /// Tells the conversation what the runs have cost so far, this one included, before it
    /// decides whether another delivery may start (a team's `maxCostUsd`); returns what it was
    /// before, to put back should the fact be refused.
    pub(super) fn count_cost(&mut self, usage: Option<&Usage>) -> Usd {
        let before = self.conversation.spent();
        let mut crossed = None;
        if let Some(cost) = usage.and_then(|u| u.cost_usd) {
            let after = Usd::new(before.dollars() + cost.dollars()).unwrap_or(before);
            self.conversation.set_spent(after);
            // The run started under the cap and ended above it: by how much it passed it.
            let cap = self.team().and_then(|t| t.settings.max_cost_usd);
            crossed = cap
                .filter(|cap| before < *cap && after > *cap)
                .and_then(|cap| Some((cap, Usd::new(after.dollars() - cap.dollars())?)));
        }
        self.conversation.set_last_run_crossed(crossed);
        before
    }

    /// What is left under the team's cost cap (`maxCostUsd`, "max cost $") for the next run:
    /// the cap less what the runs cost so far (team changes included), never below zero.
    /// `None` with no cap. A host gives it to a CLI that can stop itself at a budget (Claude
    /// Code's `--max-budget-usd`), so the run that crosses the cap stops near it.
    pub fn cap_left(&self) -> Option<Usd> {
        self.cap_standing().map(CapStanding::left)
    }

    /// Where the runs stand against the team's cost cap; `None` with no cap. What every view
    /// says of the cap ("reached", what is left, how far past it) reads this, the standing the
    /// conversation itself stops deliveries by.
    pub fn cap_standing(&self) -> Option<CapStanding> {
        Some(CapStanding {
            cap: self.team()?.settings.max_cost_usd?,
            spent: self.conversation.spent(),
        })
    }

    /// What the cap of a new team starts from: what was spent so far (nothing for a log
    /// written when the cap started over with each team).
    pub(super) fn carried_spend(&self) -> Usd {
        if self.cap_resets_on_team_change {
            Usd::default()
        } else {
            self.conversation.spent()
        }
    }

    /// Whether `fact` is an outcome for a member not running, after a team change carried the
    /// spend: the mark of a log that went past its cap when each team's cap started over.
    pub(super) fn stopped_by_carried_cap(&self, fact: &Fact) -> bool {
        let (Fact::Replied { to, .. } | Fact::Failed { to, .. }) = fact else {
            return false;
        };
        !self.cap_resets_on_team_change
            && !self.earlier.is_empty()
            && self.conversation.in_flight().is_none_or(|f| f.to != *to)
    }

    /// Counts the runs so far among the earlier ones, and starts the list of runs afresh: a
    /// new team's deliveries pair with its own runs.
    pub(super) fn set_runs_aside(&mut self) {
        for run in std::mem::take(&mut self.runs) {
            let i = match self.earlier.iter().position(|(to, _)| *to == run.to) {
                Some(i) => i,
                None => {
                    self.earlier.push((run.to.clone(), Spend::default()));
                    self.earlier.len() - 1
                }
            };
            self.earlier[i]
                .1
                .add_run(run.reported_usage().as_ref(), run.cut_short());
        }
    }

    pub(super) fn record_run(
        &mut self,
        to: &str,
        message: &crate::message::MessageId,
        usage: Option<Usage>,
        incomplete: Option<String>,
        failed: Option<(String, Option<Failure>)>,
    ) {
        if let Some(message) = self.store().position(message) {
            let (failed, failure) = failed.unzip();
            self.runs.push(Run {
                to: to.to_string(),
                message,
                usage,
                incomplete,
                failed,
                failure: failure.flatten(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_runs_zero_cost_is_not_counted_as_a_price() {
        let zero = Usage {
            cost_usd: Usd::new(0.0),
            duration_ms: Some(300),
            ..Usage::default()
        };
        let run = |failed: Option<&str>| Run {
            to: "max".into(),
            message: 1,
            usage: Some(zero),
            incomplete: None,
            failed: failed.map(str::to_string),
            failure: None,
        };
        let mut spend = Spend::default();
        spend.add_run(run(Some("auth")).reported_usage().as_ref(), false);
        assert_eq!(spend.cost(), None, "no $0.0000 for a failed run");
        assert_eq!(spend.unpriced, 1);
        assert_eq!(run(None).reported_usage(), Some(zero), "a reply's $0 stays");
    }
}
