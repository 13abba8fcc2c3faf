//! The session (docs/architecture.md §6b): a team, its settings and the conversation machine, fed
//! by one log of serializable [`Fact`]s. Every host holds one — the page, the bridge, the terminal
//! chat, the npm `Conversation` — and because the core is deterministic (no clock, no randomness,
//! fixed hash keys) **the same facts give the same messages, actions and prompt bytes on every
//! host**.
//!
//! - persistence = append each applied fact; resume = [`Session::import`] (a replay);
//! - time travel and what-if = [`Session::preview`], which never changes the session;
//! - a snapshot (§11) and a scenario (§11b) can be derived at any time.
//!
//! ```
//! use agent_chatter::conversation::Action;
//! use agent_chatter::message::Millis;
//! use agent_chatter::session::{Fact, Session};
//!
//! let team = agent_chatter::config::load_team(r#"{"name": "Duo", "members": [
//!     {"name": "kailai", "kind": "human"},
//!     {"name": "max", "kind": "ai", "agentType": "codex"}]}"#).unwrap();
//! let mut session = Session::new();
//! session.apply(&Fact::set_team(team)).unwrap();
//! session.apply(&Fact::human("Plan it [NEXT: max]", Millis(1))).unwrap();
//! while let Some(action) = session.poll_action() {
//!     if let Action::Deliver(d) = action {
//!         assert_eq!(d.prompt.prompt, "[MESSAGE]\nPlan it");
//!         session.apply(&Fact::replied(&d.to, "Done. [DONE]", Millis(2))).unwrap();
//!     }
//! }
//! // The log replays to the same state anywhere.
//! let copy = Session::import(&session.export()).unwrap();
//! assert_eq!(copy.messages(), session.messages());
//! ```
//!
//! Decisions where docs/architecture.md is silent:
//! - `setTeam`'s optional `settings` replace the team's own (the team config keeps its
//!   settings too; a fact that names both uses the fact's).
//! - A replayed session's pending actions are only what the host must do now: the in-flight
//!   delivery again (same prompt bytes as when it was first emitted), or `AwaitHuman`.
//!   Everything earlier was performed by whoever applied the facts first.
//! - [`Session::preview`] of a message that `member` was actually delivered uses that
//!   delivery's parent, the store as it was then (the history it saw, the team task in force
//!   then) and the settings it was built with (recorded with the delivery), so time travel
//!   shows exactly what the agent got (docs/architecture.md §13: "what each agent received at that
//!   point"), even after a settings change; a what-if override still applies on top.
//!   docs/architecture.md §6b's "the settings in force" is read as "in force for that delivery".
//!   Otherwise the message is previewed as the current one, after it was stored, with no parent,
//!   under the settings in force now — what [`crate::scenario::preview`] gives for the history up
//!   to it.
//!
//! ## Where things are
//!
//! | file | what it holds |
//! |---|---|
//! | `mod.rs` | [`Session`] and its loop: applying facts, replaying a log, the actions to poll, what a host may do next |
//! | `fact.rs` | [`Fact`] (the inputs) and [`Failure`] (the kinds of an agent's failure) |
//! | `runs.rs` | [`Run`] (how each run ended), deliveries, usage and the cost cap |
//! | `preview.rs` | [`Session::preview`] (time travel, what-if) and [`PreviewOverrides`] |
//! | `leave.rs` | a member leaving from now on (`memberLeft`): [`Session::can_leave`], [`LeftMember`] |
//! | `error.rs` | [`SessionError`], [`SessionFileError`], [`PreviewError`], [`CannotRemove`] |
//! | `file.rs` | the session file ([`Session::export`], [`Session::import`]), snapshots and scenarios |

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

mod error;
mod fact;
mod file;
mod leave;
mod preview;
mod runs;

pub use error::{CannotRemove, PreviewError, SessionError, SessionFileError};
pub use fact::{Fact, Failure};
pub use file::{facts_json, session_file, SESSION_FORMAT};
pub use leave::LeftMember;
pub use preview::PreviewOverrides;
pub use runs::Run;

use crate::context::{BuildSettings, Store};
use crate::conversation::{Action, Conversation, Delivery};
use crate::json::Path;
use crate::message::{MemberId, Message, Millis};
use crate::scenario::Scenario;
use crate::team::{self, Team, TeamSettings};
use crate::usage::Spend;

/// The team task after each change: (messages stored at that point, task).
type TeamTaskHistory = Vec<(usize, Option<String>)>;

/// A delivery the session emitted, kept so a preview of it is what the agent got.
#[derive(Debug, Clone, PartialEq, Eq)]
struct DeliveryRecord {
    to: MemberId,
    parent: Option<usize>,
    /// Messages stored when it was built.
    seen: usize,
    /// The settings it was built with: a later `setSettings` changes what agents get from
    /// then on, never what one was given.
    settings: BuildSettings,
}

/// Team + settings + conversation machine, driven by facts (module doc).
#[derive(Debug, Clone, Default)]
pub struct Session {
    conversation: Conversation,
    facts: Vec<Fact>,
    actions: VecDeque<Action>,
    team_tasks: TeamTaskHistory,
    /// Deliveries by the position of their `[MESSAGE]`.
    deliveries: BTreeMap<usize, Vec<DeliveryRecord>>,
    /// Every run's outcome in this conversation, in order (so by message position).
    runs: Vec<Run>,
    /// What the runs before the last team change (`setTeam`, `loadScenario`) reported, by
    /// member, and how many they were: money spent stays spent when the team changes, so the
    /// usage shown and the cost cap go on counting it (docs/architecture.md §14c).
    /// (A few members: a list, not a map, for the page's size.)
    earlier: Vec<(MemberId, Spend)>,
    /// The cap counts only the runs since the last team change, as before the spend carried
    /// over: set for a log written that way, which replays only so ([`Self::replay`]).
    cap_resets_on_team_change: bool,
    /// The members who left since the last team change (`memberLeft`), for what still names
    /// them on their messages (`leave.rs`).
    left: Vec<LeftMember>,
}

/// The methods, by kind (those of a kind that lives in a submodule are defined there):
///
/// - **Constructors**: [`new`](Self::new) (empty: the first fact must be `setTeam`),
///   [`replay`](Self::replay) (a log of facts), [`import`](Self::import) (a session file).
/// - **Applying facts**: [`apply`](Self::apply), then [`poll_action`](Self::poll_action) until
///   it returns `None`.
/// - **What a host may do next**: [`can_retry`](Self::can_retry),
///   [`can_remove`](Self::can_remove), [`can_replace_team`](Self::can_replace_team),
///   [`can_leave`](Self::can_leave) (`leave.rs`, with [`left_members`](Self::left_members),
///   [`display_name`](Self::display_name), [`with_left_members`](Self::with_left_members)),
///   [`simulate_reply`](Self::simulate_reply) (the simulated agent's answer).
/// - **Reading state**: [`facts`](Self::facts), [`team`](Self::team),
///   [`shared_team`](Self::shared_team), [`settings`](Self::settings),
///   [`conversation`](Self::conversation), [`store`](Self::store),
///   [`messages`](Self::messages), [`team_task_after`](Self::team_task_after),
///   [`describe`](Self::describe) (a notice in words).
/// - **Runs, usage and the cost cap** (`runs.rs`): [`runs`](Self::runs),
///   [`run_at`](Self::run_at), [`answer`](Self::answer), [`deliveries`](Self::deliveries),
///   [`usage`](Self::usage), [`earlier_runs`](Self::earlier_runs).
/// - **Preview** (`preview.rs`): [`preview`](Self::preview),
///   [`was_delivered`](Self::was_delivered), [`delivered_at`](Self::delivered_at),
///   [`settings_delivered`](Self::settings_delivered).
/// - **Files** (`file.rs`): [`export`](Self::export), [`import`](Self::import),
///   [`snapshot`](Self::snapshot), [`to_scenario`](Self::to_scenario); a host storing the log
///   in parts writes it with [`facts_json`] and [`session_file`].
impl Session {
    // ------------------------------------------------------------------ constructors

    /// An empty session: the first fact must be `setTeam`.
    pub fn new() -> Self {
        Self::default()
    }

    /// A new session with `facts` applied in order; its pending actions are only what the
    /// host must do now. The first refused fact is reported with its index.
    ///
    /// Given owned facts (a file just read, a database's rows) each is moved into the log;
    /// given a slice, each is copied.
    pub fn replay(facts: impl Into<Vec<Fact>>) -> Result<Session, SessionFileError> {
        Self::replay_as(facts.into(), false)
    }

    /// [`Self::replay`], the cap starting over with each team when `cap_resets`. A log
    /// written that way (an agent ran after a team change though the spend before it had
    /// reached the cap) is replayed again so, as it was written (docs/architecture.md §14c).
    fn replay_as(facts: Vec<Fact>, cap_resets: bool) -> Result<Session, SessionFileError> {
        let mut session = Session::new();
        session.cap_resets_on_team_change = cap_resets;
        session.facts.reserve(facts.len());
        // The newest Deliver, moved out of the drained actions (deliveries run one at a time,
        // so it is the in-flight one if any is).
        let mut last_delivery = None;
        let mut facts = facts.into_iter().enumerate();
        while let Some((index, fact)) = facts.next() {
            if session.stopped_by_carried_cap(&fact) {
                let mut all = std::mem::take(&mut session.facts);
                all.push(fact);
                all.extend(facts.map(|(_, f)| f));
                return Self::replay_as(all, true);
            }
            // Deliveries that are over need no prompt: only the newest one's is built, below.
            // (Set before every fact: a `loadScenario` brings a new conversation.)
            session.conversation.defer_prompts(true);
            let kind = fact.kind();
            session
                .apply_owned(fact)
                .map_err(|error| SessionFileError::Replay { index, kind, error })?;
            for action in session.actions.drain(..) {
                if let Action::Deliver(d) = action {
                    last_delivery = Some(d);
                }
            }
        }
        // What the host must do now: the in-flight delivery again, exactly as first emitted,
        // or the wait for a human.
        let built = session.conversation.build_deferred();
        session.conversation.defer_prompts(false);
        let conversation = &session.conversation;
        if conversation.in_flight().is_some() {
            if let Some(mut d) = last_delivery {
                // Checked when it was due (its messages exist): building it cannot fail.
                if let Some(Ok(prompt)) = built {
                    d.prompt = prompt;
                }
                session.actions.push_back(Action::Deliver(d));
            }
        } else if let Some(member) = conversation.waiting_for() {
            let member = member.to_string();
            session.actions.push_back(Action::AwaitHuman { member });
        }
        Ok(session)
    }

    // ---------------------------------------------------------------- applying facts

    /// Applies one fact. A refused fact changes nothing and says why; an accepted one is
    /// appended to the log and its actions queue up for [`Self::poll_action`].
    ///
    /// A new human message with no text (nothing but whitespace) is refused: it would be
    /// stored and shown as a message that says nothing. A log written before this rule may
    /// hold one, and [`Self::replay`] still takes it, so no stored session stops loading.
    pub fn apply(&mut self, fact: &Fact) -> Result<(), SessionError> {
        if let Fact::Human { text, .. } = fact {
            if text.trim().is_empty() {
                return Err(SessionError::EmptyMessage);
            }
        }
        self.apply_owned(fact.clone())
    }

    /// [`Self::apply`] for a fact the caller gives away: the log keeps it as it is, and only
    /// the text the conversation stores is copied (a replay copies each text once, not twice).
    ///
    /// A team's machine settings (run settings, working directories) are dropped first: the
    /// log never holds them (docs/architecture.md §14c), so no host can send, save or share
    /// them.
    fn apply_owned(&mut self, mut fact: Fact) -> Result<(), SessionError> {
        fact.strip_machine_settings();
        match &fact {
            Fact::SetTeam { team, settings } => {
                // The conversation holds the fact's team, or a copy with the fact's settings.
                let mut team = Arc::clone(team);
                if let Some(settings) = settings {
                    Arc::make_mut(&mut team).settings = TeamSettings::clone(settings);
                }
                team.validate().map_err(SessionError::Team)?;
                let spent = self.carried_spend();
                self.conversation.set_shared_team(team);
                self.conversation.set_spent(spent);
                self.team_tasks.clear();
                self.deliveries.clear();
                self.set_runs_aside();
                self.actions.clear();
                self.left.clear();
            }
            Fact::SetSettings { settings } => {
                if self.conversation.team().is_none() {
                    return Err(SessionError::NoTeam);
                }
                team::validate_settings(settings, &Path::Root).map_err(SessionError::Settings)?;
                self.conversation
                    .set_settings(TeamSettings::clone(settings));
            }
            Fact::Human { text, sender, at } => {
                self.conversation
                    .human_said(text.clone(), sender.as_deref(), *at)?;
            }
            Fact::Replied {
                to,
                text,
                at,
                incomplete,
                usage,
            } => {
                let spent = self.count_cost(usage.as_deref());
                let id = self
                    .conversation
                    .agent_replied(to, text.clone(), *at)
                    .inspect_err(|_| self.conversation.set_spent(spent))?;
                let usage = usage.as_deref().copied();
                self.record_run(to, &id, usage, incomplete.clone(), None);
            }
            Fact::Failed {
                to,
                reason,
                at,
                failure,
                usage,
            } => {
                let spent = self.count_cost(usage.as_deref());
                // The other agents read one short line in words; the people get the reason.
                let said = failure.map_or_else(|| reason.clone(), |f| f.words().to_string());
                let shown = failure.is_none_or(Failure::reaches_prompts);
                let id = self
                    .conversation
                    .agent_failed(to, said, *at, shown)
                    .inspect_err(|_| self.conversation.set_spent(spent))?;
                let usage = usage.as_deref().copied();
                let failed = Some((reason.clone(), *failure));
                self.record_run(to, &id, usage, None, failed);
            }
            Fact::Retry { to, at } => {
                let (parent, intent) = self.failed_delivery(to)?;
                self.conversation.retry(to, parent, intent, *at);
            }
            Fact::LoadScenario { scenario } => {
                let (conversation, team_tasks) = load_scenario(scenario)?;
                let spent = self.carried_spend();
                self.conversation = conversation;
                self.conversation.set_spent(spent);
                self.team_tasks = team_tasks;
                self.deliveries.clear();
                self.set_runs_aside();
                self.actions.clear();
                self.left.clear();
            }
            Fact::MemberLeft { member, at } => self.member_left(member, *at)?,
        }
        self.facts.push(fact);
        self.record_team_task();
        self.collect_actions();
        Ok(())
    }

    /// The next thing the host must do, or `None` until the next fact.
    #[must_use]
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    fn record_team_task(&mut self) {
        let store = self.conversation.store();
        record(&mut self.team_tasks, store.len(), store.team_task());
    }

    fn collect_actions(&mut self) {
        while let Some(action) = self.conversation.poll_action() {
            if let Action::Deliver(d) = &action {
                let store = self.conversation.store();
                let team = self.conversation.team();
                let member = team.and_then(|t| t.member(&d.to));
                if let (Some(pos), Some(team), Some(member)) =
                    (store.position(&d.message), team, member)
                {
                    let parent = d.parent.as_ref().and_then(|p| store.position(p));
                    self.deliveries
                        .entry(pos)
                        .or_default()
                        .push(DeliveryRecord {
                            to: d.to.clone(),
                            parent,
                            seen: store.len(),
                            settings: BuildSettings::for_member(team, member),
                        });
                }
            }
            self.actions.push_back(action);
        }
    }

    // ------------------------------------------------------ what a host may do next

    /// What a retry of `to` runs again: the parent and intent of its last run, which must
    /// have failed, with nothing in flight or queued for it (docs/architecture.md §6b).
    fn failed_delivery(
        &self,
        to: &str,
    ) -> Result<(crate::message::MessageId, crate::message::Intent), SessionError> {
        let team = self.team().ok_or(SessionError::NoTeam)?;
        let member = team.member(to).ok_or_else(|| {
            SessionError::CannotRetry(format!(
                "{to:?} is not a member of the team: nothing to retry"
            ))
        })?;
        let name = &member.display_name;
        let cannot = |why: String| Err(SessionError::CannotRetry(why));
        let conversation = &self.conversation;
        if conversation.in_flight().is_some_and(|f| f.to == member.id)
            || conversation.pending().iter().any(|q| q.to == member.id)
        {
            return cannot(format!(
                "{name} is already running or queued: wait for that run instead of retrying"
            ));
        }
        let last = self.runs.iter().rev().find(|r| r.to == member.id);
        let Some(run) = last.filter(|r| r.failed.is_some()) else {
            return cannot(format!(
                "{name}'s last run did not fail, so there is nothing to retry; to ask {name} \
                 again, write a message with [NEXT: {}]",
                member.name
            ));
        };
        let routing = &self.messages()[run.message].routing;
        match (&routing.parent, routing.intent) {
            (Some(parent), Some(intent)) => Ok((parent.clone(), intent)),
            _ => cannot(format!(
                "{name}'s failed run no longer shows what it answered: write a message with \
                 [NEXT: {}] to ask again",
                member.name
            )),
        }
    }

    /// Whether `member` (id) can be retried now: its last run failed and nothing is in flight
    /// or queued for it (what a `retry` fact needs).
    pub fn can_retry(&self, member: &str) -> bool {
        self.failed_delivery(member).is_ok()
    }

    /// Whether `member` (id) may be taken out of the team as if they had never been in it
    /// (a team edit): not once they have spoken (or a run of theirs ended) in this
    /// conversation, since its history would no longer be theirs; such a member leaves from
    /// now on instead ([`Self::can_leave`]). A member the team does not have leaves nothing
    /// to refuse.
    pub fn can_remove(&self, member: &str) -> Result<(), CannotRemove> {
        let Some(m) = self.team().and_then(|t| t.member(member)) else {
            return Ok(());
        };
        let spoke = self.messages().iter().any(|msg| msg.speaker.id == m.id)
            || self.runs.iter().any(|r| r.to == m.id);
        if spoke {
            return Err(CannotRemove::HasSpoken {
                member: m.id.clone(),
                name: m.display_name.clone(),
            });
        }
        Ok(())
    }

    /// Whether `team` may replace the team in use: [`Self::can_remove`] of each member it
    /// leaves out, the first who cannot go named.
    pub fn can_replace_team(&self, team: &Team) -> Result<(), CannotRemove> {
        let Some(old) = self.team() else {
            return Ok(());
        };
        old.members
            .iter()
            .filter(|m| team.member(&m.id).is_none())
            .try_for_each(|m| self.can_remove(&m.id))
    }

    /// The simulated agent's reply to `delivery` ([`crate::demo::reply`]), for hosts that
    /// answer in simulation: apply it as `Fact::replied(&delivery.to, text, at)`.
    pub fn simulate_reply(&self, delivery: &Delivery) -> String {
        let store = self.store();
        let current = store
            .position(&delivery.message)
            .and_then(|pos| store.stripped(pos))
            .unwrap_or_default();
        match self.team() {
            Some(team) => crate::demo::reply(
                team,
                delivery,
                current,
                store.team_task(),
                self.conversation.rounds(),
            ),
            None => String::new(),
        }
    }

    // ------------------------------------------------------------------------ state

    /// Every fact applied so far, in order (the log to persist).
    pub fn facts(&self) -> &[Fact] {
        &self.facts
    }

    /// `notice` as a person reads it: each message named as the page numbers it (`#2 from
    /// Max`), never by its internal id.
    pub fn describe(&self, notice: &crate::conversation::Notice) -> String {
        let store = self.store();
        notice.describe(|id| match store.position(id) {
            Some(pos) => {
                let m = &store.messages()[pos];
                format!("#{} from {}", pos + 1, m.speaker.display_name)
            }
            None => id.0.clone(),
        })
    }

    /// The conversation machine (status, queue, waiting state, in-flight delivery).
    pub fn conversation(&self) -> &Conversation {
        &self.conversation
    }

    pub fn team(&self) -> Option<&Team> {
        self.conversation.team()
    }

    /// The team in use, shared ([`Conversation::shared_team`]).
    pub fn shared_team(&self) -> Option<&Arc<Team>> {
        self.conversation.shared_team()
    }

    /// The settings in force (the team's).
    pub fn settings(&self) -> Option<&TeamSettings> {
        self.team().map(|t| &t.settings)
    }

    pub fn store(&self) -> &Store {
        self.conversation.store()
    }

    /// Every stored message, oldest first.
    pub fn messages(&self) -> &[Message] {
        self.conversation.store().messages()
    }

    /// The team task in force after the first `len` messages were stored.
    pub fn team_task_after(&self, len: usize) -> Option<&str> {
        let i = self.team_tasks.partition_point(|(n, _)| *n <= len);
        i.checked_sub(1)
            .and_then(|i| self.team_tasks[i].1.as_deref())
    }
}

/// Notes that `task` is in force once `len` messages are stored (one entry per length; no
/// entry when nothing changed).
fn record(history: &mut TeamTaskHistory, len: usize, task: Option<&str>) {
    let last = history.last().and_then(|(_, t)| t.as_deref());
    if task == last {
        return;
    }
    let task = task.map(str::to_string);
    match history.last_mut() {
        Some(entry) if entry.0 == len => entry.1 = task,
        _ => history.push((len, task)),
    }
}

/// The conversation a scenario opens as, and its team-task history (for time travel): the
/// scenario's store (its `to`, markers and `teamTask` key, as `scenario::preview` sees them)
/// resumed with nothing pending.
fn load_scenario(scenario: &Scenario) -> Result<(Conversation, TeamTaskHistory), SessionError> {
    let mut team_tasks = TeamTaskHistory::new();
    let store = scenario
        .to_store_with(|len, task| record(&mut team_tasks, len, task))
        .map_err(SessionError::Scenario)?;
    // Nothing is pending after a recorded history, so the conversation waits for the first
    // human, as it does after any message that routes no one (docs/architecture.md §6): a message
    // without `[FROM]` is theirs, and the page says whose turn it is rather than "done".
    let first_human = scenario.team.humans().next().map(|h| h.id.clone());
    let state = crate::conversation::RoutingState {
        status: if store.is_empty() {
            crate::conversation::Status::Idle
        } else {
            crate::conversation::Status::AwaitingHuman
        },
        waiting_for: if store.is_empty() { None } else { first_human },
        last_completed: store.latest().map(|m| m.id.clone()),
        ..Default::default()
    };
    let conversation = Conversation::resume(scenario.team.clone(), store, state, Millis(0))
        .map_err(SessionError::Resume)?;
    Ok((conversation, team_tasks))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::crew;

    /// Kailai asked Max, who replied and handed over to Bob, whose run failed; Sarah never
    /// spoke.
    fn session() -> Session {
        let mut session = Session::new();
        let facts = [
            Fact::set_team(crew()),
            Fact::human("Plan the release [NEXT: max]", Millis(1)),
            Fact::replied("max", "A plan. [NEXT: bob]", Millis(2)),
            Fact::failed("bob", "no reply in time", Millis(3)),
        ];
        for fact in &facts {
            session.apply(fact).expect("the fact fits");
            while session.poll_action().is_some() {}
        }
        session
    }

    fn without(team: &Team, member: &str) -> Team {
        let mut team = team.clone();
        team.members.retain(|m| m.id != member);
        team
    }

    #[test]
    fn a_member_who_has_spoken_or_ran_cannot_be_removed() {
        let session = session();
        let has_spoken = |id: &str, name: &str| {
            Err(CannotRemove::HasSpoken {
                member: id.into(),
                name: name.into(),
            })
        };
        assert_eq!(session.can_remove("kailai"), has_spoken("kailai", "Kailai"));
        assert_eq!(session.can_remove("max"), has_spoken("max", "Max"));
        assert_eq!(
            session.can_remove("bob"),
            has_spoken("bob", "Bob"),
            "a failed run"
        );
        assert_eq!(session.can_remove("sarah"), Ok(()));
        assert_eq!(session.can_remove("nobody"), Ok(()), "not a member");
        assert_eq!(Session::new().can_remove("max"), Ok(()), "no team yet");
    }

    #[test]
    fn why_a_member_cannot_be_removed_is_said_in_words() {
        let refused = session().can_remove("max").unwrap_err();
        assert_eq!(
            refused.to_string(),
            "Max has spoken in this conversation, so removing Max would rewrite its history"
        );
    }

    #[test]
    fn a_new_team_may_leave_out_only_members_who_have_not_spoken() {
        let session = session();
        let team = session.team().expect("a team").clone();
        assert_eq!(session.can_replace_team(&team), Ok(()));
        assert_eq!(session.can_replace_team(&without(&team, "sarah")), Ok(()));
        let refused = session.can_replace_team(&without(&without(&team, "sarah"), "max"));
        assert!(
            matches!(&refused, Err(CannotRemove::HasSpoken { member, .. }) if member == "max"),
            "{refused:?}"
        );
    }
}
