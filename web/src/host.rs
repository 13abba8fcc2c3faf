//! The page as its own host (simulation, DESIGN §13): it applies facts to the session, performs
//! the actions the session asks for, and persists the fact log after every change.
//!
//! In simulation an agent's delivery waits in [`AppState::due`] until the user types the reply
//! or lets the core's demo agent answer; either way it goes back in as a `Replied` fact, so the
//! conversation goes on through the core's routing exactly as with real agents.

use agent_chatter::conversation::Action;
use agent_chatter::message::Millis;
use agent_chatter::scenario::Scenario;
use agent_chatter::session::{Fact, Session};
use agent_chatter::team::{Team, TeamSettings};
use leptos::prelude::*;

use crate::state::AppState;
use crate::storage;

/// Fixed clock of the demo conversation, so every first visit shows the same bytes.
const DEMO_EPOCH: u64 = 1_763_900_000_000;

/// The wall clock in milliseconds (the core never reads it: time comes in with each fact).
pub fn now() -> Millis {
    Millis(js_sys::Date::now() as u64)
}

/// Applies `fact`; a refused fact changes nothing and its reason goes to the banner. With a
/// bridge, the fact goes to the bridge, which commits it and sends it back to every page.
pub fn apply(state: &AppState, fact: Fact) -> bool {
    // The user did something that went through: an earlier error is no longer news (the
    // bridge answers a refusal with an error of its own).
    let applied = if state.is_bridge() {
        crate::bridge::apply(state, &fact)
    } else {
        apply_local(state, fact)
    };
    if applied && !state.is_bridge() {
        state.error.set(None);
    }
    applied
}

/// Applies `fact` to the page's own session (simulation, or a fact the bridge committed).
pub fn apply_local(state: &AppState, fact: Fact) -> bool {
    let result = state
        .session
        .try_update(|s| s.apply(&fact).map(|()| drain(s)));
    match result {
        Some(Ok(actions)) => {
            perform(state, actions);
            persist(state);
            true
        }
        Some(Err(e)) => {
            state.report(e.to_string());
            false
        }
        None => false,
    }
}

/// Replaces the whole session (import, team edit, reset): its pending actions become the
/// page's, and the selection starts over at the latest message.
pub fn adopt(state: &AppState, session: Session) {
    // A new session in use (import, reset, team edit): earlier errors were about another.
    state.error.set(None);
    show(state, session);
    persist(state);
}

/// The stored session if it reads, else the demo (used when a shared link fails to open).
pub fn restore_or_demo(state: &AppState) {
    match crate::storage::load_session() {
        crate::storage::Stored::Session(session) => restore(state, *session),
        _ => adopt(state, demo_session()),
    }
}

/// Shows the session just read from this browser's storage (nothing to save).
pub fn restore(state: &AppState, session: Session) {
    show(state, session);
}

fn show(state: &AppState, mut session: Session) {
    let actions = drain(&mut session);
    state.session.set(session);
    state.due.set(None);
    state.notices.set(Vec::new());
    state.selected.set(None);
    perform(state, actions);
}

/// Changes the team's members and names, keeping the conversation.
///
/// In simulation the log is rewritten with the new team in place of the last `setTeam` (or
/// as the team of the last loaded scenario) and replayed, so every prompt is rebuilt as if the
/// team had always been this one. A history
/// the new team cannot replay (a removed member who had to answer) is refused and nothing
/// changes.
///
/// With a bridge, whose log only grows (a `setTeam` would start the conversation over), the
/// history goes on under the edited team as a `loadScenario` fact: the same messages,
/// addressees and team task, nothing pending. Refused while an agent runs, whose answer
/// would then belong to no delivery.
pub fn edit_team(state: &AppState, team: Team) -> bool {
    if state.is_bridge() {
        let running = state
            .session
            .with_untracked(|s| s.conversation().in_flight().map(|f| f.to.clone()));
        if let Some(to) = running {
            state.report(format!(
                "team not changed: {to} is running; wait for the answer or cancel it, then edit \
                 the team (the conversation goes on under the edited team)"
            ));
            return false;
        }
        let scenario = state
            .session
            .with_untracked(|s| Scenario::from_history(team, s.messages(), s.store().team_task()));
        return apply(
            state,
            Fact::LoadScenario {
                scenario: Box::new(scenario),
            },
        );
    }
    let mut log = state.session.with_untracked(|s| s.facts().to_vec());
    // The members change; the settings stay as they were at that point of the log (later
    // `setSettings` facts keep their place), so a past delivery keeps its budget and window.
    let mut team = team;
    match log
        .iter_mut()
        .rev()
        .find(|f| matches!(f, Fact::SetTeam { .. } | Fact::LoadScenario { .. }))
    {
        // A loaded history (a scenario, a share link) stays, under the edited team.
        Some(Fact::LoadScenario { scenario }) => {
            team.settings = scenario.team.settings.clone();
            scenario.team = team;
        }
        Some(Fact::SetTeam { team: old, .. }) => {
            team.settings = old.settings.clone();
            **old = team;
        }
        _ => log.insert(0, Fact::set_team(team)),
    }
    match Session::replay(log) {
        Ok(session) => {
            let (selected, recipient) = (
                state.selected.get_untracked(),
                state.recipient.get_untracked(),
            );
            adopt(state, session);
            state.selected.set(selected);
            state.recipient.set(recipient);
            true
        }
        Err(e) => {
            state.report(format!(
                "the edited team cannot replay this conversation, so it was not applied: {e}"
            ));
            false
        }
    }
}

/// New settings for the conversation from now on (a `setSettings` fact).
pub fn set_settings(state: &AppState, settings: TeamSettings) {
    apply(state, Fact::set_settings(settings));
}

/// The human composer: `text` as typed, markers included.
pub fn send_human(state: &AppState, text: String) -> bool {
    apply(
        state,
        Fact::Human {
            text,
            sender: None,
            at: now(),
        },
    )
}

/// The due agent answers with `text` (typed by the user).
pub fn reply_due(state: &AppState, text: String) -> bool {
    let Some(to) = state
        .due
        .with_untracked(|d| d.as_ref().map(|d| d.to.clone()))
    else {
        state.report("no agent is due: there is nothing to reply to");
        return false;
    };
    apply(state, Fact::replied(to, text, now()))
}

/// The due agent answers with the core's simulated reply.
pub fn simulate_due(state: &AppState) -> bool {
    let Some(delivery) = state.due.get_untracked() else {
        return false;
    };
    let text = state
        .session
        .with_untracked(|s| s.simulate_reply(&delivery));
    apply(state, Fact::replied(delivery.to, text, now()))
}

/// A fresh session with the demo team and a short simulated conversation (first visit).
pub fn demo_session() -> Session {
    // The demo facts are built from the embedded team, which the core's tests keep valid, so
    // none is refused; a refusal would only shorten the demo.
    let mut session = Session::new();
    let _ = session.apply(&Fact::set_team(agent_chatter::demo::team()));
    let _ = session.apply(&Fact::Human {
        text: agent_chatter::demo::OPENING_MESSAGE.to_string(),
        sender: Some("kailai".to_string()),
        at: Millis(DEMO_EPOCH),
    });
    // Two simulated replies (Max, then Sarah); the third agent is left due, so the inspector
    // opens on a prompt waiting for its answer. Its actions stay queued for `adopt`.
    for minute in 1..=2 {
        let due = drain(&mut session).into_iter().find_map(|a| match a {
            Action::Deliver(d) => Some(d),
            _ => None,
        });
        let Some(delivery) = due else { break };
        let text = session.simulate_reply(&delivery);
        let _ = session.apply(&Fact::replied(
            delivery.to.clone(),
            text,
            Millis(DEMO_EPOCH + minute * 60_000),
        ));
    }
    session
}

fn drain(session: &mut Session) -> Vec<Action> {
    std::iter::from_fn(|| session.poll_action()).collect()
}

fn perform(state: &AppState, actions: Vec<Action>) {
    for action in actions {
        match action {
            Action::Deliver(delivery) => {
                // Show the prompt the agent is getting, at the message it answers.
                state.recipient.set(Some(delivery.to.clone()));
                state.selected.set(None);
                state.due.set(Some(*delivery));
                // A new delivery: the bridge's announcement of it is checked afresh.
                state.verification.set(None);
            }
            Action::AwaitHuman { .. } => state.due.set(None),
            Action::Finished => {
                state.due.set(None);
                state.notices.update(|n| {
                    n.push("[DONE]: the conversation is complete until a human speaks".to_string())
                });
            }
            Action::Notice(notice) => state.notices.update(|n| n.push(notice.to_string())),
        }
    }
    // A delivery that was answered is no longer due.
    let running = state
        .session
        .with_untracked(|s| s.conversation().in_flight().map(|f| f.to.clone()));
    if running.is_none() {
        state.due.set(None);
    }
}

/// Saves the session soon after a change, once for a burst of changes: serialising a long
/// fact log costs milliseconds, which must not delay the inspector's update (one frame).
fn persist(state: &AppState) {
    // A bridge keeps its sessions in its own database; this browser keeps only its own.
    if state.is_bridge() || SAVE_PENDING.replace(true) {
        return;
    }
    let state = *state;
    set_timeout(
        move || {
            SAVE_PENDING.set(false);
            let text = state.session.with_untracked(|s| s.export());
            if let Err(e) = storage::save_session(&text) {
                state.report(e);
            }
        },
        SAVE_DELAY,
    );
}

/// Saves a pending change at once when the page goes away (reload, close), so the debounce
/// never loses the last fact.
pub fn save_on_leave(state: AppState) {
    let handle = window_event_listener(leptos::ev::pagehide, move |_| {
        if SAVE_PENDING.replace(false) && !state.is_bridge() {
            let text = state.session.with_untracked(|s| s.export());
            let _ = storage::save_session(&text);
        }
    });
    // The listener lives as long as the page.
    std::mem::forget(handle);
}

/// How long a burst of changes may last before the session is saved.
const SAVE_DELAY: std::time::Duration = std::time::Duration::from_millis(150);

thread_local! {
    /// A save is scheduled.
    static SAVE_PENDING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}
