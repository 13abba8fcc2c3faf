//! Debug diagnostics (docs/architecture.md §14; seed 004's `[Debug]` lines, seed 001 §7's
//! `[ContextManager]` ones): with `--debug` or `AGENT_CHATTER_LOG=debug`, what the session did
//! with each fact goes to stderr through `tracing`, never into a prompt or onto stdout.
//!
//! The core stays sans-IO and logs nothing: every line here is derived, after a fact is
//! applied, from what the core exposes — the stored message (speaker, routing), the awaited
//! human before the fact (how the sender was resolved), the queue (`pending`), the actions
//! drained (`Deliver` → `Processing max (ai)`, `AwaitHuman` → `Paused for human …`) and the
//! explain of each prompt delivered (deduplicated messages). Without the switch no subscriber
//! is installed and [`before`] returns `None`: nothing is computed.

use std::io::IsTerminal;

use agent_chatter::conversation::{Action, Notice};
use agent_chatter::explain::{BudgetStatus, DedupReason, Fate};
use agent_chatter::markers::{self, MarkerKind};
use agent_chatter::message::{Message, MessageId, SpeakerKind};
use agent_chatter::session::{Fact, Session};
use tracing::debug;

/// The environment variable read for the filter (`tracing_subscriber::EnvFilter` syntax:
/// `debug`, `agent_chatter_bridge=debug`, …).
pub const ENV: &str = "AGENT_CHATTER_LOG";

/// Installs the stderr subscriber: at debug level with `--debug`, else as
/// [`ENV`] says; with neither, none (nothing extra is printed, nothing is computed).
pub fn init(debug: bool) {
    let from_env = std::env::var(ENV).ok().filter(|v| !v.trim().is_empty());
    // A bare level (`--debug`, `AGENT_CHATTER_LOG=debug`) is ours: the libraries below (the
    // WebSocket, HTTP and SQLite crates) log every frame at debug, which would bury the
    // diagnostics. Full directives (`tungstenite=trace`) are taken as written.
    let ours = |level: &str| format!("warn,{}={level}", env!("CARGO_CRATE_NAME"));
    let directives = match (debug, from_env) {
        (true, _) => ours("debug"),
        (false, Some(value))
            if ["error", "warn", "info", "debug", "trace"]
                .contains(&value.trim().to_ascii_lowercase().as_str()) =>
        {
            ours(value.trim())
        }
        (false, Some(value)) => value,
        (false, None) => return,
    };
    let filter = tracing_subscriber::EnvFilter::builder().parse_lossy(directives);
    // The lines carry their own tags (`[Debug][Queue] …`), as the seeds print them.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .without_time()
        .with_target(false)
        .with_level(false)
        .try_init();
}

fn enabled() -> bool {
    tracing::enabled!(tracing::Level::DEBUG)
}

/// What the diagnostics need of the session before a fact: the human awaited (how a sender
/// was resolved), the queue, how many messages there were.
pub(crate) struct Before {
    waiting_for: Option<String>,
    pending: Vec<String>,
    messages: usize,
}

/// [`Before`] of `session`, or `None` when debug output is off.
pub(crate) fn before(session: &Session) -> Option<Before> {
    enabled().then(|| Before {
        waiting_for: session.conversation().waiting_for().map(str::to_string),
        pending: session
            .conversation()
            .pending()
            .iter()
            .map(|q| q.to.clone())
            .collect(),
        messages: session.messages().len(),
    })
}

/// A session was opened: created by this start (`Created new session N`) or resumed.
pub(crate) fn session_opened(id: i64, created: bool, session: &Session) {
    if !enabled() {
        return;
    }
    if created {
        debug!("[Debug][Session] Created new session {id}");
    } else {
        debug!(
            "[Debug][Session] Resumed session {id} ({} facts, {} messages)",
            session.facts().len(),
            session.messages().len()
        );
    }
}

/// The diagnostics of the fact just applied (the session log's last) and of the `actions`
/// it caused, drained and about to be performed.
pub(crate) fn after(before: Option<Before>, session: &Session, actions: &[Action]) {
    let (Some(before), Some(fact)) = (before, session.facts().last()) else {
        return;
    };
    for line in lines(&before, fact, session, actions) {
        debug!("{line}");
    }
}

/// `#2 from Max`, as the page numbers messages (no internal id).
fn label(session: &Session, id: &MessageId) -> String {
    let store = session.store();
    match store.position(id) {
        Some(pos) => label_at(session, pos),
        None => id.0.clone(),
    }
}

fn label_at(session: &Session, pos: usize) -> String {
    session.messages().get(pos).map_or_else(
        || format!("#{}", pos + 1),
        |m| format!("#{} from {}", pos + 1, m.speaker.display_name),
    )
}

fn name(session: &Session, id: &str) -> String {
    session
        .team()
        .and_then(|t| t.member(id))
        .map_or_else(|| id.to_string(), |m| m.name.clone())
}

/// The lines for one fact, in the order seed 004's coordinator prints them: sender, first
/// speaker, team task, the message stored, its routing and what it queued, then the queue.
fn lines(before: &Before, fact: &Fact, session: &Session, actions: &[Action]) -> Vec<String> {
    let mut out = Vec::new();
    match fact {
        Fact::SetTeam { team, .. } => out.push(format!(
            "[Debug][Session] Team \"{}\" set ({} members); the conversation starts over",
            team.name,
            team.members.len()
        )),
        Fact::LoadScenario { .. } => out.push(format!(
            "[Debug][Session] Scenario loaded ({} messages); the conversation starts over",
            session.messages().len()
        )),
        Fact::SetSettings { .. } => out.push("[Debug][Session] Settings changed".to_string()),
        _ => {}
    }
    let grew = matches!(
        fact,
        Fact::Human { .. } | Fact::Replied { .. } | Fact::Failed { .. }
    ) && session.messages().len() > before.messages;
    let message = grew.then(|| session.messages().last()).flatten();
    let text = match fact {
        Fact::Human { text, .. } | Fact::Replied { text, .. } => Some(text.as_str()),
        _ => None,
    };
    sender_lines(before, fact, message, session, &mut out);
    team_task_lines(text, message, session, actions, &mut out);
    let queued_now = routing_lines(before, message, session, actions, &mut out);
    queue_lines(before, fact, session, actions, &queued_now, grew, &mut out);
    out
}

/// Who a human message was credited to, and why.
fn sender_lines(
    before: &Before,
    fact: &Fact,
    message: Option<&Message>,
    session: &Session,
    out: &mut Vec<String>,
) {
    // Who the human message was credited to, and why (the core's order: explicit id →
    // [FROM] → the awaited human → the only human).
    if let (Fact::Human { text, sender, .. }, Some(m)) = (fact, message) {
        let who = &m.speaker.name;
        if sender.is_some() {
            out.push(format!("[Debug][Sender] Explicit sender → {who}"));
        } else if let Some(from) = markers::parse(text).from {
            out.push(format!(
                "[Debug][Sender] Resolved from [FROM:{from}] → {who}"
            ));
        } else if before.waiting_for.as_deref() == Some(m.speaker.id.as_str()) {
            out.push(format!("[Debug][Sender] Using waitingForRoleId → {who}"));
        } else {
            out.push(format!(
                "[Debug][Sender] Auto-selected single human → {who}"
            ));
        }
        if session.messages().len() == 1 {
            out.push(format!(
                "[Debug][Session] First speaker: {who} ({})",
                m.speaker.id
            ));
        }
    }
}

/// The team task a message set (and a warning when it set several, or it was cut).
fn team_task_lines(
    text: Option<&str>,
    message: Option<&Message>,
    session: &Session,
    actions: &[Action],
    out: &mut Vec<String>,
) {
    if let (Some(text), Some(m)) = (text, message) {
        let tasks = markers::spans(text)
            .filter(|s| s.kind == MarkerKind::TeamTask)
            .count();
        if tasks > 1 {
            out.push(format!(
                "[Debug][TEAM_TASK] Warning: {tasks} [TEAM_TASK] markers in {}; the last one is used",
                label_at(session, session.messages().len() - 1)
            ));
        }
        if tasks > 0 {
            let task = session.store().team_task().unwrap_or("");
            let shown: String = task.chars().take(200).collect();
            let more = if shown.len() < task.len() { "..." } else { "" };
            out.push(format!(
                "[Debug][TEAM_TASK] Task: {shown}{more} ({} bytes) from {}",
                task.len(),
                m.speaker.name
            ));
        }
    }
    for action in actions {
        if let Action::Notice(Notice::TeamTaskTruncated { from, to }) = action {
            out.push(format!(
                "[Debug][TEAM_TASK] Task truncated from {from} to {to} bytes"
            ));
        }
    }
}

/// Where a new message goes, and whom it queued; returns the members it queued.
fn routing_lines<'a>(
    before: &Before,
    message: Option<&'a Message>,
    session: &Session,
    actions: &[Action],
    out: &mut Vec<String>,
) -> Vec<&'a str> {
    let mut queued_now: Vec<&str> = Vec::new();
    if let Some(m) = message {
        let pos = session.messages().len() - 1;
        out.push(format!(
            "[ContextManager] Message added: {}",
            label_at(session, pos)
        ));
        let routing = &m.routing;
        let names: Vec<_> = routing
            .resolved
            .iter()
            .map(|id| name(session, id))
            .collect();
        let mut line = format!(
            "[Debug][Routing] From {} addressees={}",
            m.speaker.name,
            serde_json::to_string(&names).unwrap_or_default()
        );
        let raw: Vec<String> = routing
            .raw_next
            .iter()
            .map(|a| format!("{} !{}", a.name, a.intent))
            .collect();
        if !raw.is_empty() {
            line.push_str(&format!(" raw=[{}]", raw.join(", ")));
        }
        if let Some(parent) = &routing.parent {
            line.push_str(&format!(" parent={}", label(session, parent)));
        }
        if let Some(intent) = routing.intent {
            line.push_str(&format!(" intent={intent}"));
        }
        if routing.is_done {
            line.push_str(" [DONE]");
        }
        out.push(line);
        // Queued by this message: still pending, delivered now, or the human now awaited.
        let conversation = session.conversation();
        for id in &routing.resolved {
            let queued = conversation
                .pending()
                .iter()
                .any(|q| q.parent == m.id && &q.to == id)
                || actions.iter().any(|a| match a {
                    Action::Deliver(d) => d.parent.as_ref() == Some(&m.id) && &d.to == id,
                    Action::AwaitHuman { member } => {
                        member == id && !before.pending.contains(member)
                    }
                    _ => false,
                });
            if queued && !queued_now.contains(&id.as_str()) {
                queued_now.push(id);
                out.push(match m.speaker.kind {
                    SpeakerKind::Human => format!("[Debug][Routing] Queued {}", name(session, id)),
                    _ => format!(
                        "[Debug][AI Response] Queued {} from {}'s output",
                        name(session, id),
                        m.speaker.name
                    ),
                });
            }
        }
    }
    queued_now
}

/// What the queue does now: deliveries, pauses for a human, the end.
fn queue_lines(
    before: &Before,
    fact: &Fact,
    session: &Session,
    actions: &[Action],
    queued_now: &[&str],
    grew: bool,
    out: &mut Vec<String>,
) {
    let delivering = actions.iter().any(|a| matches!(a, Action::Deliver(_)));
    // A human awaited because the queue reached them, not because it ran dry.
    let was_queued =
        |member: &str| queued_now.contains(&member) || before.pending.iter().any(|p| p == member);
    let paused = actions
        .iter()
        .any(|a| matches!(a, Action::AwaitHuman { member } if was_queued(member)));
    let answered = matches!(fact, Fact::Replied { .. } | Fact::Failed { .. });
    if answered && !delivering && !paused && session.conversation().pending().is_empty() {
        out.push("[Debug][Queue] Queue empty, routing complete".to_string());
    }
    for action in actions {
        match action {
            Action::Deliver(d) => {
                let kind = session
                    .team()
                    .and_then(|t| t.member(&d.to))
                    .map_or("ai", |m| if m.is_ai() { "ai" } else { "human" });
                out.push(format!(
                    "[Debug][Queue] Processing {} ({kind})",
                    name(session, &d.to)
                ));
                out.extend(prompt_lines(session, d));
            }
            Action::AwaitHuman { member } => {
                out.push(if was_queued(member) {
                    format!("[Debug][Queue] Paused for human {}", name(session, member))
                } else {
                    format!(
                        "[Debug][Routing] No queue, waiting for {}",
                        name(session, member)
                    )
                });
            }
            Action::Finished => out.push(
                "[Debug][Queue] Finished ([DONE]): pending deliveries dropped until a human speaks"
                    .to_string(),
            ),
            Action::Notice(_) => {}
        }
    }
    let pending = session.conversation().pending();
    if !pending.is_empty() && (grew || delivering) {
        let queue: Vec<String> = session
            .conversation()
            .pending_in_run_order()
            .iter()
            .map(|q| format!("{} !{}", name(session, &q.to), q.intent))
            .collect();
        out.push(format!(
            "[Debug][Queue] {} pending: {}",
            pending.len(),
            queue.join(", ")
        ));
    }
}

/// What the explain of a delivered prompt says worth a debug line: its size against the
/// budget, and each message deduplicated out of its context (seed 001 §7).
fn prompt_lines(session: &Session, d: &agent_chatter::conversation::Delivery) -> Vec<String> {
    let explain = &d.prompt.explain;
    let mut out = Vec::new();
    let included = explain
        .messages
        .iter()
        .filter(|f| matches!(f.fate, Fate::Included | Fate::Pinned))
        .count();
    out.push(format!(
        "[Debug][Prompt] {}: {} of {} bytes ({}), [MESSAGE] {}, {included} in context, {} markers stripped",
        name(session, &d.to),
        explain.total_bytes,
        explain.max_bytes,
        match explain.status {
            BudgetStatus::Ok => "ok",
            BudgetStatus::Warning => "warning",
            BudgetStatus::Critical => "critical",
        },
        label(session, &d.message),
        explain.markers_stripped,
    ));
    for fate in &explain.messages {
        let Fate::Deduplicated { reason } = fate.fate else {
            continue;
        };
        let which = label_at(session, fate.index);
        out.push(match reason {
            DedupReason::SameId => {
                format!("[ContextManager] Deduplicated context for AI→AI: {which} is the current message")
            }
            DedupReason::SameSpeakerAndContent => format!(
                "[ContextManager] Deduplicated context for AI→AI: {which} repeats the current message"
            ),
            DedupReason::OwnLast => format!(
                "[ContextManager] Deduplicated context: {which}, {}'s own last answer",
                name(session, &d.to)
            ),
        });
    }
    for cut in &explain.truncations {
        out.push(format!(
            "[Debug][Prompt] {}: {} cut from {} to {} bytes for the budget",
            name(session, &d.to),
            cut.section,
            cut.from_bytes,
            cut.to_bytes
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_chatter::explain::MessageFate;
    use agent_chatter::message::Millis;

    /// A session of kailai, max and sarah after `facts`, with the actions of the last one.
    fn session(facts: &[Fact]) -> (Session, Vec<Action>) {
        let team = agent_chatter::config::load_team(
            r#"{"name": "t", "members": [{"name": "kailai", "kind": "human"},
                {"name": "max", "kind": "ai", "agentType": "claude-code"},
                {"name": "sarah", "kind": "ai", "agentType": "claude-code"}]}"#,
        )
        .unwrap();
        let mut session = Session::new();
        session.apply(&Fact::set_team(team)).unwrap();
        let mut actions = Vec::new();
        for fact in facts {
            session.apply(fact).unwrap();
            actions = std::iter::from_fn(|| session.poll_action()).collect();
        }
        (session, actions)
    }

    /// Seed 001 §7's `Deduplicated context for AI→AI`, for each reason the explain gives; a
    /// chat run shows the routed one (bridge/tests/debug.rs), the others are made here.
    #[test]
    fn each_deduplicated_message_of_a_prompt_has_its_context_manager_line() {
        let (s, mut actions) = session(&[
            Fact::human("[NEXT: max] go", Millis(1)),
            Fact::replied("max", "same [NEXT: sarah]", Millis(2)),
        ]);
        let Some(Action::Deliver(d)) = actions.iter_mut().find(|a| matches!(a, Action::Deliver(_)))
        else {
            panic!("{actions:?}")
        };
        let cases = [
            (
                DedupReason::SameSpeakerAndContent,
                "[ContextManager] Deduplicated context for AI→AI: #2 from max repeats the current message",
            ),
            (
                DedupReason::SameId,
                "[ContextManager] Deduplicated context for AI→AI: #2 from max is the current message",
            ),
            (
                DedupReason::OwnLast,
                "[ContextManager] Deduplicated context: #2 from max, sarah's own last answer",
            ),
        ];
        for (reason, want) in cases {
            d.prompt.explain.messages = vec![MessageFate {
                index: 1,
                fate: Fate::Deduplicated { reason },
            }];
            let lines = prompt_lines(&s, d);
            assert!(lines.iter().any(|l| l == want), "{reason:?}: {lines:#?}");
        }
        // The reply's own lines: stored, what it queued, sarah delivered.
        let b = Before {
            waiting_for: None,
            pending: Vec::new(),
            messages: 1,
        };
        let lines = lines(&b, s.facts().last().unwrap(), &s, &actions);
        for want in [
            "[ContextManager] Message added: #2 from max",
            "[Debug][AI Response] Queued sarah from max's output",
            "[Debug][Queue] Processing sarah (ai)",
        ] {
            assert!(lines.iter().any(|l| l == want), "{want}: {lines:#?}");
        }
    }

    #[test]
    fn a_cut_team_task_and_several_team_task_markers_are_told() {
        let long = "é".repeat(3000); // 6000 bytes, over the 5 KiB cap
        let text = format!("[TEAM_TASK: first] [TEAM_TASK: {long}] hi");
        let (s, actions) = session(&[Fact::human(text, Millis(1))]);
        let b = Before {
            waiting_for: None,
            pending: Vec::new(),
            messages: 0,
        };
        let lines = lines(&b, s.facts().last().unwrap(), &s, &actions);
        for want in [
            "[Debug][TEAM_TASK] Warning: 2 [TEAM_TASK] markers in #1 from kailai; the last one is used",
            "[Debug][TEAM_TASK] Task truncated from 6000 to 5120 bytes",
            "[Debug][Routing] No queue, waiting for kailai",
        ] {
            assert!(lines.iter().any(|l| l == want), "{want}: {lines:#?}");
        }
    }
}
