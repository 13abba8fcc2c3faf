//! Scenario files and `preview` (docs/architecture.md §11b): one JSON format that the CLI, the npm
//! package and the page all load, so the same file gives the same prompt bytes everywhere.
//!
//! ```json
//! { "team": { …team config, ours or the peer's… },
//!   "context": { "windowSize": 5, "maxBytes": 786432, "pinFirst": false },
//!   "teamTask": null,
//!   "messages": [ { "from": "kailai", "content": "Plan it [NEXT: max]" },
//!                 { "from": "max", "content": "Here is the plan", "to": [] } ] }
//! ```
//!
//! - Messages are appended as history, in order, with no routing state machine: nothing is
//!   queued, nobody answers. They get ids `msg-1`, `msg-2`, … and time 0 (a scenario has no
//!   clock).
//! - `from` names a member by id or name (fuzzy, as `[NEXT]` does); `"system"` (reserved) is a
//!   system notice ([`Speaker::system`]).
//! - `to` absent: the addressees come from the message's `[NEXT]` markers (unknown names are
//!   left out, as in a conversation). `to: []` means everyone (`all`). A `to` entry that names
//!   a member prints as the member's name; any other entry (a departed member, `system`)
//!   prints as given; blank entries are skipped, as empty `[NEXT]` names are.
//! - `[TEAM_TASK: …]` markers set the team task as they go (from anyone); a `teamTask` key is
//!   applied after all messages and wins: a string sets it, `null` clears it, and an absent key
//!   leaves it to the markers.
//! - `context` replaces the team's window, byte budget and pin-first settings, exactly as given
//!   (`windowSize: 0` means no history); keys left out keep the team's values. A member's own
//!   `windowSize` still overrides the window (docs/architecture.md §7 order).

use serde::{Serialize, Serializer};
use serde_json::Value;
use thiserror::Error;

use crate::config::{self, ConfigError};
use crate::context::{self, BuildError, BuildSettings, Prompt, Recipient, Store, Target};
use crate::json::{self, Path};
use crate::json::{FieldError, JsonSyntaxError};
use crate::markers;
use crate::message::{Millis, Routing, Speaker, MAX_MESSAGE_BYTES};
use crate::team::{Member, NotAMember, Team};

/// The speaker name that makes a scenario message a system notice.
pub(crate) const SYSTEM_SPEAKER: &str = "system";

/// A scenario that cannot be loaded, stored or previewed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ScenarioError {
    #[error(transparent)]
    Syntax(#[from] JsonSyntaxError),
    #[error(transparent)]
    Field(#[from] FieldError),
    /// The team config is invalid; its paths start with `team`.
    #[error(transparent)]
    Team(#[from] ConfigError),
    #[error("{path}: {error}")]
    UnknownMember { path: String, error: NotAMember },
    #[error("{path}: over the 1 MiB limit ({limit} bytes), found {bytes} bytes")]
    TooLarge {
        path: String,
        bytes: usize,
        limit: usize,
    },
    #[error(transparent)]
    Build(#[from] BuildError),
}

/// The history settings a scenario runs with (they replace the team's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScenarioContext {
    pub window_size: usize,
    pub max_bytes: usize,
    pub pin_first: bool,
    /// Optional token budget (`chars/4` estimate, docs/architecture.md §9).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<usize>,
}

/// What the scenario's `teamTask` key says. Absent and `null` differ (§11b).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum TeamTaskOverride {
    /// Key absent: the `[TEAM_TASK: …]` markers decide.
    #[default]
    FromMarkers,
    /// `null`: no team task, whatever the markers said.
    Clear,
    /// A string: this team task, whatever the markers said.
    Set(String),
}

impl TeamTaskOverride {
    fn is_from_markers(&self) -> bool {
        matches!(self, TeamTaskOverride::FromMarkers)
    }
}

impl Serialize for TeamTaskOverride {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            TeamTaskOverride::Set(task) => s.serialize_str(task),
            TeamTaskOverride::FromMarkers | TeamTaskOverride::Clear => s.serialize_none(),
        }
    }
}

/// One history message of a scenario.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ScenarioMessage {
    /// A member's id or name, or `system` for a system notice.
    pub from: String,
    /// Raw text, markers included.
    pub content: String,
    /// Explicit addressees; absent = from the `[NEXT]` markers, empty = everyone (`all`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub to: Option<Vec<String>>,
}

/// A team, settings and a history: everything needed to preview a prompt. Serializes back to
/// the scenario format (the team in our format).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Scenario {
    /// The team, with [`Scenario::context`] already applied to its settings.
    pub team: Team,
    pub context: ScenarioContext,
    #[serde(skip_serializing_if = "TeamTaskOverride::is_from_markers")]
    pub team_task: TeamTaskOverride,
    pub messages: Vec<ScenarioMessage>,
}

/// Reads a scenario (docs/architecture.md §11b) and checks it: the team config, the settings, and
/// that every `from` is a member or `system` and every content fits the message limit.
pub fn load_scenario(json: &str) -> Result<Scenario, ScenarioError> {
    scenario_from_value(&json::parse(json)?)
}

/// [`load_scenario`] for an already parsed value.
pub fn scenario_from_value(value: &Value) -> Result<Scenario, ScenarioError> {
    let root = Path::Root;
    let obj = json::object(value, root)?;
    obj.refuse_near_misses(&["team", "context", "teamTask", "messages"])?;
    let team_path = root.key("team");
    let mut team = config::team_at(obj.required("team")?, &team_path)?;

    let context_path = root.key("context");
    if let Some(v) = obj.get("context") {
        let ctx = json::object(v, context_path)?;
        ctx.refuse_near_misses(&["windowSize", "maxBytes", "pinFirst", "maxTokens"])?;
        if let Some(w) = ctx.opt_usize("windowSize")? {
            team.settings.window_size = w;
        }
        if let Some(b) = ctx.opt_usize("maxBytes")? {
            if b == 0 {
                return Err(context_path
                    .key("maxBytes")
                    .invalid("must be greater than 0")
                    .into());
            }
            team.settings.max_bytes = b;
        }
        if let Some(p) = ctx.opt_bool("pinFirst")? {
            team.settings.pin_first = p;
        }
        if let Some(t) = ctx.opt_usize("maxTokens")? {
            if t == 0 {
                return Err(context_path
                    .key("maxTokens")
                    .invalid("must be greater than 0 (leave it out for no token budget)")
                    .into());
            }
            team.settings.max_tokens = Some(t);
        }
    }
    let context = ScenarioContext {
        window_size: team.settings.window_size,
        max_bytes: team.settings.max_bytes,
        pin_first: team.settings.pin_first,
        max_tokens: team.settings.max_tokens,
    };

    let team_task = match obj.map.get("teamTask") {
        None => TeamTaskOverride::FromMarkers,
        Some(Value::Null) => TeamTaskOverride::Clear,
        Some(v) => TeamTaskOverride::Set(json::string(v, &root.key("teamTask"))?.to_string()),
    };

    let messages_path = root.key("messages");
    let items = json::array(obj.required("messages")?, &messages_path)?;
    let mut messages = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let path = messages_path.index(i);
        let m = json::object(item, path)?;
        m.refuse_near_misses(&["from", "content", "to"])?;
        let to = match m.get("to") {
            None => None,
            Some(v) => {
                let to_path = path.key("to");
                let names = json::array(v, &to_path)?
                    .iter()
                    .enumerate()
                    .map(|(j, n)| json::string(n, &to_path.index(j)).map(str::to_string))
                    .collect::<Result<Vec<_>, _>>()?;
                Some(names)
            }
        };
        messages.push(ScenarioMessage {
            from: m.str("from")?.to_string(),
            content: m.str("content")?.to_string(),
            to,
        });
    }

    let scenario = Scenario {
        team,
        context,
        team_task,
        messages,
    };
    for (i, m) in scenario.messages.iter().enumerate() {
        scenario.check_message(i, m)?;
    }
    Ok(scenario)
}

impl Scenario {
    /// A stored history as a scenario with `team` and its settings: each message from its
    /// speaker's id (`system` for notices) to its resolved addressees, `team_task` in force.
    /// A session's scenario, or a snapshot's with the team in use (a snapshot holds no team);
    /// a speaker who is not in `team` makes [`Self::to_store`] name the message.
    pub fn from_history(
        team: Team,
        history: &[crate::message::Message],
        team_task: Option<&str>,
    ) -> Scenario {
        let s = &team.settings;
        let context = ScenarioContext {
            window_size: s.window_size,
            max_bytes: s.max_bytes,
            pin_first: s.pin_first,
            max_tokens: s.max_tokens,
        };
        let messages = history
            .iter()
            .map(|m| ScenarioMessage {
                from: if m.speaker.kind == crate::message::SpeakerKind::System {
                    SYSTEM_SPEAKER.to_string()
                } else {
                    m.speaker.id.clone()
                },
                content: m.content.as_str().to_owned(),
                to: Some(m.routing.resolved.clone()),
            })
            .collect();
        let team_task = match team_task {
            Some(task) => TeamTaskOverride::Set(task.to_string()),
            None => TeamTaskOverride::Clear,
        };
        Scenario {
            team,
            context,
            team_task,
            messages,
        }
    }

    /// The scenario's history as a store: each message appended in order with its routing
    /// (from `to`, else from its `[NEXT]` markers), the team task from the markers and then the
    /// `teamTask` key. No routing state machine runs.
    pub fn to_store(&self) -> Result<Store, ScenarioError> {
        self.to_store_with(|_, _| {})
    }

    /// [`Self::to_store`], telling `team_task_changed(messages stored, task)` each time the
    /// team task in force changes, the `teamTask` key included (for time travel in a session
    /// that opened this scenario).
    pub(crate) fn to_store_with(
        &self,
        mut team_task_changed: impl FnMut(usize, Option<&str>),
    ) -> Result<Store, ScenarioError> {
        let mut store = Store::new();
        for (i, m) in self.messages.iter().enumerate() {
            let speaker = self.check_message(i, m)?;
            let parsed = markers::parse(&m.content);
            let mut routing = Routing {
                raw_next: parsed.next.clone(),
                is_done: parsed.done,
                ..Routing::default()
            };
            match &m.to {
                Some(names) => {
                    for name in names.iter().filter(|n| !n.trim().is_empty()) {
                        match self.team.find(name) {
                            Some(member) => add_addressee(&mut routing, &member.id, &member.name),
                            None => add_addressee(&mut routing, name, name),
                        }
                    }
                }
                None => {
                    for addressee in &parsed.next {
                        if let Some(member) = self.team.find(&addressee.name) {
                            add_addressee(&mut routing, &member.id, &member.name);
                        }
                    }
                }
            }
            let mut changed = false;
            if let Some(task) = &parsed.team_task {
                let before = store.team_task().map(str::to_string);
                store.set_team_task(Some(task));
                changed = store.team_task() != before.as_deref();
            }
            store.push(speaker, m.content.clone(), routing, Millis(0));
            if changed {
                team_task_changed(store.len(), store.team_task());
            }
        }
        let before = store.team_task().map(str::to_string);
        match &self.team_task {
            TeamTaskOverride::FromMarkers => {}
            TeamTaskOverride::Clear => {
                store.set_team_task(None);
            }
            TeamTaskOverride::Set(task) => {
                store.set_team_task(Some(task));
            }
        }
        if store.team_task() != before.as_deref() {
            team_task_changed(store.len(), store.team_task());
        }
        Ok(store)
    }

    /// The speaker of message `i`, after checking its `from` and its size.
    fn check_message(&self, i: usize, m: &ScenarioMessage) -> Result<Speaker, ScenarioError> {
        let root = Path::Root;
        let messages = root.key("messages");
        let path = messages.index(i);
        if m.content.len() > MAX_MESSAGE_BYTES {
            return Err(ScenarioError::TooLarge {
                path: path.key("content").to_string(),
                bytes: m.content.len(),
                limit: MAX_MESSAGE_BYTES,
            });
        }
        if markers::normalize_identifier(&m.from) == SYSTEM_SPEAKER {
            return Ok(Speaker::system());
        }
        self.member(&m.from, &path.key("from")).map(Member::speaker)
    }

    fn member(&self, name: &str, path: &Path<'_>) -> Result<&Member, ScenarioError> {
        self.team
            .find_or_explain(name)
            .map_err(|error| ScenarioError::UnknownMember {
                path: path.to_string(),
                error,
            })
    }
}

/// Adds one resolved addressee unless it is already there (`[NEXT: max, Max]` is one).
fn add_addressee(routing: &mut Routing, id: &str, name: &str) {
    if !routing.resolved.iter().any(|r| r == id) {
        routing.resolved.push(id.to_string());
        routing.resolved_names.push(name.to_string());
    }
}

/// The prompt `member` (id or name) receives with the scenario's last message as the current
/// one (docs/architecture.md §11b): `{prompt, systemFlag, explain}`. With no messages it is the
/// skeleton the first delivery starts from (`context::build_skeleton`), never an error. The core
/// reads no files: a host that wants a member's `instructionFile` in the prompt sets its
/// `instruction_file_text` in [`Scenario::team`] first.
pub fn preview(scenario: &Scenario, member: &str) -> Result<Prompt, ScenarioError> {
    let recipient_member = scenario.member(member, &Path::Root.key("member"))?;
    let store = scenario.to_store()?;
    preview_in(scenario, &store, recipient_member)
}

/// A scenario with its history stored once, so each preview costs O(window + bytes emitted)
/// instead of rebuilding the whole history (docs/architecture.md §9 cost rule): for hosts that
/// preview many members, or the same member many times (the npm package's `Scenario` class,
/// benches).
#[derive(Debug, Clone)]
pub struct PreparedScenario {
    scenario: Scenario,
    store: Store,
}

impl PreparedScenario {
    /// Builds the history of `scenario` (its errors are [`Scenario::to_store`]'s).
    pub fn new(scenario: Scenario) -> Result<Self, ScenarioError> {
        let store = scenario.to_store()?;
        Ok(PreparedScenario { scenario, store })
    }

    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Exactly [`preview`] of the scenario for `member`.
    pub fn preview(&self, member: &str) -> Result<Prompt, ScenarioError> {
        let recipient_member = self.scenario.member(member, &Path::Root.key("member"))?;
        preview_in(&self.scenario, &self.store, recipient_member)
    }
}

fn preview_in(
    scenario: &Scenario,
    store: &Store,
    recipient_member: &Member,
) -> Result<Prompt, ScenarioError> {
    let recipient = Recipient::from_member(recipient_member);
    let settings = BuildSettings::for_member(&scenario.team, recipient_member);
    let Some(latest) = store.latest() else {
        return Ok(context::build_skeleton(
            &recipient,
            &settings,
            store.team_task(),
        ));
    };
    let target = Target {
        current: latest.id.clone(),
        parent: None,
    };
    Ok(context::build(store, &recipient, &target, &settings)?)
}
