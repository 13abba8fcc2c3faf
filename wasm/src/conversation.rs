//! `Conversation`: the routing state machine (DESIGN §6) for JS hosts that run agents
//! themselves. Facts go in (`submit`, `agentReplied`, `agentFailed`), actions come out
//! (`pollActions`); the host performs them.
//!
//! Times are optional arguments (a `Date`, ms, or a date string); when left out the binding
//! uses the host clock, since the core reads none (DESIGN §2).

use agent_chatter::config;
use agent_chatter::context::Store;
use agent_chatter::conversation::{Conversation, HumanInput, RoutingState};
use agent_chatter::message::Millis;
use agent_chatter::snapshot::{self, Snapshot};
use agent_chatter::team::Team;
use js_sys::JsString;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use wasm_bindgen::prelude::*;

use crate::js::{
    from_json_text, into_error, json_text, millis, now, optional_string_arg, string_arg, to_js,
};

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(typescript_type = "TeamConfig | PeerCliConfig | string")]
    pub type JsTeamInput;
    #[wasm_bindgen(typescript_type = "Date | number | string")]
    pub type JsTime;
    #[wasm_bindgen(typescript_type = "Action[]")]
    pub type JsActions;
    #[wasm_bindgen(typescript_type = "Message[]")]
    pub type JsMessageList;
    #[wasm_bindgen(typescript_type = "Status")]
    pub type JsStatus;
    #[wasm_bindgen(typescript_type = "string | null")]
    pub type JsOptionalString;
    #[wasm_bindgen(typescript_type = "QueuedDelivery[]")]
    pub type JsPending;
    #[wasm_bindgen(typescript_type = "InFlight | null")]
    pub type JsInFlight;
    #[wasm_bindgen(typescript_type = "Team | null")]
    pub type JsTeam;
    #[wasm_bindgen(typescript_type = "ConversationSession")]
    pub type JsSession;
    #[wasm_bindgen(typescript_type = "ConversationSession | string")]
    pub type JsSessionInput;
}

/// Everything needed to resume a conversation: the team, the messages and team task (a
/// snapshot), and the routing state (queue, waiting, in flight).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SessionOut<'a> {
    team: &'a Team,
    snapshot: Snapshot,
    state: RoutingState,
}

/// [`SessionOut`] read back; the team and snapshot go through the core's own readers.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SessionIn {
    team: Box<RawValue>,
    snapshot: Box<RawValue>,
    state: RoutingState,
}

/// The conversation state machine.
#[wasm_bindgen(js_name = Conversation)]
pub struct JsConversation {
    inner: Conversation,
}

#[wasm_bindgen(js_class = Conversation)]
impl JsConversation {
    /// A conversation, with `team` set when given (ours or the peer's `cli-config`, as an
    /// object or JSON text).
    #[wasm_bindgen(constructor)]
    pub fn new(team: Option<JsTeamInput>) -> Result<JsConversation, JsError> {
        let mut conversation = JsConversation {
            inner: Conversation::new(),
        };
        if let Some(team) = team {
            conversation.set_team(team)?;
        }
        Ok(conversation)
    }

    /// Replaces the team and resets everything (messages, team task, queue, waiting state).
    /// An invalid team leaves the conversation as it was; the error names the field.
    #[wasm_bindgen(js_name = setTeam)]
    pub fn set_team(&mut self, team: JsTeamInput) -> Result<(), JsError> {
        let text = json_text(&team.into(), "setTeam(team)")?;
        let team =
            config::load_team(&text).map_err(|e| into_error(format!("setTeam(team): {e}")))?;
        self.inner.set_team(team);
        Ok(())
    }

    /// A human typed `text`. The sender is `sender` (a member id) when given, else `[FROM]`,
    /// else the awaited human, else the only human. Returns the stored message's id. On error
    /// (seed 004's messages) nothing changes.
    pub fn submit(
        &mut self,
        text: &JsString,
        sender: Option<JsString>,
        at: Option<JsTime>,
    ) -> Result<String, JsError> {
        let text = string_arg(text, "submit(text)")?;
        let sender = optional_string_arg(sender, "submit(text, sender)")?;
        let at = time(at, "submit(text, sender, at): at")?;
        let input = HumanInput { text, sender };
        let id = self
            .inner
            .handle_human_input(input, at)
            .map_err(into_error)?;
        Ok(id.0)
    }

    /// Agent `memberId` answered its delivery with `text` (its final text, stored exactly).
    /// Returns the stored message's id.
    #[wasm_bindgen(js_name = agentReplied)]
    pub fn agent_replied(
        &mut self,
        #[wasm_bindgen(js_name = memberId)] member_id: &JsString,
        text: &JsString,
        at: Option<JsTime>,
    ) -> Result<String, JsError> {
        let member_id = string_arg(member_id, "agentReplied(memberId)")?;
        let text = string_arg(text, "agentReplied(memberId, text)")?;
        let at = time(at, "agentReplied(memberId, text, at): at")?;
        let id = self
            .inner
            .handle_agent_replied(&member_id, text, at)
            .map_err(into_error)?;
        Ok(id.0)
    }

    /// Agent `memberId`'s delivery failed (timeout, crash, bad output): recorded as a system
    /// notice; the queue continues. Returns the notice's id.
    #[wasm_bindgen(js_name = agentFailed)]
    pub fn agent_failed(
        &mut self,
        #[wasm_bindgen(js_name = memberId)] member_id: &JsString,
        reason: &JsString,
        at: Option<JsTime>,
    ) -> Result<String, JsError> {
        let member_id = string_arg(member_id, "agentFailed(memberId)")?;
        let reason = string_arg(reason, "agentFailed(memberId, reason)")?;
        let at = time(at, "agentFailed(memberId, reason, at): at")?;
        let id = self
            .inner
            .handle_agent_failed(&member_id, reason, at)
            .map_err(into_error)?;
        Ok(id.0)
    }

    /// Drains every pending action, in order. After a `deliver`, report its outcome with
    /// `agentReplied` or `agentFailed` before expecting the next delivery.
    #[wasm_bindgen(js_name = pollActions)]
    pub fn poll_actions(&mut self) -> Result<JsActions, JsError> {
        let actions: Vec<_> = std::iter::from_fn(|| self.inner.poll_action()).collect();
        Ok(to_js(&actions)?.unchecked_into())
    }

    /// Every stored message (raw content, parsed routing), oldest first.
    #[wasm_bindgen(js_name = getMessages)]
    pub fn get_messages(&self) -> Result<JsMessageList, JsError> {
        Ok(to_js(self.inner.store().messages())?.unchecked_into())
    }

    /// `idle`, `running`, `awaitingHuman` or `completed`.
    #[wasm_bindgen(getter)]
    pub fn status(&self) -> Result<JsStatus, JsError> {
        Ok(to_js(&self.inner.status())?.unchecked_into())
    }

    /// The human whose input is awaited, or `null`.
    #[wasm_bindgen(getter, js_name = waitingFor)]
    pub fn waiting_for(&self) -> JsOptionalString {
        optional_string(self.inner.waiting_for())
    }

    /// The team task, or `null`.
    #[wasm_bindgen(getter, js_name = teamTask)]
    pub fn team_task(&self) -> JsOptionalString {
        optional_string(self.inner.store().team_task())
    }

    /// AI deliveries emitted since the last human message.
    #[wasm_bindgen(getter)]
    pub fn rounds(&self) -> usize {
        self.inner.rounds()
    }

    /// Pending deliveries in enqueue order.
    pub fn pending(&self) -> Result<JsPending, JsError> {
        Ok(to_js(self.inner.pending())?.unchecked_into())
    }

    /// The delivery whose outcome is awaited, or `null`.
    #[wasm_bindgen(js_name = inFlight)]
    pub fn in_flight(&self) -> Result<JsInFlight, JsError> {
        Ok(to_js(&self.inner.in_flight())?.unchecked_into())
    }

    /// The session to persist (`{team, snapshot, state}`, plain JSON data), taken at `at`
    /// (default now). `Conversation.resume(session)` continues it. Throws before `setTeam`.
    #[wasm_bindgen(js_name = exportSession)]
    pub fn export_session(&self, at: Option<JsTime>) -> Result<JsSession, JsError> {
        let at = time(at, "exportSession(at)")?;
        let team = self
            .inner
            .team()
            .ok_or_else(|| JsError::new("exportSession: no team loaded, nothing to export"))?;
        let session = SessionOut {
            team,
            snapshot: snapshot::export(self.inner.store(), at),
            state: self.inner.routing_state(),
        };
        Ok(to_js(&session)?.unchecked_into())
    }

    /// Continues an exported session (object or JSON text), validated fully first; the error
    /// names the field. The pending action is emitted again: the in-flight delivery as a
    /// fresh `deliver` (the host lost it), or `awaitHuman`.
    pub fn resume(session: JsSessionInput, at: Option<JsTime>) -> Result<JsConversation, JsError> {
        const ARG: &str = "Conversation.resume(session)";
        let at = time(at, "Conversation.resume(session, at): at")?;
        let session: SessionIn = from_json_text(&json_text(&session.into(), ARG)?, ARG)?;
        let team = config::load_team(session.team.get())
            .map_err(|e| into_error(format!("{ARG}: team: {e}")))?;
        let mut store = Store::new();
        snapshot::import_str(&mut store, session.snapshot.get())
            .map_err(|e| into_error(format!("{ARG}: snapshot: {e}")))?;
        let inner = Conversation::resume(team, store, session.state, at)
            .map_err(|e| into_error(format!("{ARG}: state.{e}")))?;
        Ok(JsConversation { inner })
    }

    /// The team (validated, in our format), or `null` before `setTeam`.
    #[wasm_bindgen(js_name = getTeam)]
    pub fn get_team(&self) -> Result<JsTeam, JsError> {
        Ok(to_js(&self.inner.team())?.unchecked_into())
    }
}

fn time(at: Option<JsTime>, argument: &str) -> Result<Millis, JsError> {
    let at: JsValue = at.map_or(JsValue::UNDEFINED, Into::into);
    Ok(Millis(millis(&at, argument)?.unwrap_or_else(now)))
}

fn optional_string(s: Option<&str>) -> JsOptionalString {
    s.map_or(JsValue::NULL, JsValue::from_str).unchecked_into()
}
