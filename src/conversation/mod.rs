//! The conversation: a sans-IO routing state machine (docs/architecture.md §6, §19 (seed 004)).
//!
//! It contains no I/O and reads no clock: facts come in through `handle_*` methods (a human
//! typed, an agent replied, an agent failed), with the time as an argument, and what the host
//! must do comes out of [`Conversation::poll_action`], one [`Action`] at a time. The host runs
//! agents, waits for people and shows notices; tests drive the machine directly.
//!
//! ```
//! use agent_chatter::conversation::{Action, Conversation, HumanInput};
//! use agent_chatter::message::Millis;
//!
//! let team = serde_json::from_str(r#"{"id": "t", "name": "Demo", "members": [
//!     {"id": "kailai", "name": "kailai", "displayName": "Kailai", "kind": "human"},
//!     {"id": "max", "name": "max", "displayName": "Max", "kind": "ai", "agentType": "claude-code"}
//! ]}"#).unwrap();
//! let mut conv = Conversation::new();
//! conv.set_team(team);
//! conv.handle_human_input(HumanInput::text("Draft a plan [NEXT: max]"), Millis(1)).unwrap();
//! while let Some(action) = conv.poll_action() {
//!     match action {
//!         // Run the agent with `d.prompt`, then report exactly one outcome.
//!         Action::Deliver(d) => {
//!             let reply = format!("{} did it", d.to); // the agent's final text
//!             conv.handle_agent_replied(&d.to, reply, Millis(2)).unwrap();
//!         }
//!         Action::AwaitHuman { member } => println!("waiting for {member}"),
//!         Action::Finished => println!("done"),
//!         Action::Notice(n) => println!("notice: {n:?}"),
//!     }
//! }
//! assert_eq!(conv.store().len(), 2);
//! assert_eq!(conv.waiting_for(), Some("kailai"));
//! ```
//!
//! Rules (docs/architecture.md §6): the first message comes from a human; each `[NEXT]` addressee
//! becomes a queued delivery (`queue` decides the order and the limits); AI deliveries run one at
//! a time; a human delivery pauses the queue; with nothing queued the first human is awaited;
//! `[DONE]` completes the conversation until a human speaks again; at most
//! `team.settings.max_rounds` AI deliveries run per human message.
//!
//! Decisions where the seeds (docs/architecture.md §19) are silent or disagree:
//! - Order is routing v3 (docs/architecture.md §6), not docs/architecture.md §19 (seed 004)'s plain
//!   FIFO: the addressees of the newest message go first, so in
//!   docs/architecture.md §19 (seed 004)'s scenario 1 sarah (named by max's reply) answers before
//!   carol and bob take their turns on the human's message.
//! - A member addressing itself is skipped with [`Notice::SelfAddressed`] (as the peer: an
//!   agent never answers itself; a human who names themselves is not awaited either).
//! - A human may speak while an agent runs: the message is stored and its addressees queued;
//!   the running delivery finishes first (one delivery at a time).
//! - `[DONE]` while an agent runs: its reply is still stored, but not routed.
//! - Agent failures are stored as system messages, which are never an agent's `[MESSAGE]`
//!   (policy `latest` takes the newest non-system message).
//! - [`Conversation::routing_state`] and [`Conversation::resume`] let a host persist the
//!   queue and waiting state beside a snapshot and resume after a restart.

mod action;
mod input;
mod queue;
mod resolve;
mod state;

use std::collections::VecDeque;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub use action::{Action, Delivery, Notice};
pub use input::{HumanInput, InputError};
use queue::Enqueued;
pub use queue::{QueuedDelivery, RoutingQueue, MAX_PER_PARENT, MAX_QUEUED};
use resolve::{resolve_drop, resolve_next};
pub use state::{ResumeError, RoutingState};

use crate::context::{self, AsOf, BuildError, BuildSettings, Prompt, Recipient, Store, Target};
use crate::explain::BudgetStatus;
use crate::markers::{self, Markers};
use crate::message::{
    Intent, MemberId, MessageId, Millis, Routing, Speaker, SpeakerKind, Text, MAX_MESSAGE_BYTES,
};
use crate::team::{DeliveryPolicy, Member, PromptFormat, Team, TeamSettings};
use crate::text::floor_char_boundary;
use crate::usage::{CapStanding, Usd};

/// Where the conversation stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Status {
    /// No message yet: the first human input starts the session.
    #[default]
    Idle,
    /// An agent is running (a `Deliver` awaits its outcome).
    Running,
    /// Waiting for a human ([`Conversation::waiting_for`]).
    AwaitingHuman,
    /// `[DONE]` was said; the next human message reopens the conversation.
    Completed,
}

/// The delivery whose outcome the machine is waiting for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct InFlight {
    pub to: MemberId,
    /// The `[MESSAGE]` of its prompt.
    pub message: MessageId,
    /// The message that addressed `to`; the reply is stored with this parent.
    pub parent: MessageId,
    pub intent: Intent,
    /// When it was emitted (the time given to the call that emitted it).
    pub since: Millis,
}

/// The routing state machine: owns the team, the message store, the queue and the waiting
/// state. See the module doc for the run loop.
#[derive(Debug, Clone)]
pub struct Conversation {
    /// Shared with the `setTeam` fact it came from (docs/architecture.md §14, "Memory").
    team: Option<Arc<Team>>,
    /// One speaker per member of `team`, in its order: every message a member sends holds
    /// this one (its id, name and display name are not copied per message).
    speakers: Vec<Arc<Speaker>>,
    store: Store,
    queue: RoutingQueue,
    status: Status,
    waiting_for: Option<MemberId>,
    in_flight: Option<InFlight>,
    /// `[DONE]` was said while `in_flight` ran: its reply is stored but not routed.
    in_flight_after_done: bool,
    /// The newest message whose routing was applied (the queue's local set is its children).
    last_completed: Option<MessageId>,
    /// AI deliveries since the last human message (bounded by `max_rounds`).
    rounds: usize,
    actions: VecDeque<Action>,
    /// While a session replays its facts, the prompts of deliveries that are over are never
    /// read: they are built only for the newest one, on request ([`Self::build_deferred`]).
    defer_prompts: bool,
    /// What the newest deferred delivery's prompt is built from.
    deferred: Option<DuePrompt>,
    /// What the runs of this conversation cost, as reported (a team's `maxCostUsd` bounds it).
    spent: Usd,
    /// The cap the last run crossed (it started under it, ended above it) and by how much it
    /// passed it, for the cap's notice; `None` when the last run crossed none.
    last_run_crossed: Option<(Usd, Usd)>,
    /// The budget status of each member's last prompt built, so a notice marks the crossing
    /// into warning or critical, not every prompt past it (seed 003's budget events).
    budget_status: std::collections::BTreeMap<MemberId, BudgetStatus>,
}

/// A delivery's prompt as a recipe: everything `context::build` reads when it is due. Built
/// at once, or (replay) only for the newest delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
struct DuePrompt {
    recipient: Recipient,
    target: Target,
    settings: BuildSettings,
    len: usize,
    team_task: Option<String>,
}

impl Default for Conversation {
    fn default() -> Self {
        Self::new()
    }
}

impl Conversation {
    /// An empty conversation without a team: every input is refused until [`Self::set_team`].
    pub fn new() -> Self {
        Conversation {
            team: None,
            speakers: Vec::new(),
            store: Store::new(),
            queue: RoutingQueue::new(),
            status: Status::Idle,
            waiting_for: None,
            in_flight: None,
            in_flight_after_done: false,
            last_completed: None,
            rounds: 0,
            actions: VecDeque::new(),
            defer_prompts: false,
            deferred: None,
            spent: Usd::default(),
            last_run_crossed: None,
            budget_status: std::collections::BTreeMap::new(),
        }
    }

    /// Replay mode (for [`crate::session::Session::replay`]): deliveries are emitted with an
    /// empty prompt, the newest one remembered; [`Self::build_deferred`] builds it exactly as it
    /// would have been built when due. Off again, prompts are built as usual.
    pub(crate) fn defer_prompts(&mut self, on: bool) {
        self.defer_prompts = on;
        if !on {
            self.deferred = None;
        }
    }

    /// The prompt of the newest delivery emitted in replay mode, as it was due then.
    pub(crate) fn build_deferred(&self) -> Option<Result<Prompt, BuildError>> {
        Some(self.deferred.as_ref()?.build(&self.store))
    }

    /// A conversation with `team` set.
    pub fn with_team(team: Team) -> Self {
        let mut conv = Self::new();
        conv.set_team(team);
        conv
    }

    /// Replaces the team and resets everything (store, team task, queue, waiting state,
    /// pending actions), as docs/architecture.md §19 (seed 004)'s `setTeam`. An AI member whose
    /// agent type the core does not know raises [`Notice::UnknownAgentType`] (its prompts use the
    /// plain format).
    pub fn set_team(&mut self, team: Team) {
        self.set_shared_team(Arc::new(team));
    }

    /// [`Conversation::set_team`] with a team held elsewhere too (the session's fact log).
    pub(crate) fn set_shared_team(&mut self, team: Arc<Team>) {
        *self = Self::new();
        for member in team.members.iter().filter(|m| m.is_ai()) {
            let agent_type = member.agent_type.clone().unwrap_or_default();
            if crate::team::prompt_format(&agent_type) == PromptFormat::Plain
                && crate::team::normalize_agent_type(&agent_type) != crate::team::SIMULATED
            {
                self.notice(Notice::UnknownAgentType {
                    member: member.id.clone(),
                    agent_type,
                });
            }
        }
        self.install(team);
    }

    /// Holds `team` and its members' speakers.
    fn install(&mut self, team: Arc<Team>) {
        self.speakers = team.members.iter().map(|m| Arc::new(m.speaker())).collect();
        self.team = Some(team);
    }

    /// The shared speaker of `member`, a member of the team held.
    fn speaker_of(&self, member: &Member) -> Arc<Speaker> {
        match self.speakers.iter().find(|s| s.id == member.id) {
            Some(speaker) => Arc::clone(speaker),
            None => Arc::new(member.speaker()),
        }
    }

    /// Replaces the team's settings (window, budgets, delivery policy, round bound) without
    /// touching the conversation: later prompts use them, queued deliveries stay queued. A
    /// no-op before [`Self::set_team`]. (A team shared with a fact is copied first: the fact
    /// keeps the settings it was given.)
    pub fn set_settings(&mut self, settings: TeamSettings) {
        if let Some(team) = self.team.as_mut() {
            Arc::make_mut(team).settings = settings;
        }
    }

    /// What the runs of this conversation cost so far, as their outcome facts reported.
    pub fn spent(&self) -> Usd {
        self.spent
    }

    /// Sets what the runs cost so far (the session counts it from the outcome facts, before
    /// applying the one that reports it, so the next delivery is decided with it).
    pub(crate) fn set_spent(&mut self, spent: Usd) {
        self.spent = spent;
    }

    /// Notes the cap the last run crossed and by how much it passed it, if it crossed one.
    pub(crate) fn set_last_run_crossed(&mut self, crossed: Option<(Usd, Usd)>) {
        self.last_run_crossed = crossed;
    }

    /// By how much the last run passed `limit`, when it crossed that very cap (not when the
    /// cap was lowered below the spend afterwards, nor when a later run reported no cost).
    fn passed_cap_by(&self, limit: Usd) -> Option<Usd> {
        self.last_run_crossed
            .filter(|(cap, _)| *cap == limit)
            .map(|(_, by)| by)
    }

    // ----------------------------------------------------------------------------- getters

    pub fn team(&self) -> Option<&Team> {
        self.team.as_deref()
    }

    /// The team in use, shared: a host that keeps its own handle on it clones a count, not
    /// the team.
    pub fn shared_team(&self) -> Option<&Arc<Team>> {
        self.team.as_ref()
    }

    /// Every stored message (raw) and the team task.
    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn status(&self) -> Status {
        self.status
    }

    /// The human whose input is awaited: a human without `[FROM]` is taken to be them.
    pub fn waiting_for(&self) -> Option<&str> {
        self.waiting_for.as_deref()
    }

    /// Pending deliveries in enqueue order.
    pub fn pending(&self) -> &[QueuedDelivery] {
        self.queue.items()
    }

    /// Pending deliveries in the order they will run if the next message routes no one
    /// further (the page's queue view; see `RoutingQueue::run_order`).
    pub fn pending_in_run_order(&self) -> Vec<&QueuedDelivery> {
        self.queue.run_order()
    }

    /// The delivery whose outcome is awaited, if any.
    pub fn in_flight(&self) -> Option<&InFlight> {
        self.in_flight.as_ref()
    }

    /// AI deliveries emitted since the last human message.
    pub fn rounds(&self) -> usize {
        self.rounds
    }

    /// The routing state beyond the messages, for a host to persist beside a snapshot of
    /// [`Self::store`] (docs/architecture.md §14).
    pub fn routing_state(&self) -> RoutingState {
        RoutingState {
            queue: self.queue.clone(),
            status: self.status,
            waiting_for: self.waiting_for.clone(),
            in_flight: self.in_flight.clone(),
            in_flight_after_done: self.in_flight_after_done,
            last_completed: self.last_completed.clone(),
            rounds: self.rounds,
        }
    }

    /// Resumes a persisted conversation: `store` (imported from a snapshot) and `state` from
    /// [`Self::routing_state`], validated against `team` first (a bad state changes nothing and
    /// the error names the field). The host lost whatever it was doing, so the pending action
    /// is emitted again: the in-flight delivery as a fresh `Deliver` (prompt rebuilt, `since`
    /// = `at`), or `AwaitHuman` for the awaited human.
    pub fn resume(
        team: Team,
        store: Store,
        state: RoutingState,
        at: Millis,
    ) -> Result<Self, ResumeError> {
        state.validate(&team, &store)?;
        let mut conv = Self::new();
        conv.queue = state.queue;
        conv.status = state.status;
        conv.waiting_for = state.waiting_for;
        conv.in_flight_after_done = state.in_flight_after_done;
        conv.last_completed = state.last_completed;
        conv.rounds = state.rounds;
        conv.store = store;
        if let Some(mut flight) = state.in_flight {
            let built = team.member(&flight.to).map(|m| {
                DuePrompt::due(&conv.store, &team, m, &flight.message, &flight.parent)
                    .and_then(|d| d.build(&conv.store))
            });
            match built {
                Some(Ok(prompt)) => {
                    flight.since = at;
                    conv.actions.push_back(Action::Deliver(Box::new(Delivery {
                        to: flight.to.clone(),
                        message: flight.message.clone(),
                        parent: Some(flight.parent.clone()),
                        intent: flight.intent,
                        prompt,
                    })));
                    conv.in_flight = Some(flight);
                }
                Some(Err(e)) => {
                    return Err(ResumeError {
                        path: "inFlight".into(),
                        problem: e.to_string(),
                    })
                }
                None => {
                    return Err(ResumeError {
                        path: "inFlight.to".into(),
                        problem: format!("'{}' is not a member of the team", flight.to),
                    })
                }
            }
        } else if let (Status::AwaitingHuman, Some(member)) = (conv.status, &conv.waiting_for) {
            conv.actions.push_back(Action::AwaitHuman {
                member: member.clone(),
            });
        }
        conv.install(Arc::new(team));
        Ok(conv)
    }

    // ------------------------------------------------------------------------------- facts

    /// A human typed `input.text`. Resolves the sender (explicit id → `[FROM]` → the awaited
    /// human → the only human), stores the text raw, applies its markers and advances the
    /// queue. On error nothing is stored or changed.
    pub fn handle_human_input(
        &mut self,
        input: HumanInput,
        at: Millis,
    ) -> Result<MessageId, InputError> {
        self.human_said(input.text.into(), input.sender.as_deref(), at)
    }

    /// [`Conversation::handle_human_input`] with the text shared with the fact it came from:
    /// the stored message holds `text` itself.
    pub(crate) fn human_said(
        &mut self,
        text: Text,
        sender: Option<&str>,
        at: Millis,
    ) -> Result<MessageId, InputError> {
        let team = self.team.as_deref().ok_or(InputError::NoTeam)?;
        input::check_size(&text)?;
        let parsed = markers::parse(&text);
        let sender = input::resolve_sender(
            team,
            sender,
            parsed.from.as_deref(),
            self.waiting_for.as_deref(),
        )?;
        if !sender.is_human() {
            return Err(if self.store.is_empty() {
                InputError::FirstMessageFromAi {
                    member: sender.id.clone(),
                }
            } else {
                InputError::AiAsHuman {
                    member: sender.id.clone(),
                }
            });
        }
        // Accepted: from here on nothing fails.
        let speaker = self.speaker_of(sender);
        self.waiting_for = None;
        self.rounds = 0;
        if self.status == Status::Completed {
            self.status = Status::Running;
        }
        let id = self.record(speaker, text, parsed, None, at);
        self.advance(at);
        Ok(id)
    }

    /// Agent `member` answered its in-flight delivery with `text` (its final text, stored
    /// exactly as given). Its markers are applied like a human's, except `[FROM]`, which is
    /// ignored with a notice. Refused, with nothing changed, unless a delivery to `member` is
    /// in flight.
    pub fn handle_agent_replied(
        &mut self,
        member: &str,
        text: String,
        at: Millis,
    ) -> Result<MessageId, InputError> {
        self.agent_replied(member, text.into(), at)
    }

    /// [`Conversation::handle_agent_replied`] with the text shared with the fact it came from.
    pub(crate) fn agent_replied(
        &mut self,
        member: &str,
        text: Text,
        at: Millis,
    ) -> Result<MessageId, InputError> {
        self.check_in_flight(member)?;
        input::check_size(&text)?;
        let Some(speaker) = self
            .team
            .as_ref()
            .and_then(|t| t.member(member))
            .map(|m| self.speaker_of(m))
        else {
            return Err(self.not_in_flight(member));
        };
        let Some(flight) = self.in_flight.take() else {
            return Err(self.not_in_flight(member));
        };
        self.drop_undrained_deliver(member);
        let parsed = markers::parse(&text);
        let ai_from = parsed.from.is_some();
        let after_done = std::mem::take(&mut self.in_flight_after_done);
        let routed = !after_done && self.status != Status::Completed;
        let answering = (flight.parent.clone(), flight.intent);
        let id = if routed {
            self.record(speaker, text, parsed, Some(answering), at)
        } else {
            let id = self.record_unrouted(speaker, text, parsed, answering, at);
            self.notice(Notice::NotRoutedAfterDone {
                message: id.clone(),
            });
            id
        };
        if ai_from {
            self.notice(Notice::FromIgnored {
                message: id.clone(),
                member: flight.to,
            });
        }
        self.advance(at);
        Ok(id)
    }

    /// Agent `member`'s in-flight delivery failed (timeout, crash, bad output). Recorded as a
    /// system notice message (`{name} failed: {reason}`); the queue continues and nothing
    /// stored is lost. Refused, with nothing changed, unless a delivery to `member` is in
    /// flight. Returns the notice message's id.
    pub fn handle_agent_failed(
        &mut self,
        member: &str,
        reason: String,
        at: Millis,
    ) -> Result<MessageId, InputError> {
        self.agent_failed(member, reason, at, true)
    }

    /// [`Self::handle_agent_failed`], its notice shown in later prompts only when
    /// `reaches_prompts` ([`crate::session::Failure::reaches_prompts`]).
    pub(crate) fn agent_failed(
        &mut self,
        member: &str,
        reason: String,
        at: Millis,
        reaches_prompts: bool,
    ) -> Result<MessageId, InputError> {
        self.check_in_flight(member)?;
        let Some(flight) = self.in_flight.take() else {
            return Err(self.not_in_flight(member));
        };
        self.drop_undrained_deliver(member);
        self.in_flight_after_done = false;
        let name = self
            .team
            .as_ref()
            .and_then(|t| t.member(&flight.to))
            .map_or_else(|| flight.to.clone(), |m| m.name.clone());
        let mut content = format!("{name} failed: {reason}");
        content.truncate(floor_char_boundary(&content, MAX_MESSAGE_BYTES));
        let routing = Routing {
            parent: Some(flight.parent),
            intent: Some(flight.intent),
            ..Routing::default()
        };
        let id = self
            .store
            .push(Speaker::system(), content, routing, at)
            .id
            .clone();
        if !reaches_prompts {
            self.store.withhold_latest();
        }
        self.advance(at);
        Ok(id)
    }

    /// Queues `member`'s delivery answering `parent` again, at `intent` (a retry of a failed
    /// run; the session checks it may be retried). A wait for a human, or a conversation
    /// completed meanwhile, is over: the user chose to go on. Then the queue runs.
    pub(crate) fn retry(&mut self, member: &str, parent: MessageId, intent: Intent, at: Millis) {
        let _ = self.queue.push(member, &parent, intent);
        if self.in_flight.is_none() {
            self.waiting_for = None;
            self.status = Status::Running;
        }
        self.advance(at);
    }

    /// `member` leaves the team from now on (the session checks they may): the stored
    /// messages keep their speakers, deliveries queued to them are dropped, and a wait for
    /// them is over (the queue goes on). Raises [`Notice::MemberLeft`].
    pub(crate) fn member_left(&mut self, member: &Member, at: Millis) {
        if let Some(team) = self.team.as_mut() {
            let members = &mut Arc::make_mut(team).members;
            if let Some(i) = members.iter().position(|m| m.id == member.id) {
                members.remove(i);
            }
        }
        if let Some(i) = self.speakers.iter().position(|s| s.id == member.id) {
            self.speakers.remove(i);
        }
        let dropped = self.queue.remove_where(&|q| q.to == member.id).len();
        self.notice(Notice::MemberLeft {
            member: member.id.clone(),
            name: member.display_name.clone(),
            after: self.store.len(),
            dropped,
        });
        if self.waiting_for.as_deref() == Some(member.id.as_str()) {
            self.waiting_for = None;
            self.advance(at);
        }
    }

    /// The next thing the host must do, or `None` when there is nothing until the next fact.
    #[must_use]
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    // ----------------------------------------------------------------------------- internals

    fn notice(&mut self, notice: Notice) {
        self.actions.push_back(Action::Notice(notice));
    }

    /// A delivery answered (or failed) before its `Deliver` was polled: the action is
    /// withdrawn, so a host that polls afterwards never runs an agent whose outcome is in.
    fn drop_undrained_deliver(&mut self, member: &str) {
        self.actions
            .retain(|a| !matches!(a, Action::Deliver(d) if d.to == member));
    }

    fn not_in_flight(&self, member: &str) -> InputError {
        InputError::NotInFlight {
            member: member.to_string(),
            expected: self.in_flight.as_ref().map(|f| f.to.clone()),
        }
    }

    pub(crate) fn check_in_flight(&self, member: &str) -> Result<(), InputError> {
        match &self.in_flight {
            Some(f) if f.to == member => Ok(()),
            _ => Err(self.not_in_flight(member)),
        }
    }

    /// Applies the team task marker (any sender, routed or not).
    fn apply_team_task(&mut self, markers: &Markers) {
        if let Some(task) = markers.team_task.as_deref() {
            if let Some(cut) = self.store.set_team_task(Some(task)) {
                self.notice(Notice::TeamTaskTruncated {
                    from: cut.from,
                    to: cut.to,
                });
            }
        }
    }

    /// Stores a reply that arrived after `[DONE]`: team task applied, routing recorded as
    /// written but not acted on.
    fn record_unrouted(
        &mut self,
        speaker: Arc<Speaker>,
        text: Text,
        markers: Markers,
        (parent, intent): (MessageId, Intent),
        at: Millis,
    ) -> MessageId {
        self.apply_team_task(&markers);
        let routing = Routing {
            raw_next: markers.next,
            is_done: markers.done,
            parent: Some(parent),
            intent: Some(intent),
            ..Routing::default()
        };
        self.store
            .push_shared(speaker, text, routing, at)
            .id
            .clone()
    }

    /// Stores a message and applies its markers in order: team task, then `[DONE]` (drops
    /// everything, ignores `[NEXT]`) or `[DROP]` before `[NEXT]`.
    fn record(
        &mut self,
        speaker: Arc<Speaker>,
        text: Text,
        markers: Markers,
        answering: Option<(MessageId, Intent)>,
        at: Millis,
    ) -> MessageId {
        self.apply_team_task(&markers);
        let team = self.team.as_deref();
        let next = resolve_next(team, &speaker.id, &markers.next);
        let drop = markers.drop.as_ref().map(|d| resolve_drop(team, d));
        let done = markers.done;
        let (parent, intent) = answering.map_or((None, None), |(p, i)| (Some(p), Some(i)));
        let routing = Routing {
            raw_next: markers.next,
            resolved: if done { Vec::new() } else { next.ids.clone() },
            resolved_names: if done { Vec::new() } else { next.names.clone() },
            is_done: done,
            parent,
            intent,
        };
        let id = self
            .store
            .push_shared(speaker, text, routing, at)
            .id
            .clone();
        self.last_completed = Some(id.clone());

        if done {
            self.queue.clear();
            self.waiting_for = None;
            if self.in_flight.is_some() {
                self.in_flight_after_done = true;
            }
            let names = next.all_names;
            if !names.is_empty() {
                self.notice(Notice::NextIgnoredAfterDone {
                    message: id.clone(),
                    names,
                });
            }
            self.status = Status::Completed;
            self.actions.push_back(Action::Finished);
            return id;
        }

        if let Some(drop) = drop {
            if !drop.unresolved.is_empty() {
                self.notice(Notice::UnresolvedDropTargets {
                    message: id.clone(),
                    names: drop.unresolved,
                });
            }
            let removed = match drop.targets {
                None => self.queue.clear(),
                Some(targets) => self.queue.remove_where(&|i| targets.contains(&i.to)),
            };
            if !removed.is_empty() {
                let removed = removed.into_iter().map(|i| i.to).collect();
                self.notice(Notice::Dropped {
                    message: id.clone(),
                    removed,
                });
            }
        }
        if !next.unresolved.is_empty() {
            self.notice(Notice::UnresolvedAddressees {
                message: id.clone(),
                names: next.unresolved,
            });
        }
        if let Some(member) = next.self_addressed {
            self.notice(Notice::SelfAddressed {
                message: id.clone(),
                member,
            });
        }
        for (to, intent) in next.targets {
            let notice = match self.queue.push(&to, &id, intent) {
                Enqueued::Queued => None,
                Enqueued::Demoted { from } => Some(Notice::Demoted {
                    to,
                    parent: id.clone(),
                    from,
                    limit: MAX_PER_PARENT,
                }),
                Enqueued::Duplicate => Some(Notice::AlreadyQueued {
                    to,
                    parent: id.clone(),
                    intent,
                }),
                Enqueued::Full => Some(Notice::QueueFull {
                    to,
                    parent: id.clone(),
                    limit: MAX_QUEUED,
                }),
            };
            if let Some(notice) = notice {
                self.notice(notice);
            }
        }
        id
    }

    /// Runs the queue until a delivery is in flight, a human is awaited, or the conversation
    /// is completed. Emits exactly one of `Deliver` / `AwaitHuman` when it stops on its own.
    fn advance(&mut self, at: Millis) {
        if self.in_flight.is_some()
            || self.status == Status::Completed
            || self.waiting_for.is_some()
        {
            return;
        }
        let Some(team) = self.team.as_ref() else {
            return;
        };
        loop {
            let Some(item) = self.queue.pop_next(self.last_completed.as_ref()) else {
                // Nothing queued: wait for the first human (docs/architecture.md §19 (seed 004)
                // routeToNext fallback).
                self.status = Status::AwaitingHuman;
                if let Some(first) = team.humans().next() {
                    self.waiting_for = Some(first.id.clone());
                    self.actions.push_back(Action::AwaitHuman {
                        member: first.id.clone(),
                    });
                }
                return;
            };
            let Some(member) = team.member(&item.to) else {
                continue;
            };
            if member.is_human() {
                self.status = Status::AwaitingHuman;
                self.waiting_for = Some(member.id.clone());
                self.actions.push_back(Action::AwaitHuman {
                    member: member.id.clone(),
                });
                return;
            }
            let limit = team.settings.max_rounds;
            if self.rounds >= limit {
                let dropped = drop_ai_deliveries(&mut self.queue, team, item.to);
                self.actions
                    .push_back(Action::Notice(Notice::RoundLimitReached { limit, dropped }));
                continue;
            }
            let cap = team.settings.max_cost_usd.map(|cap| CapStanding {
                cap,
                spent: self.spent,
            });
            if let Some(limit) = cap.filter(|c| c.reached()).map(|c| c.cap) {
                // docs/architecture.md §14c: the team's spending cap stops every further AI
                // delivery, now and after the next human message, until it is raised.
                let dropped = drop_ai_deliveries(&mut self.queue, team, item.to);
                self.actions
                    .push_back(Action::Notice(Notice::CostLimitReached {
                        limit,
                        spent: self.spent,
                        passed_by: self.passed_cap_by(limit),
                        dropped,
                    }));
                continue;
            }
            let current = current_message(&self.store, team.settings.delivery, &item.parent);
            let due = DuePrompt::due(&self.store, team, member, &current, &item.parent);
            let built = if self.defer_prompts {
                due.map(|d| {
                    self.deferred = Some(d);
                    Prompt::not_built()
                })
            } else {
                due.and_then(|d| d.build(&self.store))
            };
            match built {
                Ok(prompt) => {
                    // Replayed deliveries build no prompt: only a built one is measured.
                    if !self.defer_prompts {
                        if let Some(crossed) =
                            budget_crossed(&mut self.budget_status, &item.to, &prompt)
                        {
                            self.actions.push_back(Action::Notice(crossed));
                        }
                    }
                    if let Some((from_bytes, to_bytes)) = prompt.explain.message_cut() {
                        self.actions.push_back(Action::Notice(Notice::MessageCut {
                            to: item.to.clone(),
                            message: current.clone(),
                            from_bytes,
                            to_bytes,
                        }));
                    }
                    self.rounds += 1;
                    self.status = Status::Running;
                    self.in_flight = Some(InFlight {
                        to: item.to.clone(),
                        message: current.clone(),
                        parent: item.parent.clone(),
                        intent: item.intent,
                        since: at,
                    });
                    self.actions.push_back(Action::Deliver(Box::new(Delivery {
                        to: item.to,
                        message: current,
                        parent: Some(item.parent),
                        intent: item.intent,
                        prompt,
                    })));
                    return;
                }
                Err(e) => {
                    self.actions.push_back(Action::Notice(Notice::PromptFailed {
                        to: item.to,
                        error: e.to_string(),
                    }));
                }
            }
        }
    }
}

/// The message a delivery answers: its parent, or under [`DeliveryPolicy::Latest`] the
/// newest message that is not a system notice (agent failures are never an agent's [MESSAGE]).
fn current_message(store: &Store, delivery: DeliveryPolicy, parent: &MessageId) -> MessageId {
    match delivery {
        DeliveryPolicy::Parent => parent.clone(),
        DeliveryPolicy::Latest => store
            .messages()
            .iter()
            .rev()
            .find(|m| m.speaker.kind != SpeakerKind::System)
            .map_or_else(|| parent.clone(), |m| m.id.clone()),
    }
}

/// Records `to`'s budget status for this prompt; the notice when it got worse than before
/// (each step up is told once, not every prompt over the line).
fn budget_crossed(
    seen: &mut std::collections::BTreeMap<MemberId, BudgetStatus>,
    to: &MemberId,
    prompt: &Prompt,
) -> Option<Notice> {
    let status = prompt.explain.status;
    let before = seen.insert(to.clone(), status).unwrap_or(BudgetStatus::Ok);
    (status > before).then(|| Notice::BudgetCrossed {
        to: to.clone(),
        status,
        total_bytes: prompt.explain.total_bytes,
        max_bytes: prompt.explain.max_bytes,
    })
}

/// Stops an AI run (a bound reached): `first`, the delivery that was due, and every AI
/// delivery still queued are dropped; humans' stay. Returns whom they were for, in order.
fn drop_ai_deliveries(queue: &mut RoutingQueue, team: &Team, first: MemberId) -> Vec<MemberId> {
    let is_ai = |id: &str| team.member(id).is_some_and(|m| m.is_ai());
    let mut dropped = vec![first];
    dropped.extend(
        queue
            .remove_where(&|i| is_ai(&i.to))
            .into_iter()
            .map(|i| i.to),
    );
    dropped
}

impl DuePrompt {
    /// What the prompt `member` receives for `current`, addressed by `parent`, reads from the
    /// store as it is now (its messages must exist, as `context::build` requires).
    fn due(
        store: &Store,
        team: &Team,
        member: &Member,
        current: &MessageId,
        parent: &MessageId,
    ) -> Result<Self, BuildError> {
        if store.position(current).is_none() {
            return Err(BuildError::UnknownMessage(current.clone()));
        }
        if store.position(parent).is_none() {
            return Err(BuildError::UnknownParent(parent.clone()));
        }
        Ok(DuePrompt {
            recipient: Recipient::from_member(member),
            target: Target {
                current: current.clone(),
                parent: Some(parent.clone()),
            },
            settings: BuildSettings::for_member(team, member),
            len: store.len(),
            team_task: store.team_task().map(str::to_string),
        })
    }

    /// The prompt, from `store` as it was when it was due (later messages do not exist for it).
    fn build(&self, store: &Store) -> Result<Prompt, BuildError> {
        let as_of = AsOf {
            len: self.len,
            team_task: self.team_task.as_deref(),
        };
        context::build_as_of(store, &self.recipient, &self.target, &self.settings, as_of)
    }
}
