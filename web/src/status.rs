//! What each member is doing (docs/architecture.md §14c, *Status*), and what the tab's title
//! says when the user is needed: computed from the session and what the host saw live (when a
//! run started, a retry its CLI reported). Pure, so the tests run without a browser.

use agent_chatter::conversation::Status;
use agent_chatter::message::MemberId;
use agent_chatter::session::{Fact, Failure, Session};
use agent_chatter::usage::{Silence, Spend};

/// A retry the running agent's CLI reported (`retrying` event): shown until its run ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retry {
    pub to: MemberId,
    pub attempt: u32,
    pub max: Option<u32>,
    pub reason: String,
}

/// One member's status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemberStatus {
    Idle,
    /// Its delivery is in flight since `since` (ms since the epoch). `runs`: an agent runs it
    /// (a bridge); otherwise the page waits for the user to answer for it (simulation).
    Running {
        since: u64,
        runs: bool,
        retry: Option<(u32, Option<u32>, String)>,
    },
    /// The last run of this member failed: how (`failed`, `cancelled`, `timed out`: the run's
    /// word, docs/architecture.md §14c), then the full reason.
    Failed {
        reason: String,
    },
    /// The conversation waits for this human.
    Waiting,
    /// Its running agent asks whether it may make a tool call (docs/architecture.md §14d).
    NeedsYou,
    /// Its delivery was in flight when the bridge went away: whether it still runs, and how
    /// it ended, is known only once the bridge is back (nothing is shown as running then).
    Unknown,
}

impl MemberStatus {
    /// What the status reads at `now` (ms): its CSS class, its words, and the full text on hover.
    pub fn words(&self, now: u64) -> (&'static str, String, String) {
        match self {
            MemberStatus::Idle => ("idle", "idle".into(), "nothing to do right now".into()),
            MemberStatus::Running { since, runs, retry } => {
                let how_long = clock(now.saturating_sub(*since));
                let doing = if *runs { "running" } else { "due" };
                match retry {
                    Some((attempt, max, reason)) => {
                        let of = max.map(|m| format!("/{m}")).unwrap_or_default();
                        let text = format!("retrying {attempt}{of} · {how_long}: {reason}");
                        ("retrying", text.clone(), text)
                    }
                    None if *runs => (
                        "running",
                        format!("running · {how_long}"),
                        format!("its agent has been running for {how_long}"),
                    ),
                    None => (
                        "running",
                        format!("{doing} · {how_long}"),
                        "due: answer for it below, or let the simulator answer".into(),
                    ),
                }
            }
            MemberStatus::Failed { reason } => {
                ("failed", reason.clone(), format!("its last run {reason}"))
            }
            MemberStatus::Waiting => (
                "waiting",
                "waiting for this human".into(),
                "the conversation waits for this human to write".into(),
            ),
            MemberStatus::NeedsYou => (
                "needs-you",
                "needs you: approve or reject".into(),
                "its agent asks whether it may make a tool call: answer it in the approval panel"
                    .into(),
            ),
            MemberStatus::Unknown => (
                "unknown",
                "not known: the bridge is disconnected".into(),
                "its run was going when the bridge disconnected; what became of it is known once \
                 the bridge is back"
                    .into(),
            ),
        }
    }
}

/// Who runs the agents, as far as a member's status can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runner {
    /// The page itself (simulation): the delivery in flight is due, waiting for the user.
    Page,
    /// A bridge; while it is away (`connected: false`) a run in flight is not known to run.
    Bridge { connected: bool },
}

/// `member`'s status in `session`: running (or due) while its delivery is in flight (`since`:
/// when the host saw it start; the in-flight delivery's own time else) — not known while the
/// bridge running it is away —, waiting when the conversation waits for it, failed when its
/// last run failed, idle otherwise.
pub fn member_status(
    session: &Session,
    member: &str,
    since: Option<u64>,
    runner: Runner,
    retry: Option<&Retry>,
) -> MemberStatus {
    let conversation = session.conversation();
    if let Some(flight) = conversation.in_flight().filter(|f| f.to == member) {
        let runs = match runner {
            Runner::Page => false,
            Runner::Bridge { connected: false } => return MemberStatus::Unknown,
            Runner::Bridge { connected: true } => true,
        };
        return MemberStatus::Running {
            since: since.unwrap_or(flight.since.0),
            runs,
            retry: retry
                .filter(|r| r.to == member)
                .map(|r| (r.attempt, r.max, r.reason.clone())),
        };
    }
    if conversation.waiting_for() == Some(member) {
        return MemberStatus::Waiting;
    }
    match session.runs().iter().rev().find(|r| r.to == member) {
        Some(run) => match &run.failed {
            Some(reason) => MemberStatus::Failed {
                reason: format!("{}: {reason}", run.outcome()),
            },
            None => MemberStatus::Idle,
        },
        None => MemberStatus::Idle,
    }
}

/// The running ring's position after `ms` of a run (its `data-turn`, style.css): a quarter
/// turn a second, on the clock the run's time is read from.
pub fn ring_turn(ms: u64) -> String {
    (ms / 1000 % 4).to_string()
}

/// `m:ss`, or `h:mm:ss` past an hour.
pub fn clock(ms: u64) -> String {
    let s = ms / 1000;
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// A duration as a person says it: `45 s`, `2 min`, `1 h 30 min`.
pub fn duration_words(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0..60 if ms % 1000 != 0 => format!("{:.1} s", ms as f64 / 1000.0),
        0..60 => format!("{s} s"),
        60..3600 if s % 60 == 0 => format!("{} min", s / 60),
        60..3600 => format!("{} min {} s", s / 60, s % 60),
        _ if s % 3600 == 0 => format!("{} h", s / 3600),
        _ => format!("{} h {} min", s / 3600, s / 60 % 60),
    }
}

/// The runs of `member` (every member's for `None`) and what they cost, in words:
/// `2 runs · 1200 in (1000 cached) · 80 out · $0.0031 · 5.4 s` (`Spend::summary`: a cost
/// that leaves out runs reporting none reads `≥ $…`, and says how many), with `silence` the
/// host's reason when nothing is reported; `None` before any run.
pub fn usage_words(spend: &Spend, silence: Silence) -> Option<String> {
    (spend.runs > 0).then(|| spend.summary_or(silence))
}

/// What the user is needed for, once the latest fact is an agent's outcome: that agent failed
/// (`✗ Max failed`), or it is a human's turn (`● Your turn`). A run the user cancelled is not
/// news to them: only what follows it is. With the count of facts it is about, so it is news
/// only until the user acts.
pub fn attention(session: &Session) -> Option<(usize, String)> {
    let facts = session.facts();
    let name = |id: &str| {
        session
            .team()
            .and_then(|t| t.member(id))
            .map_or_else(|| id.to_string(), |m| m.display_name.clone())
    };
    let text = match facts.last()? {
        Fact::Failed { to, failure, .. } if *failure != Some(Failure::Cancelled) => {
            let word = session.runs().last().map_or("failed", |r| r.outcome());
            format!("✗ {} {word}", name(to))
        }
        Fact::Replied { .. } | Fact::Failed { .. } => {
            let conversation = session.conversation();
            let waits = conversation.in_flight().is_none()
                && (conversation.waiting_for().is_some()
                    || conversation.status() == Status::Completed);
            if !waits {
                return None;
            }
            "● Your turn".to_string()
        }
        _ => return None,
    };
    Some((facts.len(), text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_chatter::conversation::Action;
    use agent_chatter::message::Millis;

    const BRIDGE: Runner = Runner::Bridge { connected: true };

    #[test]
    fn a_run_in_flight_is_due_on_the_page_and_not_known_while_its_bridge_is_away() {
        let s = demo();
        let status = |runner| member_status(&s, "max", Some(5000), runner, None);
        assert_eq!(
            status(Runner::Page),
            MemberStatus::Running {
                since: 5000,
                runs: false,
                retry: None
            }
        );
        assert_eq!(
            status(Runner::Bridge { connected: false }),
            MemberStatus::Unknown
        );
        // Only the one in flight: the others are as the log says.
        assert_eq!(
            member_status(
                &s,
                "kailai",
                None,
                Runner::Bridge { connected: false },
                None
            ),
            MemberStatus::Idle
        );
    }

    fn demo() -> Session {
        let mut s = Session::new();
        s.apply(&Fact::set_team(agent_chatter::demo::team()))
            .unwrap();
        s.apply(&Fact::human("[FROM: kailai] hi [NEXT: max]", Millis(1000)))
            .unwrap();
        while s.poll_action().is_some() {}
        s
    }

    #[test]
    fn a_member_runs_then_fails_and_the_title_says_so() {
        let mut s = demo();
        assert_eq!(
            member_status(&s, "max", Some(5000), BRIDGE, None),
            MemberStatus::Running {
                since: 5000,
                runs: true,
                retry: None
            }
        );
        let retry = Retry {
            to: "max".into(),
            attempt: 2,
            max: Some(10),
            reason: "HTTP 500".into(),
        };
        let status = member_status(&s, "max", None, BRIDGE, Some(&retry));
        assert_eq!(
            status.words(61_000).1,
            "retrying 2/10 · 1:00: HTTP 500",
            "the in-flight delivery's time when the host saw no start"
        );
        assert_eq!(
            member_status(&s, "sarah", None, BRIDGE, None),
            MemberStatus::Idle
        );
        assert_eq!(attention(&s), None);
        s.apply(&Fact::failed(
            "max",
            "claude exited with 1: boom",
            Millis(9000),
        ))
        .unwrap();
        while s.poll_action().is_some() {}
        assert_eq!(
            member_status(&s, "max", None, BRIDGE, Some(&retry)),
            MemberStatus::Failed {
                reason: "failed: claude exited with 1: boom".into()
            }
        );
        assert_eq!(attention(&s), Some((3, "✗ Max failed".into())));
    }

    #[test]
    fn a_cancelled_run_reads_cancelled_in_the_status_and_is_no_news_in_the_title() {
        let mut s = demo();
        s.apply(&agent_chatter::session::Fact::Failed {
            to: "max".into(),
            reason: "cancelled by the user: the agent was stopped".into(),
            at: Millis(2000),
            failure: Some(agent_chatter::session::Failure::Cancelled),
            usage: None,
        })
        .unwrap();
        let status = member_status(&s, "max", None, BRIDGE, None);
        let (_, text, title) = status.words(0);
        assert_eq!(
            text,
            "cancelled: cancelled by the user: the agent was stopped"
        );
        assert_eq!(
            title,
            "its last run cancelled: cancelled by the user: the agent was stopped"
        );
        // The user cancelled it: the title says what follows, the human's turn.
        assert_eq!(attention(&s), Some((3, "● Your turn".into())));
    }

    #[test]
    fn a_reply_that_hands_the_turn_to_a_human_is_news() {
        let mut s = demo();
        s.apply(&Fact::replied("max", "done [NEXT: kailai]", Millis(2000)))
            .unwrap();
        let actions: Vec<Action> = std::iter::from_fn(|| s.poll_action()).collect();
        assert!(!actions.is_empty());
        assert_eq!(
            member_status(&s, "kailai", None, BRIDGE, None),
            MemberStatus::Waiting
        );
        assert_eq!(
            member_status(&s, "max", None, BRIDGE, None),
            MemberStatus::Idle
        );
        assert_eq!(attention(&s), Some((3, "● Your turn".into())));
    }

    #[test]
    fn durations_and_usage_read_as_words() {
        assert_eq!(clock(3_723_000), "1:02:03");
        assert_eq!(clock(59_999), "0:59");
        assert_eq!(duration_words(1_800_000), "30 min");
        assert_eq!(duration_words(90_000), "1 min 30 s");
        assert_eq!(duration_words(1500), "1.5 s");
        assert_eq!(usage_words(&Spend::default(), Silence::NotReported), None);
        let one = Spend {
            runs: 1,
            ..Spend::default()
        };
        assert_eq!(
            usage_words(&one, Silence::NotReported).as_deref(),
            Some("1 run · no usage reported")
        );
        assert_eq!(
            usage_words(&one, Silence::Simulated).as_deref(),
            Some("1 run · the simulator reports no usage")
        );
    }
}
