//! What the terminal shows of the conversation: each fact as a line (a reply, a failure, a
//! `[FROM]` credited, a team task set), what the conversation says back (notices, whose turn
//! it is, `[DONE]`), the bell for what a person waits for, and `/cost`. Pure: the hub hands
//! each fact with the session before and after it ([`Lines`]); [`super`] prints the lines.

use agent_chatter::conversation::Action;
use agent_chatter::markers;
use agent_chatter::session::{Fact, Failure, Session};

use crate::hub::{AfterFact, Observer, Said};

/// What the chat prints of a fact needs of the session as it was before it.
pub(super) struct Prior {
    team_task: Option<String>,
    /// The human whose turn it was.
    waiting_for: Option<String>,
}

impl Prior {
    pub(super) fn of(session: &Session) -> Prior {
        Prior {
            team_task: session.store().team_task().map(str::to_string),
            waiting_for: session.conversation().waiting_for().map(str::to_string),
        }
    }
}

/// What the hub tells the chat to print ([`Hub::report`]): of each fact, from the hub's own
/// session just before and after it, and of the notices pending when the chat starts. So the
/// chat keeps no session of its own (docs/architecture.md §14, "Memory").
pub(super) struct Lines;

impl Observer for Lines {
    fn before(&self, session: &Session) -> AfterFact {
        let prior = Prior::of(session);
        Box::new(move |fact: &Fact, session: &Session, actions: &[Action]| {
            said_of_fact(&prior, fact, session, actions)
        })
    }

    fn pending(&self, session: &Session, actions: &[Action]) -> Vec<Said> {
        said_of_notices(session, actions)
    }
}

/// A fact as the terminal shows it ([`print_fact`]), with what the conversation said back.
pub(super) fn said_of_fact(
    prior: &Prior,
    fact: &Fact,
    session: &Session,
    actions: &[Action],
) -> Vec<Said> {
    let mut said = Vec::new();
    if wants_attention(fact, session) {
        said.push(Said::Bell);
    }
    print_fact(&mut said, fact, session, prior);
    for action in actions {
        print_action(&mut said, action, session);
    }
    said
}

/// The notices among `actions`: deliveries are the hub's to perform and whose turn it is shows
/// after the banner; what the conversation said when its team was set (an agent type it does
/// not know) is news.
fn said_of_notices(session: &Session, actions: &[Action]) -> Vec<Said> {
    let mut said = Vec::new();
    for action in actions {
        if let Action::Notice(_) = action {
            print_action(&mut said, action, session);
        }
    }
    said
}

pub(super) fn name_of(id: &str, session: &Session) -> String {
    session
        .team()
        .and_then(|t| t.member(id))
        .map_or(id.to_string(), |m| m.display_name.clone())
}

/// One fact as the terminal shows it: an agent's reply or failure, a new team task, and a
/// human message that named its sender with `[FROM]`, to confirm whom it is credited to
/// (`→ bob: … (buzzing in)` when it was another human's turn: `[FROM]` took it), as
/// docs/architecture.md §19 (seed 004) shows it. `session` is as it is after the fact.
fn print_fact(said: &mut Vec<Said>, fact: &Fact, session: &Session, before: &Prior) {
    let mut out = |line: String| said.push(Said::Out(line));
    let mut warnings = Vec::new();
    match fact {
        Fact::Human { text, .. } if markers::parse(text).from.is_some() => {
            if let Some(speaker) = session.messages().last().map(|m| &m.speaker) {
                let buzzing_in = before
                    .waiting_for
                    .as_deref()
                    .is_some_and(|w| w != speaker.id);
                out(format!(
                    "→ {}: {}{}",
                    speaker.name,
                    markers::strip_all(text),
                    if buzzing_in { " (buzzing in)" } else { "" }
                ));
            }
        }
        Fact::Replied {
            to,
            text,
            incomplete,
            ..
        } => {
            out(format!("→ {} (AI): {text}", name_of(to, session)));
            if let Some(reason) = incomplete {
                warnings.push(format!(
                    "Warning: {}'s reply may be incomplete: {reason}",
                    name_of(to, session)
                ));
            }
        }
        Fact::Failed { to, reason, .. } => {
            // The run's own word (failed, was cancelled, timed out), as the page says it
            // (docs/architecture.md §14c).
            let verb = session.runs().last().and_then(|r| r.failed_verb());
            let (name, verb) = (name_of(to, session), verb.unwrap_or("failed"));
            warnings.push(format!("Error: {name}'s run {verb}: {reason}"));
        }
        _ => {}
    }
    said.extend(warnings.into_iter().map(Said::Err));
    let task = session.store().team_task();
    if task != before.team_task.as_deref() {
        match task {
            Some(task) => said.push(Said::Out(format!("✓ Team task set: \"{task}\""))),
            None if !matches!(fact, Fact::SetTeam { .. }) => {
                said.push(Said::Out("✓ Team task cleared".to_string()))
            }
            None => {}
        }
    }
}

/// What the conversation says back after a fact; deliveries show as the spinner instead.
fn print_action(said: &mut Vec<Said>, action: &Action, session: &Session) {
    match action {
        Action::Notice(notice) => {
            said.push(Said::Err(format!("Warning: {}", session.describe(notice))))
        }
        Action::AwaitHuman { member } => said.push(Said::Out(format!(
            "Waiting for {}",
            name_of(member, session)
        ))),
        Action::Finished => said.push(Said::Out(
            "✓ Conversation completed ([DONE]); a new message starts it again".to_string(),
        )),
        Action::Deliver(_) => {}
    }
}

/// Whether `fact`, applied to `session`, is one a person waits for: an agent's failure (not a
/// run the user cancelled: they know), or a reply that hands the turn to a human.
fn wants_attention(fact: &Fact, session: &Session) -> bool {
    match fact {
        Fact::Failed { failure, .. } => *failure != Some(Failure::Cancelled),
        Fact::Replied { text, .. } => {
            let team = session.team();
            markers::parse(text).next.iter().any(|n| {
                team.and_then(|t| t.find(&n.name))
                    .is_some_and(|m| !m.is_ai())
            })
        }
        _ => false,
    }
}

/// `/cost`: what each member's runs cost in this conversation, and the total
/// (docs/architecture.md §14c); `None` before a team is set.
pub(super) fn cost_report(session: &Session) -> Option<String> {
    let team = session.team()?;
    let mut lines = vec!["Usage in this conversation:".to_string()];
    for member in team.members.iter().filter(|m| m.is_ai()) {
        let spend = session.usage(Some(&member.id));
        lines.push(format!("  {}: {}", member.display_name, spend.summary()));
    }
    let total = session.usage(None);
    lines.push(format!("  total: {}", total.summary()));
    if let Some(standing) = session.cap_standing() {
        // The cap can only count what was reported (docs/architecture.md §14c).
        let counts = if total.unpriced > 0 {
            " (it counts reported costs only)"
        } else {
            ""
        };
        let stands = match (standing.reached(), standing.past()) {
            (false, _) => format!("{} left", standing.left().display()),
            (true, Some(past)) => format!(
                "reached, {} past it: no agent is given a message until it is raised",
                past.display()
            ),
            (true, None) => "reached: no agent is given a message until it is raised".into(),
        };
        lines.push(format!(
            "  cap (maxCostUsd): {}: {stands}{counts}",
            standing.cap.display_limit()
        ));
    }
    Some(lines.join("\n"))
}
