//! Who performs the session's actions (docs/architecture.md §13): the page itself
//! ([`Simulation`]) or the bridge it mirrors ([`Bridge`], §14b). One [`Host`] is chosen when
//! the page opens and provided as context; components reach it with [`use_host`] and ask it to
//! act, never which one it is.
//!
//! The two hosts are this module's children and import neither it nor its users (the
//! components): they share only the page's state ([`crate::state`]) and the [`Ticket`].

mod bridge;
mod done;
mod simulation;
mod ticket;

use agent_chatter::activity::{Activity, ApprovalRequest};
use agent_chatter::config;
use agent_chatter::message::MemberId;
use agent_chatter::protocol::{AgentReport, RunDetails};
use agent_chatter::session::{CannotRemove, Fact, Session};
use agent_chatter::team::{RunSettings, Team, TeamSettings};
use agent_chatter::usage::Silence;
use leptos::prelude::*;

pub use bridge::{Bridge, Verification};
pub use done::Done;
pub use simulation::Simulation;
pub use ticket::Ticket;

use crate::files::{self, Opened};
use crate::library::{self, Entry, Hit};
use crate::state::AppState;
use crate::status::{self, MemberStatus, Runner};

/// How an AI member's agent is run (docs/architecture.md §14c), shown read only: where the
/// settings come from and why the page cannot change them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunInfo {
    /// Environment values are never sent: only the names matter here.
    pub settings: RunSettings,
    /// Its working directory; `None`: the runner's own.
    pub dir: Option<String>,
    /// Where the settings come from (`team file /home/me/team.json`).
    pub source: Option<String>,
    /// Why they are read only, in a sentence.
    pub note: &'static str,
}

/// The page's host: either the simulation or a bridge. `Copy`: every part is a signal or a
/// stored value.
/// One value per page, copied into closures: a `Box` would end `Copy`, and the size of a
/// handful of signal ids does not matter here.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Copy)]
pub enum Host {
    /// No bridge: the page applies its own facts, agents are answered by the user or the
    /// core's simulator, and the log is kept in this browser.
    Simulation(Simulation),
    /// Mirroring a bridge session over its WebSocket; the bridge runs the agents and keeps
    /// the log.
    Bridge(Bridge),
}

/// The page's host, from the context [`crate::app::App`] provides.
pub fn use_host() -> Host {
    expect_context::<Host>()
}

impl Host {
    /// The host for this page: a bridge when the address carries its launch token
    /// (`#token=…`), else the simulation, which opens a shared link, the session stored in
    /// this browser, or the demo.
    pub fn start(state: AppState) -> Host {
        if let Some(token) = bridge::token_in_url() {
            // The bridge sends its session once connected.
            match Bridge::connect(state, token) {
                Ok(bridge) => return Host::Bridge(bridge),
                Err(e) => {
                    state.report(e);
                    return Host::Simulation(Simulation::new(state));
                }
            }
        }
        let simulation = Simulation::new(state);
        simulation.open_first();
        Host::Simulation(simulation)
    }

    fn state(&self) -> AppState {
        match self {
            Host::Simulation(s) => s.state(),
            Host::Bridge(b) => b.state(),
        }
    }

    /// Applies `fact` (a team, settings, a human message, a loaded history); a refusal changes
    /// nothing and its reason goes to the banner. A bridge commits it and sends it back.
    pub fn apply(&self, fact: Fact) -> bool {
        match self {
            Host::Simulation(s) => s.apply(fact),
            Host::Bridge(b) => b.apply(fact),
        }
    }

    /// Applies `change` to a copy of the team in use, re-reads it through the core's team
    /// reader (so an invalid edit is refused naming the field) and goes on with the
    /// conversation under it. Whether it was applied (a refusal is reported on the banner).
    pub fn edit_team(&self, change: impl FnOnce(&mut Team)) -> bool {
        let state = self.state();
        let Some(mut team) = state
            .team
            .get_untracked()
            .map(std::sync::Arc::unwrap_or_clone)
        else {
            state.report("no team to edit: open a team config first");
            return false;
        };
        change(&mut team);
        if let Some(refusal) = state
            .session
            .with_untracked(|s| removes_a_speaker(s, &team))
        {
            state.report(refusal);
            return false;
        }
        // Through text, as a session file carries it: a `Value` on the way would be a second
        // serializer of every team type in the page's wasm (docs/architecture.md §18).
        let checked = serde_json::to_string(&team)
            .map_err(|e| e.to_string())
            .and_then(|text| config::load_team(&text).map_err(|e| e.to_string()));
        match checked {
            Ok(team) => match self {
                Host::Simulation(s) => s.edit_team(team),
                Host::Bridge(b) => b.edit_team(team),
            },
            Err(e) => {
                state.report(format!("team not changed: {e}"));
                false
            }
        }
    }

    /// `member` (an id) leaves the team from now on: a `memberLeft` fact at the end of the log
    /// (docs/architecture.md §6b), so their messages stay theirs and they get no more
    /// messages; a bridge is asked with `leaveTeam` for the session shown. Checked here first,
    /// so a refusal (they run, the team's only human) is said at once. Whether it was taken.
    pub fn leave_team(&self, member: &MemberId) -> bool {
        let state = self.state();
        if let Err(e) = state.session.with_untracked(|s| s.can_leave(member)) {
            state.report(format!("team not changed: {e}"));
            return false;
        }
        match self {
            Host::Simulation(s) => s.apply(Fact::MemberLeft {
                member: member.clone(),
                at: crate::browser::now(),
            }),
            Host::Bridge(b) => b.leave_team(member),
        }
    }

    /// New settings for the conversation from now on (a `setSettings` fact).
    pub fn set_settings(&self, settings: TeamSettings) {
        self.apply(Fact::set_settings(settings));
    }

    /// The human composer's message, as typed (markers included); its ticket when the host
    /// took it, which [`Host::is_stored`] follows.
    pub fn send_human(&self, text: String) -> Option<Ticket> {
        match self {
            Host::Simulation(s) => s.send_human(text).then(Ticket::issue),
            Host::Bridge(b) => b.send_human(text),
        }
    }

    /// Whether the message of `ticket` is in the log (reactive). The simulation stores a
    /// message when it takes it; a bridge when its `fact` event comes back.
    pub fn is_stored(&self, ticket: Ticket) -> bool {
        match self {
            Host::Simulation(_) => true,
            Host::Bridge(b) => b.is_stored(ticket),
        }
    }

    /// Opens a file the user chose (`name`, its `text`; see [`files::open`]). Page alone, it
    /// opens as a session of the library: over a conversation, a new one beside it, so
    /// nothing is replaced and nothing needs asking (docs/architecture.md §13). A bridge asks
    /// first when a team or a scenario would replace the conversation shown, and keeps its
    /// own log against a session file.
    pub fn open_file(&self, name: &str, text: &str) {
        let state = self.state();
        let team = state.team.get_untracked();
        let opened = files::open(name, text, team.as_deref());
        let bridge = match self {
            Host::Bridge(b) => b,
            Host::Simulation(sim) => return open_in_simulation(sim, name, opened),
        };
        let replaces = match &opened {
            // A bridge keeps its own log and refuses a session file: nothing is replaced.
            Ok(Opened::Session(_)) => None,
            Ok(Opened::Team(_)) => Some("team (a new team starts a new conversation)"),
            Ok(Opened::Scenario(_)) => Some("scenario"),
            Err(_) => None,
        };
        if replaces.is_some_and(|what| !may_replace(&state, name, what)) {
            return;
        }
        // The bridge says it opened once the file's fact is back (a team starts a new
        // conversation: a `setTeam` fact resets everything).
        let sent = match opened {
            Ok(Opened::Session(_)) => return bridge.refuse_session_file(name),
            Ok(Opened::Team(team)) => bridge.open_file(name, Fact::set_team(team)),
            Ok(Opened::Scenario(scenario)) => {
                bridge.open_file(name, Fact::LoadScenario { scenario })
            }
            Err(e) => return state.report(e),
        };
        if sent {
            state.error.set(None);
        }
    }

    /// The last file opened or fork made at the user's request, as the host did it (the
    /// bridge's answer, or the simulation's own act); the header says it until dismissed.
    pub fn done(&self) -> RwSignal<Option<Done>> {
        match self {
            Host::Simulation(s) => s.done(),
            Host::Bridge(b) => b.done(),
        }
    }

    /// Starts over, once the user agrees: the demo conversation (simulation), or a new
    /// session of the bridge with the same team.
    pub fn start_over(&self) {
        match self {
            Host::Simulation(s) => s.reset_demo(),
            Host::Bridge(b) => b.new_session(),
        }
    }

    /// What [`Host::start_over`] does, as its button says it.
    pub fn start_over_label(&self) -> &'static str {
        match self {
            Host::Simulation(_) => "reset demo",
            Host::Bridge(_) => "new session",
        }
    }

    /// Opens a shared link's fragment (`#share=…`) given to a page already open: as the
    /// session shown (simulation), or as a new session of the bridge, never as a local session
    /// the bridge does not hold.
    pub fn open_link(&self, fragment: &str) {
        match self {
            Host::Simulation(s) => s.open_shared(fragment),
            Host::Bridge(b) => b.open_link(fragment),
        }
    }

    /// Keeps the shared case shown (see [`crate::shared_case`]).
    pub fn keep_shared(&self) {
        match self {
            Host::Simulation(s) => s.keep_shared(),
            Host::Bridge(b) => b.keep_shared(),
        }
    }

    /// Discards the shared case shown: the session it replaced shows again.
    pub fn discard_shared(&self) {
        match self {
            Host::Simulation(s) => s.discard_shared(),
            Host::Bridge(b) => b.discard_shared(),
        }
    }

    /// The SHA-256 of what the host sent `member` for the message `message` (`msg-3`), when it
    /// says (reactive): a bridge reports every delivery it made; the simulation sends nothing.
    pub fn sent_digest(&self, message: &str, member: &str) -> Option<String> {
        match self {
            Host::Simulation(_) => None,
            Host::Bridge(b) => b.sent_digest(message, member),
        }
    }

    /// How the AI member `member` is answered on the bridge's machine (reactive); `None` in
    /// simulation, where the user or the simulator answers.
    pub fn agent_report(&self, member: &MemberId) -> Option<AgentReport> {
        match self {
            Host::Simulation(_) => None,
            Host::Bridge(b) => b.agent_report(member),
        }
    }

    /// Why runs of `member` (of every AI member: `None`) report no usage (reactive): the
    /// simulator answers every run page alone, and a bridge's members it says are simulated;
    /// otherwise their CLIs reported nothing.
    pub fn usage_silence(&self, member: Option<&MemberId>) -> Silence {
        let simulated = match (self, member) {
            (Host::Simulation(_), _) => true,
            (Host::Bridge(b), Some(id)) => b.agent_report(id).is_some_and(|a| a.simulated),
            (Host::Bridge(b), None) => b.every_agent_simulated(),
        };
        if simulated {
            Silence::Simulated
        } else {
            Silence::NotReported
        }
    }

    /// How the AI member `member` is run, read only (reactive): as the bridge applies it,
    /// from its report; in simulation, the member's own settings in the team, which a bridge
    /// would apply. `None` for a human, or before the bridge says.
    pub fn run_info(&self, member: &MemberId) -> Option<RunInfo> {
        match self {
            Host::Simulation(s) => s.run_info(member),
            Host::Bridge(b) => b.run_info(member),
        }
    }

    /// What the run of `member` for the message `message` (`msg-3`) did (reactive): its tool
    /// calls, plan, thoughts, context fill and decisions; empty in simulation.
    pub fn activity(&self, message: &str, member: &str) -> Vec<Activity> {
        match self {
            Host::Simulation(_) => Vec::new(),
            Host::Bridge(b) => b.activity(message, member),
        }
    }

    /// What the host keeps of `member`'s run that ended at `at` (ms) beyond its fact: its
    /// argv, model and kept output (reactive; a bridge is asked once, `None` until it
    /// answers). The page alone keeps none: always `None`.
    pub fn run_details(&self, member: &str, at: u64) -> Option<RunDetails> {
        match self {
            Host::Simulation(_) => None,
            Host::Bridge(b) => b.run_details(member, at),
        }
    }

    /// The approvals running agents asked for and no one settled yet, by member (reactive).
    pub fn approvals(&self) -> Vec<(MemberId, ApprovalRequest)> {
        match self {
            Host::Simulation(_) => Vec::new(),
            Host::Bridge(b) => b.approvals(),
        }
    }

    /// Answers `member`'s open approval `request` with the agent's option `option`.
    pub fn answer_approval(&self, member: &str, request: &str, option: &str) {
        if let Host::Bridge(b) = self {
            b.answer_approval(member, request, option);
        }
    }

    /// The last context fill `member`'s agent reported, `used` of `size` tokens (reactive).
    pub fn context_fill(&self, member: &str) -> Option<(u64, u64)> {
        match self {
            Host::Simulation(_) => None,
            Host::Bridge(b) => b.context_fill(member),
        }
    }

    /// How long `member`'s delivery has been in flight, in ms on the page's clock (reactive:
    /// it ticks with the clock); `None` when it is not running. What the running mark and a
    /// running delivery's row count and turn their ring by.
    pub fn running_for(&self, member: &MemberId) -> Option<u64> {
        match self.member_status(member) {
            MemberStatus::Running { since, .. } => {
                Some(self.state().clock.get().saturating_sub(since))
            }
            _ => None,
        }
    }

    /// What `member` is doing (reactive; a running one's time counts from when the host saw
    /// its run start).
    pub fn member_status(&self, member: &MemberId) -> MemberStatus {
        let state = self.state();
        if let Host::Bridge(b) = self {
            if b.needs_you(member) {
                return MemberStatus::NeedsYou;
            }
        }
        let (since, runner, retry) = match self {
            Host::Simulation(_) => {
                let due = state
                    .due
                    .with(|d| d.as_ref().is_some_and(|d| d.to == *member));
                (due.then(|| state.due_since.get()), Runner::Page, None)
            }
            Host::Bridge(b) => {
                let connected = self.unavailable().is_none();
                (
                    b.run_started(member),
                    Runner::Bridge { connected },
                    b.retry(),
                )
            }
        };
        state
            .session
            .with(|s| status::member_status(s, member, since, runner, retry.as_ref()))
    }

    /// The sessions of the library (the bridge's, or this browser's without one), most
    /// recently changed first (reactive).
    pub fn sessions(&self) -> Signal<Vec<Entry>> {
        match self {
            Host::Simulation(s) => s.entries(),
            Host::Bridge(b) => b.entries(),
        }
    }

    /// Whose numbering the shown session's id is in, for the composer's drafts.
    pub fn drafts(&self) -> crate::storage::Drafts {
        match self {
            Host::Simulation(_) => crate::storage::Drafts::Library,
            Host::Bridge(b) => b.drafts(),
        }
    }

    /// The library's session shown (reactive).
    pub fn shown_session(&self) -> Signal<Option<i64>> {
        match self {
            Host::Simulation(s) => s.shown(),
            Host::Bridge(b) => b.session_id(),
        }
    }

    /// Shows the library's session `id` (a bridge switches every page to it); false when it
    /// did not open or the user called it off.
    pub fn open_session(&self, id: i64) -> bool {
        match self {
            Host::Simulation(s) => s.open(id),
            Host::Bridge(b) => b.open_session(id),
        }
    }

    /// Names the library's session `id`; a refused name says why on the banner.
    pub fn rename_session(&self, id: i64, name: &str) {
        match self {
            Host::Simulation(s) => s.rename(id, name),
            Host::Bridge(b) => b.rename(id, name),
        }
    }

    /// Searches every session of the library for `query`; the hits follow in
    /// [`Host::search_hits`].
    pub fn search_sessions(&self, query: String) {
        match self {
            Host::Simulation(s) => s.search(query),
            Host::Bridge(b) => b.search(query),
        }
    }

    /// The last search's query and hits (reactive).
    pub fn search_hits(&self) -> Signal<Option<(String, Vec<Hit>)>> {
        match self {
            Host::Simulation(s) => s.hits(),
            Host::Bridge(b) => b.hits(),
        }
    }

    /// A new session in the library with the team shown and no message yet (the one shown
    /// stays), in this browser or in the bridge.
    pub fn new_session(&self) {
        match self {
            Host::Simulation(s) => s.new_session(),
            Host::Bridge(b) => b.new_session(),
        }
    }

    /// "Continue from here" at message `index`: a new session whose log is the facts up to
    /// the one that made it, shown in place of this one, which stays in the library as it is.
    pub fn fork(&self, index: usize) {
        let state = self.state();
        let upto = state
            .session
            .with_untracked(|s| library::fact_of_message(s.facts(), index));
        let Some(upto) = upto else {
            return state.report(format!(
                "message #{} cannot be continued from: no fact of this log made it",
                index + 1
            ));
        };
        match self {
            Host::Simulation(s) => s.fork(upto, index + 1),
            Host::Bridge(b) => {
                // A bridge runs at once what is due where the fork ends: asked first, as that
                // run may cost money (docs/architecture.md §13, `fork`) — unless the bridge
                // said the simulator answers that member, which costs nothing.
                let due = state.session.with_untracked(|s| {
                    let forked = Session::replay(&s.facts()[..upto as usize]).ok()?;
                    let to = &forked.conversation().in_flight()?.to;
                    let simulated = b.agent_report(to).is_some_and(|a| a.simulated);
                    let name = forked.team()?.member(to)?.display_name.clone();
                    (!simulated).then_some(name)
                });
                let asked = due.map(|name| {
                    format!(
                        "Fork from #{} into a new session? There {name} is due, and the \
                         bridge runs {name}'s agent at once (a real run, which may cost money). \
                         This session stays as it is.",
                        index + 1
                    )
                });
                if asked.is_none_or(|q| crate::browser::confirm(&q)) {
                    b.fork(upto);
                }
            }
        }
    }

    /// Why nothing can be sent now, when so (reactive): a bridge that is away.
    pub fn unavailable(&self) -> Option<&'static str> {
        match self {
            Host::Simulation(_) => None,
            Host::Bridge(b) => b.unavailable(),
        }
    }

    /// Whether agents run on their own (a bridge runs them); in simulation a due delivery
    /// waits for the user or the simulator.
    pub fn runs_agents(&self) -> bool {
        matches!(self, Host::Bridge(_))
    }

    /// The connection status, as the header shows it (reactive).
    pub fn connection_label(&self) -> &'static str {
        match self {
            Host::Simulation(_) => simulation::CONNECTION_LABEL,
            Host::Bridge(b) => b.connection_label(),
        }
    }

    /// What the connection status means, on hover.
    pub fn connection_title(&self) -> &'static str {
        match self {
            Host::Simulation(_) => simulation::CONNECTION_TITLE,
            Host::Bridge(_) => bridge::CONNECTION_TITLE,
        }
    }
}

/// Opens what the file `name` held page alone: as a session of the library (a team or a
/// scenario as its first fact).
fn open_in_simulation(sim: &Simulation, name: &str, opened: Result<Opened, String>) {
    let fact = match opened {
        Ok(Opened::Session(session)) => return sim.open_file_session(name, *session),
        Ok(Opened::Team(team)) => Fact::set_team(team),
        Ok(Opened::Scenario(scenario)) => Fact::LoadScenario { scenario },
        Err(e) => return sim.state().report(e),
    };
    let mut session = Session::new();
    match session.apply(&fact) {
        Ok(()) => sim.open_file_session(name, session),
        Err(e) => sim.state().report(e.to_string()),
    }
}

/// Why `team` cannot replace the team of `session`, in the user's terms, when it leaves out a
/// member who has spoken (or whose run ended) in the conversation (the core's rule,
/// [`Session::can_replace_team`]), with what to do instead. `None` when every such member
/// stays.
fn removes_a_speaker(session: &Session, team: &Team) -> Option<String> {
    let refused = session.can_replace_team(team).err()?;
    let CannotRemove::HasSpoken { name, .. } = &refused;
    Some(format!(
        "{refused}; the team was not changed. To go on without {name}, remove {name} from now \
         on (× on {name}'s row: {name}'s messages stay {name}'s); to start over with a team \
         without {name}, save the team (⬇ team file), remove {name} from the file and open it \
         (⬇ save session first to keep this conversation)."
    ))
}

/// Whether the user agrees to replace the bridge's conversation shown by what `name` holds
/// (`what`): asked only when there is something to lose, saying what.
fn may_replace(state: &AppState, name: &str, what: &str) -> bool {
    let messages = state.message_count.get_untracked();
    if messages == 0 {
        return true;
    }
    let count = if messages == 1 {
        "its message".to_string()
    } else {
        format!("its {messages} messages")
    };
    crate::browser::confirm(&format!(
        "Open {name}? The {what} replaces this conversation: {count} and what was typed for \
         them will be lost (\"save session\" first to keep them)."
    ))
}

#[cfg(test)]
mod tests {
    use agent_chatter::message::Millis;

    use super::*;

    #[test]
    fn leaving_out_a_member_who_has_spoken_is_refused_saying_what_to_do() {
        let team = config::load_team(
            r#"{"name": "Duo", "members": [
            {"name": "kailai", "displayName": "Kailai", "kind": "human"},
            {"name": "max", "displayName": "Max", "kind": "ai", "agentType": "claude"},
            {"name": "sarah", "displayName": "Sarah", "kind": "ai", "agentType": "codex"}]}"#,
        )
        .expect("a valid team");
        let mut session = Session::new();
        session.apply(&Fact::set_team(team.clone())).unwrap();
        session
            .apply(&Fact::human("Plan it [NEXT: max]", Millis(1)))
            .unwrap();
        session
            .apply(&Fact::replied("max", "Done. [DONE]", Millis(2)))
            .unwrap();
        let without = |id: &str| {
            let mut t = team.clone();
            t.members.retain(|m| m.id != id);
            t
        };
        assert_eq!(removes_a_speaker(&session, &without("sarah")), None);
        assert_eq!(
            removes_a_speaker(&session, &without("max")).as_deref(),
            Some(
                "Max has spoken in this conversation, so removing Max would rewrite its history; \
                 the team was not changed. To go on without Max, remove Max from now on (× on \
                 Max's row: Max's messages stay Max's); to start over with a team without Max, \
                 save the team (⬇ team file), remove Max from the file and open it (⬇ save \
                 session first to keep this conversation)."
            )
        );
    }
}
