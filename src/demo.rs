//! The simulated agent (docs/architecture.md §14): a pure, deterministic stand-in for an agent CLI,
//! so a new user sees the whole loop — delivery, reply, routing — with no API keys. The page's
//! "simulate" button and the bridge (for agents whose CLI is not installed) both use it.
//!
//! The reply says in words what the agent received — the team task, how many earlier
//! messages it saw, the first words of its `[MESSAGE]` — and passes the turn on: to
//! the next AI member in team order, or to the first human when the agent is the only AI.
//! From round [`MAX_DEMO_ROUNDS`] on (AI deliveries since the last human message) it ends
//! with `[DONE]`, so a simulated conversation always stops.

use std::fmt::Write;

use crate::conversation::Delivery;
use crate::explain::Fate;
use crate::team::{Member, Team};

/// The demo team (a human and three agents, one per prompt format), in our team JSON; the
/// page opens with it and `agent-chatter serve` starts with it when no team is given.
pub(crate) const TEAM_JSON: &str = include_str!("demo-team.json");

/// The first human message of the demo conversation: sets the team task and hands over to
/// the first agent, so a new user sees a routed chain at once.
pub const OPENING_MESSAGE: &str = "[TEAM_TASK: Write the release notes for parser v1] Max, please draft them from the changelog. [NEXT: max]";

/// The demo team, read through the one team reader.
pub fn team() -> Team {
    crate::config::load_team(TEAM_JSON).expect("the embedded demo team is valid (tested)")
}

/// The AI delivery (counted from 1 since the last human message) whose reply says `[DONE]`.
pub const MAX_DEMO_ROUNDS: usize = 4;

/// Words of the current message quoted in the reply.
const QUOTED_WORDS: usize = 8;

/// The simulated reply of `delivery.to`, in a sentence a newcomer reads as a reply: what it
/// read (the team task, how many earlier messages its prompt held, how many were trimmed for
/// the budget, the first words of the message it answers) and whom it passes to. `current` is
/// the stripped text of the delivery's `[MESSAGE]` (the store's view of it); `task` the team
/// task in force; `round` is the delivery's number since the last human message, from 1
/// ([`crate::conversation::Conversation::rounds`] right after it was emitted).
pub fn reply(
    team: &Team,
    delivery: &Delivery,
    current: &str,
    task: Option<&str>,
    round: usize,
) -> String {
    let explain = &delivery.prompt.explain;
    let name = team
        .member(&delivery.to)
        .map_or(delivery.to.as_str(), |m| m.display_name.as_str());
    let mut out = format!("{name} (simulated): I read ");
    if let Some(task) = task.filter(|t| !t.trim().is_empty()) {
        let _ = write!(out, "the task \"{}\", ", first_words(task, QUOTED_WORDS));
    }
    let seen = explain
        .messages
        .iter()
        .filter(|m| matches!(m.fate, Fate::Included | Fate::Pinned))
        .count();
    let earlier = match seen {
        0 => "no earlier messages".to_string(),
        1 => "1 earlier message".to_string(),
        n => format!("{n} earlier messages"),
    };
    let _ = write!(out, "{earlier}");
    let trimmed = explain
        .messages
        .iter()
        .filter(|m| m.fate == Fate::TrimmedForBudget)
        .count();
    if trimmed > 0 {
        let _ = write!(out, " ({trimmed} more left out to fit the budget)");
    }
    let quoted = first_words(current, QUOTED_WORDS);
    let _ = write!(out, " and the message \"{quoted}\". ");
    if round >= MAX_DEMO_ROUNDS {
        out.push_str("That is enough rounds for a demo. [DONE]");
    } else {
        match next_member(team, &delivery.to) {
            Some(next) => {
                let _ = write!(
                    out,
                    "Passing to {}. [NEXT: {}]",
                    next.display_name, next.name
                );
            }
            None => out.push_str("Nobody to pass to. [DONE]"),
        }
    }
    out
}

/// The first `n` words of `text` (whitespace-separated), with `…` when there were more.
fn first_words(text: &str, n: usize) -> String {
    let mut words = text.split_whitespace();
    let mut out: Vec<&str> = words.by_ref().take(n).collect();
    if words.next().is_some() {
        out.push("…");
    }
    out.join(" ")
}

/// The next AI member after `from` in team order (wrapping), else the first human.
fn next_member<'t>(team: &'t Team, from: &str) -> Option<&'t Member> {
    let start = team.members.iter().position(|m| m.id == from).unwrap_or(0);
    let n = team.members.len();
    (1..n)
        .map(|k| &team.members[(start + k) % n])
        .find(|m| m.is_ai())
        .or_else(|| team.humans().next())
}
