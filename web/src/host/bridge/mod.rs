//! The page as a mirror of a bridge session (docs/architecture.md §14b): when opened from the
//! URL the bridge prints (`…/#token=…`), the page connects to `/api/ws`, says hello with the
//! token, and from then on applies the facts the bridge commits, in order, to its own
//! `Session`. It computes every preview itself and checks each delivery's digest against its
//! own ("verified"). It sends only human, team, settings and loaded-history (`loadScenario`)
//! facts; replies come from the agents the bridge runs.
//!
//! Frames are the core's [`protocol`](agent_chatter::protocol) types: [`Command`]s out,
//! [`Event`]s in. What only a bridge knows (its sessions, its agents, the digests it sent, the
//! running agent's output) lives here, not in the page's shared state.
//!
//! When the socket closes (the bridge stopped or restarted), the page says so, keeps what it
//! shows without inventing anything, and connects again with backoff ([`RETRY_FIRST`] doubling
//! to [`RETRY_MOST`]) with the same token; once back, it shows the session it showed before.

mod activity;
mod run_details;
mod told;

use std::collections::BTreeMap;
use std::time::Duration;

use crate::library::{Entry, Hit};
use agent_chatter::activity::{ActivityLog, ApprovalRequest};
use agent_chatter::message::MemberId;
use agent_chatter::protocol::{
    decode_event, encode_command, AgentReport, Command, Event, FrameError, SearchHit, Sent,
    SessionInfo, SnippetPart,
};
use agent_chatter::scenario::Scenario;
use agent_chatter::session::{Fact, Session};
use agent_chatter::team::Team;
use leptos::prelude::*;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{MessageEvent, WebSocket};

use super::done::Done;
use super::ticket::Ticket;
use super::RunInfo;
use crate::browser::now;
use crate::output;
use crate::share::{self, Shared};
use crate::shared_case;
use crate::state::{AppState, Performed};
use crate::status::Retry;
use crate::storage::Drafts;

/// Why a member's run settings are read only with a bridge.
pub const RUN_SETTINGS_NOTE: &str = "Read only: they come from files on the bridge's machine \
    (its team file and agents file); this page cannot change them.";

/// What the bridge's connection status means, on hover.
pub const CONNECTION_TITLE: &str =
    "Mirroring the bridge's session: it runs the agents and keeps the log";

/// The first wait before connecting again after the socket closed, doubled after each
/// failed attempt up to [`RETRY_MOST`].
const RETRY_FIRST: Duration = Duration::from_millis(500);
const RETRY_MOST: Duration = Duration::from_secs(5);

/// Why nothing is sent while the bridge is away (the composer keeps what is typed).
pub const DISCONNECTED: &str = "the bridge is disconnected: reconnecting… What you type is kept, \
    and a message sent now goes once it is back.";

/// The connection's state, as the header says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Link {
    /// Opening the first socket.
    Connecting,
    /// The socket is open and the hello was sent.
    Connected,
    /// The socket closed; connecting again.
    Reconnecting,
}

/// What the bridge host keeps between events about its connection and its last search.
struct Line {
    /// The wait before the next attempt to connect again.
    backoff: Duration,
    /// The session shown when the socket closed, to show again once connected.
    resume: Option<i64>,
    /// The current socket brought a session (one closed before that refused the token).
    heard: bool,
    /// The last query asked of the bridge (older answers are dropped).
    asked: String,
}

/// Whether the prompt a bridge sent is the one the page previews (docs/architecture.md §6b).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verification {
    pub to: String,
    /// The bridge's SHA-256 of what it wrote to the agent.
    pub sent: String,
    /// The page's own, from its session.
    pub previewed: Option<String>,
}

impl Verification {
    pub fn verified(&self) -> bool {
        self.previewed.as_deref() == Some(self.sent.as_str())
    }
}

/// The bridge host; `Copy`: signals for what the views show, stored values for the rest.
#[derive(Clone, Copy)]
pub struct Bridge {
    state: AppState,
    /// Whether the socket is open (the hello sent), or being opened again.
    link: RwSignal<Link>,
    /// The session shown came (again) since the socket opened: a message sent now goes to it,
    /// not to the one a restarted bridge resumed before the page asks for its own.
    synced: RwSignal<bool>,
    /// What the reconnection and the search keep between events.
    line: StoredValue<Line>,
    /// The last search asked of the bridge and its hits, once they came.
    hits: RwSignal<Option<(String, Vec<Hit>)>>,
    /// The bridge's session shown, and the sessions its database holds.
    session_id: RwSignal<Option<i64>>,
    sessions: RwSignal<Vec<SessionInfo>>,
    /// How the bridge answers each AI member.
    agents: RwSignal<BTreeMap<MemberId, AgentReport>>,
    /// The bridge's SHA-256 of every delivery it made in this session, by (message id,
    /// member): past deliveries are verified as the running one is.
    sent: RwSignal<BTreeMap<(String, MemberId), String>>,
    /// The last delivery the bridge announced, checked against the page's preview.
    verification: RwSignal<Option<Verification>>,
    /// The end of the running agent's streamed output (not stored): its last MiB, and how
    /// many bytes before it were dropped.
    output: RwSignal<String>,
    output_cut: RwSignal<u64>,
    /// The running delivery the bridge announced (`delivering`), and when it arrived (ms).
    started: RwSignal<Option<(MemberId, u64)>>,
    /// The last retry the running agent's CLI reported, until its run ends.
    retry: RwSignal<Option<Retry>>,
    /// What each delivery's run did (agents over ACP, docs/architecture.md §14d), by (message id, member):
    /// tool calls merged by id, the plan, thoughts, context fills, decisions.
    activity: RwSignal<BTreeMap<(String, MemberId), ActivityLog>>,
    /// The approvals each member's running agent asked for and no one settled yet.
    approvals: RwSignal<BTreeMap<MemberId, Vec<ApprovalRequest>>>,
    /// The last context fill each member's agent reported: `used` of `size` tokens.
    context: RwSignal<BTreeMap<MemberId, (u64, u64)>>,
    /// What the bridge keeps of each ended run asked for (`runDetails`), and the runs asked.
    details: RwSignal<BTreeMap<run_details::RunKey, agent_chatter::protocol::RunDetails>>,
    details_asked: StoredValue<std::collections::BTreeSet<run_details::RunKey>>,
    /// Human messages sent and not yet back as facts, with their tickets.
    outbox: RwSignal<Vec<(Ticket, Fact)>>,
    socket: StoredValue<Option<WebSocket>, LocalStorage>,
    /// The launch token, to put back in the address bar when a share link replaced it.
    token: StoredValue<String>,
    /// Whose numbering this bridge's session ids are in, for the composer's drafts: its
    /// database's, known by its token (stable per database, docs/architecture.md §14).
    drafts: Drafts,
    /// A shared case to load into the new session the bridge is about to open.
    pending_share: StoredValue<Option<Shared>, LocalStorage>,
    /// The file whose team or scenario was sent and not yet back (`told.rs`).
    opening: StoredValue<Option<String>>,
    /// The last file opened or fork made at the user's request, as the bridge answered.
    done: RwSignal<Option<Done>>,
}

/// The launch token in the page's URL fragment (`#token=…`), when opened from a bridge.
pub fn token_in_url() -> Option<String> {
    let hash = web_sys::window()?.location().hash().ok()?;
    let token = hash.strip_prefix("#token=")?;
    (!token.is_empty()).then(|| token.to_string())
}

impl Bridge {
    /// Connects to the bridge that served this page; the error says why the socket could not
    /// be opened (the page then stays in simulation).
    pub fn connect(state: AppState, token: String) -> Result<Bridge, String> {
        let bridge = Bridge {
            state,
            link: RwSignal::new(Link::Connecting),
            synced: RwSignal::new(false),
            line: StoredValue::new(Line {
                backoff: RETRY_FIRST,
                resume: None,
                heard: false,
                asked: String::new(),
            }),
            hits: RwSignal::new(None),
            session_id: RwSignal::new(None),
            sessions: RwSignal::new(Vec::new()),
            agents: RwSignal::new(BTreeMap::new()),
            sent: RwSignal::new(BTreeMap::new()),
            verification: RwSignal::new(None),
            output: RwSignal::new(String::new()),
            output_cut: RwSignal::new(0),
            started: RwSignal::new(None),
            retry: RwSignal::new(None),
            activity: RwSignal::new(BTreeMap::new()),
            approvals: RwSignal::new(BTreeMap::new()),
            context: RwSignal::new(BTreeMap::new()),
            details: RwSignal::new(BTreeMap::new()),
            details_asked: StoredValue::new(Default::default()),
            outbox: RwSignal::new(Vec::new()),
            socket: StoredValue::new_local(None),
            drafts: Drafts::of_bridge(&token),
            token: StoredValue::new(token.clone()),
            pending_share: StoredValue::new_local(None),
            opening: StoredValue::new(None),
            done: RwSignal::new(None),
        };
        bridge.open_socket().map_err(|()| {
            "could not open the bridge's WebSocket: the page stays in simulation".to_string()
        })?;
        Ok(bridge)
    }

    /// Opens a socket to the bridge that served this page; its hello goes when it opens.
    fn open_socket(self) -> Result<(), ()> {
        let Some(location) = web_sys::window().map(|w| w.location()) else {
            return Ok(());
        };
        let host = location.host().unwrap_or_default();
        let socket = WebSocket::new(&format!("ws://{host}/api/ws")).map_err(|_| ())?;
        let hello = encode_command(&Command::Hello {
            token: self.token.get_value(),
        });
        self.line.update_value(|l| l.heard = false);
        let on_open = {
            let socket = socket.clone();
            Closure::<dyn FnMut()>::new(move || {
                let _ = socket.send_with_str(&hello);
                self.link.set(Link::Connected);
            })
        };
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
            if let Some(text) = e.data().as_string() {
                self.receive(&text);
            }
        });
        let on_close = Closure::<dyn FnMut()>::new(move || self.closed());
        socket.set_onopen(Some(on_open.as_ref().unchecked_ref()));
        socket.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        socket.set_onclose(Some(on_close.as_ref().unchecked_ref()));
        // The handlers live as long as their socket, which the page drops only once closed;
        // a closed socket calls none of them again.
        on_open.forget();
        on_message.forget();
        on_close.forget();
        self.socket.set_value(Some(socket));
        Ok(())
    }

    /// The socket closed: nothing more is sent or shown as running until the bridge is back,
    /// and the page connects again after a wait that grows with each failed attempt.
    fn closed(self) {
        let was = self.link.get_untracked();
        self.link.set(Link::Reconnecting);
        self.synced.set(false);
        self.socket.set_value(None);
        if was == Link::Connected && !self.line.with_value(|l| l.heard) {
            self.state.report(
                "the bridge did not take this page's token (a bridge started on another \
                 database has another): open the address it printed; trying again meanwhile",
            );
        }
        let shown = self.session_id.get_untracked();
        let mut wait = RETRY_FIRST;
        self.line.update_value(|l| {
            if was == Link::Connected && l.resume.is_none() {
                l.resume = shown;
            }
            wait = l.backoff;
            l.backoff = (wait * 2).min(RETRY_MOST);
        });
        // What ran is no longer known to run.
        self.started.set(None);
        self.retry.set(None);
        self.output.set(String::new());
        self.output_cut.set(0);
        // Whether a question is still open is known once back (the session comes again).
        self.approvals.set(BTreeMap::new());
        // Details asked and not answered will not be: asked again once back; a file sent
        // and not answered is not told as opened.
        self.forget_unanswered_details();
        self.forget_opening();
        set_timeout(
            move || {
                if self.open_socket().is_err() {
                    self.closed();
                }
            },
            wait,
        );
    }

    pub fn state(&self) -> AppState {
        self.state
    }

    /// The header's connection status (reactive).
    pub fn connection_label(&self) -> &'static str {
        match self.link.get() {
            Link::Connected => "● bridge",
            Link::Connecting => "○ bridge (connecting…)",
            Link::Reconnecting => "○ bridge disconnected — reconnecting…",
        }
    }

    /// Why nothing can be sent now (reactive): the bridge is away.
    pub fn unavailable(&self) -> Option<&'static str> {
        (self.link.get() != Link::Connected || !self.synced.get()).then_some(DISCONNECTED)
    }

    /// The sessions the bridge's database holds, as the library lists them (as of when they
    /// were last sent).
    pub fn entries(&self) -> Signal<Vec<Entry>> {
        let sessions = self.sessions;
        Signal::derive(move || sessions.with(|list| list.iter().map(entry).collect()))
    }

    /// Names session `id`; the bridge sends the list again, or an error saying why not.
    pub fn rename(&self, id: i64, name: &str) {
        if !self.send(&Command::RenameSession {
            id,
            name: name.to_string(),
        }) {
            self.state
                .report("not connected to the bridge: the session was not renamed");
        }
    }

    /// Asks the bridge to search every session's messages; the hits come as `searchResults`,
    /// and the sessions whose names hold the query are listed first.
    pub fn search(&self, query: String) {
        self.line.update_value(|l| l.asked = query.clone());
        if query.trim().is_empty() {
            self.hits.set(Some((query, Vec::new())));
        } else if !self.send(&Command::SearchSessions { query }) {
            self.state
                .report("not connected to the bridge: cannot search the sessions now");
        }
    }

    /// The last search's query and hits (reactive).
    pub fn hits(&self) -> Signal<Option<(String, Vec<Hit>)>> {
        self.hits.into()
    }

    /// "Continue from here": the bridge makes a new session of the first `upto` facts of the
    /// one shown and every page opens it (the one shown stays as it is); asked first while an
    /// agent runs, since leaving the session stops it.
    pub fn fork(&self, upto: u64) {
        let Some(id) = self.session_id.get_untracked() else {
            return;
        };
        if self.may_leave_session() && !self.send(&Command::ForkSession { id, upto }) {
            self.state
                .report("not connected to the bridge: nothing was forked");
        }
    }

    /// The bridge session shown.
    /// Whose numbering the session ids are in, for the composer's drafts.
    pub fn drafts(&self) -> Drafts {
        self.drafts
    }

    pub fn session_id(&self) -> Signal<Option<i64>> {
        self.session_id.into()
    }

    /// The last delivery the bridge announced, checked against the page's preview.
    pub fn verification(&self) -> Signal<Option<Verification>> {
        self.verification.into()
    }

    /// The end of the running agent's streamed output (its last MiB).
    pub fn output(&self) -> Signal<String> {
        self.output.into()
    }

    /// How many bytes of the running agent's output came before [`Self::output`] and were
    /// dropped.
    pub fn output_cut(&self) -> Signal<u64> {
        self.output_cut.into()
    }

    /// See [`crate::host::Host::sent_digest`].
    pub fn sent_digest(&self, message: &str, member: &str) -> Option<String> {
        self.sent.with(|sent| {
            sent.get(&(message.to_string(), member.to_string()))
                .cloned()
        })
    }

    /// See [`crate::host::Host::agent_report`].
    pub fn agent_report(&self, member: &MemberId) -> Option<AgentReport> {
        self.agents.with(|agents| agents.get(member).cloned())
    }

    /// Whether the bridge said of every agent it reported that the simulator answers it (and
    /// reported one at least).
    pub fn every_agent_simulated(&self) -> bool {
        self.agents
            .with(|agents| !agents.is_empty() && agents.values().all(|a| a.simulated))
    }

    /// See [`crate::host::Host::run_info`]: as the bridge reported it.
    pub fn run_info(&self, member: &MemberId) -> Option<RunInfo> {
        self.agents.with(|agents| {
            agents.get(member).map(|a| RunInfo {
                settings: a.settings.clone(),
                dir: a.dir.clone(),
                source: a.source.clone(),
                note: RUN_SETTINGS_NOTE,
            })
        })
    }

    /// When the bridge announced `member`'s running delivery (ms), if it did while this page
    /// was open (reactive).
    pub fn run_started(&self, member: &MemberId) -> Option<u64> {
        self.started
            .with(|s| s.as_ref().filter(|(to, _)| to == member).map(|(_, at)| *at))
    }

    /// The last retry the running agent's CLI reported (reactive).
    pub fn retry(&self) -> Option<Retry> {
        self.retry.get()
    }

    /// Sends a command frame; false when there is no open connection.
    fn send(&self, command: &Command) -> bool {
        let frame = encode_command(command);
        self.socket.with_value(|s| {
            s.as_ref()
                .filter(|s| s.ready_state() == WebSocket::OPEN)
                .is_some_and(|s| s.send_with_str(&frame).is_ok())
        })
    }

    /// Asks the bridge to apply `fact`; it comes back as a `fact` event once committed.
    pub fn apply(&self, fact: Fact) -> bool {
        let sent = self.send(&Command::Apply {
            fact: Box::new(fact),
        });
        if !sent {
            self.state
                .report("not connected to the bridge: the message was not sent");
        }
        sent
    }

    /// Sends the human composer's message; its ticket is stored once the bridge's `fact`
    /// event brings this very fact back. Two messages of this page waiting at once never share
    /// a send time, so the same text sent twice is two facts, each with its own ticket.
    pub fn send_human(&self, text: String) -> Option<Ticket> {
        let last = self.outbox.with_untracked(|o| {
            o.iter()
                .filter_map(|(_, f)| match f {
                    Fact::Human { at, .. } => Some(at.0),
                    _ => None,
                })
                .max()
        });
        let mut at = now();
        if let Some(last) = last.filter(|&last| last >= at.0) {
            at.0 = last + 1;
        }
        let fact = Fact::Human {
            text: text.into(),
            sender: None,
            at,
        };
        let ticket = Ticket::issue();
        if !self.apply(fact.clone()) {
            return None;
        }
        self.outbox.update(|o| o.push((ticket, fact)));
        Some(ticket)
    }

    /// Whether the message of `ticket` came back from the bridge (reactive).
    pub fn is_stored(&self, ticket: Ticket) -> bool {
        self.outbox.with(|o| o.iter().all(|(t, _)| *t != ticket))
    }

    /// Takes the facts the bridge committed off the outbox: their tickets are stored.
    fn acknowledge(&self, committed: &[Fact]) {
        let sent = |fact: &Fact| committed.contains(fact);
        if self
            .outbox
            .with_untracked(|o| o.iter().any(|(_, f)| sent(f)))
        {
            self.outbox.update(|o| o.retain(|(_, f)| !sent(f)));
        }
    }

    /// The history goes on under the edited team as a `loadScenario` fact (the bridge's log
    /// only grows; a `setTeam` would start the conversation over): the same messages,
    /// addressees and team task, nothing pending. Refused while an agent runs, whose answer
    /// would then belong to no delivery.
    pub fn edit_team(&self, team: Team) -> bool {
        let state = self.state;
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
        // The history names the members who left: the scenario holds them, and they leave
        // again after it, unless the edit brought them back (an undo).
        let (scenario, gone) = state.session.with_untracked(|s| {
            let gone: Vec<String> = (s.left_members().iter())
                .map(|l| l.member.id.clone())
                .filter(|id| team.member(id).is_none())
                .collect();
            let history = s.shown_history(s.messages().len());
            let team = s.with_left_members(team);
            let scenario = Scenario::from_history(team, &history, s.store().team_task());
            (scenario, gone)
        });
        let applied = self.apply(Fact::LoadScenario {
            scenario: Box::new(scenario),
        });
        applied && gone.iter().all(|member| self.leave_team(member))
    }

    /// Asks the bridge to make `member` leave the team of the session shown (`leaveTeam`);
    /// the `memberLeft` fact comes back once committed, or an error naming the member.
    pub fn leave_team(&self, member: &str) -> bool {
        let Some(session) = self.session_id.get_untracked() else {
            self.state
                .report("no session is open yet: the team was not changed");
            return false;
        };
        let member = member.to_string();
        let sent = self.send(&Command::LeaveTeam { session, member });
        if !sent {
            self.state
                .report("not connected to the bridge: the team was not changed");
        }
        sent
    }

    /// A session file cannot replace the log the bridge keeps.
    pub fn refuse_session_file(&self, name: &str) {
        self.state.report(format!(
            "{name}: the bridge keeps this session's log, so a session file cannot replace it; open the file without a bridge (simulation), or open a scenario instead"
        ));
    }

    /// Whether the user agrees to leave the session shown: asked only while an agent runs in it,
    /// since leaving stops that agent (a real agent's run is then recorded as interrupted when
    /// the session is opened again, docs/architecture.md §14c; the simulator's is made again).
    fn may_leave_session(&self) -> bool {
        let running = self.state.session.with_untracked(|s| {
            let to = &s.conversation().in_flight()?.to;
            let name = s.team()?.member(to)?.display_name.clone();
            Some((to.clone(), name))
        });
        let Some((to, name)) = running else {
            return true;
        };
        let then = if untrack(|| self.agent_report(&to)).is_some_and(|a| a.simulated) {
            "its delivery is made again when you open this session again"
        } else {
            "the run is recorded as interrupted (what it did and cost unknown), to retry if you \
             choose"
        };
        web_sys::window()
            .and_then(|w| {
                w.confirm_with_message(&format!(
                    "{name} is running in this session. Leaving it stops {name}: {then}. Leave \
                     anyway?"
                ))
                .ok()
            })
            .unwrap_or(false)
    }

    /// A new session with the same team, once the user agrees to leave the one shown.
    pub fn new_session(&self) {
        if self.may_leave_session() {
            self.send(&Command::NewSession);
        }
    }

    /// Switches every page of the bridge to session `id`, once the user agrees to leave the
    /// one shown; false when the user called it off.
    pub fn open_session(&self, id: i64) -> bool {
        if !self.may_leave_session() {
            return false;
        }
        self.send(&Command::OpenSession { id });
        true
    }

    /// Asks the bridge to stop the running agent.
    pub fn cancel_due(&self) {
        if let Some(to) = self
            .state
            .due
            .with_untracked(|d| d.as_ref().map(|d| d.to.clone()))
        {
            self.send(&Command::Cancel { to });
        }
    }

    /// A share link opened in this tab: the case opens as a new session of the bridge; the
    /// token goes back in the address bar, so a reload stays connected.
    pub fn open_link(&self, fragment: &str) {
        self.restore_token_in_url();
        // The browser inflates it (asynchronously, a few milliseconds).
        let (bridge, fragment) = (*self, fragment.to_owned());
        leptos::task::spawn_local(async move {
            match share::decode(&fragment).await {
                Ok(shared) => bridge.open_shared(shared),
                Err(e) => bridge.state.report(e),
            }
        });
    }

    /// Opens a shared case in a new session of the bridge (the one shown keeps its log), after
    /// asking if an agent runs.
    fn open_shared(&self, shared: Shared) {
        if !self.may_leave_session() {
            return;
        }
        let (label, before) = (shared_case::label(&shared), self.session_id.get_untracked());
        self.pending_share.set_value(Some(shared));
        if self.send(&Command::NewSession) {
            // Undecided until the user keeps or discards it (the banner).
            shared_case::begin(label, None, before);
        } else {
            self.pending_share.set_value(None);
            self.state
                .report("not connected to the bridge: the shared case was not opened");
        }
    }

    /// Keeps the shared case as the bridge session it opened as (the banner goes).
    pub fn keep_shared(&self) {
        shared_case::decide();
    }

    /// Shows again the bridge session the shared case replaced. The case's session stays in
    /// the bridge's library (a bridge never deletes a log); it is simply no longer shown.
    pub fn discard_shared(&self) {
        let before = shared_case::pending()
            .get_untracked()
            .and_then(|c| c.before);
        match before {
            Some(id) if self.session_id.get_untracked() != Some(id) => {
                if self.open_session(id) {
                    shared_case::decide();
                }
            }
            _ => {
                shared_case::decide();
            }
        }
    }

    /// Puts the launch token back in the address bar (a share link's fragment replaced it), so a
    /// reload stays connected.
    fn restore_token_in_url(&self) {
        let token = self.token.get_value();
        if let Some(window) = web_sys::window() {
            let path = window.location().pathname().unwrap_or_else(|_| "/".into());
            if let Ok(history) = window.history() {
                let url = format!("{path}#token={token}");
                let _ =
                    history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url));
            }
        }
    }

    /// A new delivery: the bridge's announcement of it is checked afresh.
    fn performed(&self, performed: Performed) {
        if performed.delivery {
            self.verification.set(None);
        }
    }

    fn receive(&self, text: &str) {
        let state = self.state;
        let event = match read_event(text) {
            Some(Ok(event)) => event,
            Some(Err(e)) => return state.report(e),
            None => return,
        };
        match event {
            Event::Session {
                id,
                facts,
                sent,
                activity,
                forked,
            } => {
                self.on_activity_whole(activity);
                self.on_session(id, facts, sent);
                self.told_session(id, forked);
            }
            Event::Fact { seq, fact } => self.on_fact(seq, fact),
            Event::Delivering {
                to,
                message,
                prompt_sha256,
                bytes: _,
            } => {
                self.sent.update(|sent| {
                    sent.insert((message, to.clone()), prompt_sha256.clone());
                });
                self.started.set(Some((to.clone(), now().0)));
                self.retry.set(None);
                let previewed = state.due.with_untracked(|d| {
                    d.as_ref()
                        .filter(|d| d.to == to)
                        .map(|d| d.prompt.sha256_hex())
                });
                self.verification.set(Some(Verification {
                    to,
                    sent: prompt_sha256,
                    previewed,
                }));
            }
            Event::Sessions { list } => {
                let live: Vec<i64> = list.iter().map(|s| s.id).collect();
                crate::storage::prune_drafts(self.drafts, &live);
                self.sessions.set(list)
            }
            Event::SearchResults { query, hits } => self.on_search_results(query, hits),
            Event::Agents { list } => self
                .agents
                .set(list.into_iter().map(|a| (a.member.clone(), a)).collect()),
            Event::Output { delta, .. } => {
                let mut dropped = 0;
                self.output
                    .update(|o| dropped = output::push_kept(o, &delta));
                if dropped > 0 {
                    self.output_cut.update(|c| *c += dropped as u64);
                }
            }
            Event::Retrying {
                to,
                attempt,
                max,
                reason,
            } => self.retry.set(Some(Retry {
                to,
                attempt,
                max,
                reason,
            })),
            Event::RunDetails(details) => self.on_run_details(details),
            Event::Error { message } => {
                self.forget_unanswered_details();
                self.forget_opening();
                state.report(format!("bridge: {message}"))
            }
            Event::Activity { to, message, item } => self.on_activity(to, message, item),
            Event::Approval { to, request, .. } => self.approvals.update(|open| {
                let asked = open.entry(to).or_default();
                asked.retain(|r| r.id != request.id);
                asked.push(request);
            }),
            Event::ApprovalSettled { to, request, .. } => self.settled(&to, &request),
        }
    }

    /// The session shown, whole (on connecting, after a restart, or another one opened): its
    /// log replayed, the digests of what was sent, and a shared case it was opened for.
    fn on_session(&self, id: i64, facts: Vec<Fact>, sent: Vec<Sent>) {
        let state = self.state;
        // Back after a restart: the session shown before, if the bridge opened another.
        let mut resume = None;
        self.line.update_value(|l| {
            resume = l.resume.take();
            // Connected for good: the next drop starts over at the first wait.
            l.heard = true;
            l.backoff = RETRY_FIRST;
        });
        match resume.filter(|&before| before != id) {
            Some(before) => {
                self.send(&Command::OpenSession { id: before });
            }
            None => self.synced.set(true),
        }
        self.session_id.set(Some(id));
        self.started.set(None);
        self.retry.set(None);
        self.sent.set(
            sent.into_iter()
                .map(|d| ((d.message, d.to), d.prompt_sha256))
                .collect(),
        );
        // The list may have grown (a new session): ask again.
        self.send(&Command::ListSessions);
        self.acknowledge(&facts);
        match Session::replay(facts) {
            Ok(session) => {
                // A new session shown: earlier errors were about another.
                state.error.set(None);
                self.performed(state.show(session));
                self.ask_shown_details_again();
                // The new session a share link asked for: the case goes in as its fact.
                let mut shared = None;
                self.pending_share.update_value(|p| shared = p.take());
                if let Some(shared) = shared {
                    shared_case::opened_as(id);
                    state.recipient.set(shared.member);
                    self.apply(Fact::LoadScenario {
                        scenario: Box::new(shared.scenario),
                    });
                }
            }
            Err(e) => state.report(format!("the bridge's session does not replay here: {e}")),
        }
    }

    /// One new fact, `seq` its position in the log.
    fn on_fact(&self, seq: u64, fact: Fact) {
        let state = self.state;
        // Facts are applied in `seq` order (docs/architecture.md §14b): one already
        // held is skipped, and a gap is never papered over (the bridge resends the
        // whole log to a page that fell behind; anything else is a bug worth seeing).
        let held = state.session.with_untracked(|s| s.facts().len()) as u64;
        if seq <= held {
            return;
        }
        if seq != held + 1 {
            return state.report(format!(
                "the bridge sent fact #{seq} while this page holds {held}: reload the \
                 page to get the whole log"
            ));
        }
        self.output.set(String::new());
        self.output_cut.set(0);
        if matches!(fact, Fact::Replied { .. } | Fact::Failed { .. }) {
            // The run ended: its retries are over.
            self.retry.set(None);
            self.started.set(None);
        }
        // A fact a page caused was taken: an earlier refusal is no longer news.
        let from_a_page = !matches!(fact, Fact::Replied { .. } | Fact::Failed { .. });
        let performed = state.apply_fact(&fact);
        self.acknowledge(std::slice::from_ref(&fact));
        if let Some(performed) = performed {
            self.performed(performed);
            if from_a_page {
                state.error.set(None);
            }
            self.told_fact(&fact);
        }
    }

    /// The bridge's answer to the search last asked (an older one is dropped): sessions whose
    /// name matches first, then one line per session found by its texts.
    fn on_search_results(&self, query: String, hits: Vec<SearchHit>) {
        if self.line.with_value(|l| l.asked != query) {
            return;
        }
        // The bridge searches texts; names are the page's to match, listed first.
        let wanted = query.trim().to_lowercase();
        let mut found: Vec<Hit> = self.sessions.with_untracked(|list| {
            list.iter()
                .filter(|s| {
                    s.name.to_lowercase().contains(&wanted)
                        && !hits.iter().any(|h| h.session == s.id)
                })
                .map(|s| Hit {
                    session: s.id,
                    name: s.name.clone(),
                    snippet: vec![SnippetPart {
                        text: s.name.clone(),
                        hit: false,
                    }],
                })
                .collect()
        });
        // One line per session: its best match (the bridge sends the best first).
        for h in hits {
            if found.iter().all(|f| f.session != h.session) {
                found.push(Hit {
                    session: h.session,
                    name: h.name,
                    snippet: h.snippet,
                });
            }
        }
        self.hits.set(Some((query, found)));
    }
}

/// A bridge's session as the library lists it.
fn entry(s: &SessionInfo) -> Entry {
    Entry {
        id: s.id,
        name: s.name.clone(),
        created_at: s.created_at.max(0) as u64,
        updated_at: s.updated_at.max(s.created_at).max(0) as u64,
        first_message: s.first_message.clone(),
        facts: s.facts.max(0) as usize,
        // Its team's name (the title) until renamed there.
        chosen: s.name != s.title,
    }
}

/// The event in the frame `text`; `None` for an event this page does not know (a newer
/// bridge's, left alone), the banner's words for a frame that does not read.
fn read_event(text: &str) -> Option<Result<Event, String>> {
    let e = match decode_event(text) {
        Ok(event) => return Some(Ok(event)),
        Err(FrameError::UnknownEvent(_)) => return None,
        Err(e) => e,
    };
    Some(Err(match e {
        FrameError::NotJson { line, column } => {
            format!("the bridge sent a frame that is not JSON (line {line}, column {column})")
        }
        FrameError::BadEvent { kind, reason } if kind == "fact" => {
            format!("the bridge sent a fact this page cannot read: {reason}")
        }
        FrameError::BadEvent { kind, reason } if kind == "session" => {
            format!("the bridge's session does not replay here: {reason}")
        }
        e => format!("the bridge sent a frame this page cannot read: {e}"),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_that_does_not_read_says_what_was_wrong() {
        let cases = [
            (
                "{",
                "the bridge sent a frame that is not JSON (line 1, column 1)",
            ),
            (
                r#"{"v":1,"type":"fact","seq":1}"#,
                "the bridge sent a fact this page cannot read: ",
            ),
            (
                r#"{"v":1,"type":"session","id":1}"#,
                "the bridge's session does not replay here: ",
            ),
            (
                r#"{"v":2,"type":"fact"}"#,
                "the bridge sent a frame this page cannot read: v: protocol version 2",
            ),
        ];
        for (frame, want) in cases {
            match read_event(frame) {
                Some(Err(e)) => assert!(e.starts_with(want), "{frame}: {e}"),
                other => panic!("{frame}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_retry_is_read() {
        assert_eq!(
            read_event(
                r#"{"v":1,"type":"retrying","to":"max","attempt":2,"max":10,"reason":"HTTP 529"}"#
            ),
            Some(Ok(Event::Retrying {
                to: "max".into(),
                attempt: 2,
                max: Some(10),
                reason: "HTTP 529".into()
            }))
        );
    }

    #[test]
    fn an_event_this_page_does_not_know_is_left_alone() {
        assert_eq!(read_event(r#"{"v":1,"type":"shout"}"#), None);
        assert_eq!(
            read_event(r#"{"v":1,"type":"output","to":"max","delta":"hi"}"#),
            Some(Ok(Event::Output {
                to: "max".into(),
                delta: "hi".into()
            }))
        );
    }
}
