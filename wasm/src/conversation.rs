//! `Conversation`: the routing state machine (docs/architecture.md §6) for JS hosts that run agents
//! themselves. Facts go in (`submit`, `agentReplied`, `agentFailed`), actions come out
//! (`pollActions`); the host performs them.
//!
//! Times are optional arguments (a `Date`, ms, or a date string); when left out the binding
//! uses the host clock, since the core reads none (docs/architecture.md §2).

use std::cell::{Ref, RefCell, RefMut};

use agent_chatter::config;
use agent_chatter::conversation::InputError;
use agent_chatter::conversation::{Action, Delivery};
use agent_chatter::markers::Intent;
use agent_chatter::message::{Message, MessageId, Millis};
use agent_chatter::session::{Fact, PreviewOverrides, Session, SessionError};
use js_sys::{Array, JsString, Object};
use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::js::{
    into_error, json_text, kind_of, millis, now, optional_string_arg, parse_json, prompt_to_js,
    string_arg, to_js, whole_number,
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
    #[wasm_bindgen(typescript_type = "PreviewOverrides")]
    pub type JsPreviewOverrides;
    #[wasm_bindgen(typescript_type = "number")]
    pub type JsMessageIndex;
}

/// The conversation state machine, as a thin façade over the core's
/// [`Session`](agent_chatter::session::Session): every call becomes a fact
/// (docs/architecture.md §6b), so `exportSession()` is the fact log and `resume` replays it — the
/// same bytes on every host.
///
/// Every method takes `&self` and reads its arguments (where a caller's getter, `toJSON` or
/// Proxy trap may run, throw, or call back in) before it borrows the state, which it then
/// holds only while Rust alone runs. So an argument that throws leaves the conversation
/// usable (an exception crossing wasm skips destructors: a borrow held then would never be
/// released), and a getter that calls back in simply makes its call first.
#[wasm_bindgen(js_name = Conversation)]
pub struct JsConversation {
    state: RefCell<State>,
}

struct State {
    session: Session,
    /// Every stored message already converted for `getMessages`, frozen, in order.
    messages: MessageCache,
}

#[wasm_bindgen(js_class = Conversation)]
impl JsConversation {
    /// A conversation, with `team` set when given (ours or the peer's `cli-config`, as an
    /// object or JSON text).
    #[wasm_bindgen(constructor)]
    pub fn new(team: Option<JsTeamInput>) -> Result<JsConversation, JsError> {
        let conversation = JsConversation::with(Session::new());
        if let Some(team) = team {
            conversation.set_team_as(team, "new Conversation(team)")?;
        }
        Ok(conversation)
    }

    /// Replaces the team and resets everything (messages, team task, queue, waiting state).
    /// An invalid team leaves the conversation as it was; the error names the field.
    #[wasm_bindgen(js_name = setTeam)]
    pub fn set_team(&self, team: JsTeamInput) -> Result<(), JsError> {
        self.set_team_as(team, "Conversation.setTeam(team)")
    }

    /// A human typed `text`. The sender is `sender` (a member id) when given, else `[FROM]`,
    /// else the awaited human, else the only human. Returns the stored message's id. On error
    /// (docs/architecture.md §19 (seed 004)'s messages) nothing changes.
    pub fn submit(
        &self,
        text: &JsString,
        sender: Option<JsString>,
        at: Option<JsTime>,
    ) -> Result<String, JsError> {
        let text = string_arg(text, "Conversation.submit(text)")?;
        let sender = optional_string_arg(sender, "Conversation.submit(text, sender)")?;
        let at = time(at, "Conversation.submit(text, sender, at): at")?;
        self.apply_with(
            "submit",
            Fact::Human {
                text: text.into(),
                sender,
                at,
            },
            |e| match e {
                // The catalogue's words are for people typing `[FROM:x]`; a JS host has the
                // argument too.
                SessionError::Input(e @ InputError::SenderRequired { .. }) => {
                    JsError::new(&format!(
                "{e}\n\nFrom code, pass the sender's member id instead: submit(text, senderId)"
            ))
                }
                e => into_error(e),
            },
        )
    }

    /// Agent `memberId` answered its delivery with `text` (its final text, stored exactly).
    /// Returns the stored message's id.
    #[wasm_bindgen(js_name = agentReplied)]
    pub fn agent_replied(
        &self,
        #[wasm_bindgen(js_name = memberId)] member_id: &JsString,
        text: &JsString,
        at: Option<JsTime>,
    ) -> Result<String, JsError> {
        let member_id = string_arg(member_id, "Conversation.agentReplied(memberId)")?;
        let text = string_arg(text, "Conversation.agentReplied(memberId, text)")?;
        let at = time(at, "Conversation.agentReplied(memberId, text, at): at")?;
        self.apply("agentReplied", Fact::replied(member_id, text, at))
    }

    /// Agent `memberId`'s delivery failed (timeout, crash, bad output): recorded as a system
    /// notice; the queue continues. Returns the notice's id.
    #[wasm_bindgen(js_name = agentFailed)]
    pub fn agent_failed(
        &self,
        #[wasm_bindgen(js_name = memberId)] member_id: &JsString,
        reason: &JsString,
        at: Option<JsTime>,
    ) -> Result<String, JsError> {
        let member_id = string_arg(member_id, "Conversation.agentFailed(memberId)")?;
        let reason = string_arg(reason, "Conversation.agentFailed(memberId, reason)")?;
        let at = time(at, "Conversation.agentFailed(memberId, reason, at): at")?;
        self.apply("agentFailed", Fact::failed(member_id, reason, at))
    }

    /// Runs agent `memberId`'s failed delivery again (a `retry` fact, docs/architecture.md
    /// §6b): valid only when its last run failed and nothing is running or queued for it; the
    /// delivery comes from `pollActions` as any other. Refused otherwise, saying why.
    #[wasm_bindgen(js_name = retryAgent)]
    pub fn retry_agent(
        &self,
        #[wasm_bindgen(js_name = memberId)] member_id: &JsString,
        at: Option<JsTime>,
    ) -> Result<(), JsError> {
        let to = string_arg(member_id, "Conversation.retryAgent(memberId)")?;
        let at = time(at, "Conversation.retryAgent(memberId, at): at")?;
        self.apply("retryAgent", Fact::Retry { to, at }).map(drop)
    }

    /// Drains every pending action, in order. After a `deliver`, report its outcome with
    /// `agentReplied` or `agentFailed` before expecting the next delivery.
    #[wasm_bindgen(js_name = pollActions)]
    pub fn poll_actions(&self) -> Result<JsActions, JsError> {
        let actions = Array::new();
        let mut state = self.state_mut("pollActions")?;
        while let Some(action) = state.session.poll_action() {
            actions.push(&action_to_js(&action)?);
        }
        Ok(actions.unchecked_into())
    }

    /// Every stored message (raw content, parsed routing), oldest first, in a new array.
    /// The message objects are frozen and shared between calls: stored messages never change,
    /// and each crosses from wasm once, so a call costs an array copy however long the history.
    #[wasm_bindgen(js_name = getMessages)]
    pub fn get_messages(&self) -> Result<JsMessageList, JsError> {
        let state = self.state("getMessages")?;
        Ok(state
            .messages
            .up_to_date(state.session.store().messages())?
            .unchecked_into())
    }

    /// `idle`, `running`, `awaitingHuman` or `completed`.
    #[wasm_bindgen(getter)]
    pub fn status(&self) -> Result<JsStatus, JsError> {
        let state = self.state("status")?;
        Ok(to_js(&state.session.conversation().status())?.unchecked_into())
    }

    /// The human whose input is awaited, or `null`.
    #[wasm_bindgen(getter, js_name = waitingFor)]
    pub fn waiting_for(&self) -> Result<JsOptionalString, JsError> {
        let state = self.state("waitingFor")?;
        Ok(optional_string(state.session.conversation().waiting_for()))
    }

    /// The team task, or `null`.
    #[wasm_bindgen(getter, js_name = teamTask)]
    pub fn team_task(&self) -> Result<JsOptionalString, JsError> {
        let state = self.state("teamTask")?;
        Ok(optional_string(state.session.store().team_task()))
    }

    /// AI deliveries emitted since the last human message.
    #[wasm_bindgen(getter)]
    pub fn rounds(&self) -> Result<usize, JsError> {
        Ok(self.state("rounds")?.session.conversation().rounds())
    }

    /// Pending deliveries in enqueue order.
    pub fn pending(&self) -> Result<JsPending, JsError> {
        let state = self.state("pending")?;
        Ok(to_js(state.session.conversation().pending())?.unchecked_into())
    }

    /// The delivery whose outcome is awaited, or `null`.
    #[wasm_bindgen(js_name = inFlight)]
    pub fn in_flight(&self) -> Result<JsInFlight, JsError> {
        let state = self.state("inFlight")?;
        Ok(to_js(&state.session.conversation().in_flight())?.unchecked_into())
    }

    /// The session to persist: its fact log, `{format: "agent-chatter-session/1", facts}`
    /// (plain JSON data). `Conversation.resume(session)` replays it. `at` is accepted for
    /// compatibility and unused: the log carries every fact's own time. Throws before
    /// `setTeam`.
    #[wasm_bindgen(js_name = exportSession)]
    pub fn export_session(&self, at: Option<JsTime>) -> Result<JsSession, JsError> {
        time(at, "Conversation.exportSession(at)")?;
        let exported = {
            let state = self.state("exportSession")?;
            if state.session.team().is_none() {
                return Err(JsError::new(
                    "Conversation.exportSession(at): no team loaded, nothing to export",
                ));
            }
            state.session.export()
        };
        Ok(parse_json(&exported)?.unchecked_into())
    }

    /// Replays an exported session (object or JSON text) into a new conversation; a session
    /// that is malformed, of another format or whose facts do not replay throws an error
    /// naming the fact and field. The pending action is emitted again: the in-flight delivery
    /// (same prompt bytes as the first time; the host lost it), or `awaitHuman`. `at` is
    /// accepted for compatibility and unused.
    pub fn resume(session: JsSessionInput, at: Option<JsTime>) -> Result<JsConversation, JsError> {
        const ARG: &str = "Conversation.resume(session)";
        time(at, "Conversation.resume(session, at): at")?;
        let text = json_text(&session.into(), ARG)?;
        let session = Session::import(&text).map_err(|e| into_error(format!("{ARG}: {e}")))?;
        Ok(JsConversation::with(session))
    }

    /// The prompt `memberId` would get with message `at` (0-based; the last one when left
    /// out) as its `[MESSAGE]`, under the settings in force or `overrides` (what-if), without
    /// changing anything: `{prompt, systemFlag, explain}`. A message that `memberId` was
    /// delivered previews as exactly what it got. With no message yet it is the skeleton.
    pub fn preview(
        &self,
        #[wasm_bindgen(js_name = memberId)] member_id: &JsString,
        at: Option<JsMessageIndex>,
        overrides: Option<JsPreviewOverrides>,
    ) -> Result<crate::preview::JsPreview, JsError> {
        const ARG: &str = "Conversation.preview(memberId, at, overrides)";
        let member_id = string_arg(member_id, "Conversation.preview(memberId)")?;
        let at = match at {
            Some(at) => whole_number(&at.into(), "Conversation.preview(memberId, at)")?,
            None => None,
        };
        let overrides = match overrides {
            Some(o) => preview_overrides(&o.into())?,
            None => PreviewOverrides::default(),
        };
        let prompt = self
            .state("preview")?
            .session
            .preview(&member_id, at, &overrides)
            .map_err(|e| into_error(format!("{ARG}: {e}")))?;
        Ok(prompt_to_js(&prompt)?.unchecked_into())
    }

    /// The team (validated, in our format), or `null` before `setTeam`.
    #[wasm_bindgen(js_name = getTeam)]
    pub fn get_team(&self) -> Result<JsTeam, JsError> {
        Ok(to_js(&self.state("getTeam")?.session.team())?.unchecked_into())
    }
}

impl JsConversation {
    /// `setTeam`, its errors starting with `call` (the constructor's name their own call).
    fn set_team_as(&self, team: JsTeamInput, call: &str) -> Result<(), JsError> {
        let text = json_text(&team.into(), call)?;
        let team = config::load_team(&text).map_err(|e| into_error(format!("{call}: {e}")))?;
        let mut state = self.state_mut("setTeam")?;
        state
            .session
            .apply(&Fact::set_team(team))
            .map_err(|e| into_error(format!("{call}: {e}")))?;
        // The only fact that removes messages: the next ones reuse the old ids.
        state.messages = MessageCache::default();
        Ok(())
    }

    fn with(session: Session) -> Self {
        JsConversation {
            state: RefCell::new(State {
                session,
                messages: MessageCache::default(),
            }),
        }
    }

    /// The state, to read. Only busy if Rust code that holds it ran a caller's code, which it
    /// never does (the struct doc); the words are for that bug, not a panic.
    fn state(&self, method: &str) -> Result<Ref<'_, State>, JsError> {
        self.state.try_borrow().map_err(|_| busy(method))
    }

    /// The state, to change (see [`Self::state`]).
    fn state_mut(&self, method: &str) -> Result<RefMut<'_, State>, JsError> {
        self.state.try_borrow_mut().map_err(|_| busy(method))
    }

    /// Applies a fact and returns the id of the message it stored.
    fn apply(&self, method: &str, fact: Fact) -> Result<String, JsError> {
        self.apply_with(method, fact, into_error)
    }

    /// [`Self::apply`], with the session's refusal put in words by `refused`.
    fn apply_with(
        &self,
        method: &str,
        fact: Fact,
        refused: impl FnOnce(SessionError) -> JsError,
    ) -> Result<String, JsError> {
        let mut state = self.state_mut(method)?;
        state.session.apply(&fact).map_err(refused)?;
        Ok(state
            .session
            .store()
            .latest()
            .map_or_else(String::new, |m| m.id.0.clone()))
    }
}

fn busy(method: &str) -> JsError {
    JsError::new(&format!(
        "Conversation.{method}: this Conversation is busy with another call; nothing changed"
    ))
}

/// An action as JS data (the core's serde shape). A delivery also carries `promptSha256`, the
/// digest of exactly what the agent is given (docs/architecture.md §6b), so a JS host can show a
/// previewed prompt is the one it sent, as the bridge does. A delivery's prompt text crosses as a
/// plain string rather than inside JSON ([`prompt_to_js`]): `pollActions` with a 738 KB prompt
/// took 4.4 ms through JSON, 1.8 ms this way (`node`, median of 30).
fn action_to_js(action: &Action) -> Result<JsValue, JsError> {
    let Action::Deliver(delivery) = action else {
        return to_js(action);
    };
    let object = to_js(&DeliveryHead::from(delivery.as_ref()))?;
    js_sys::Reflect::set(
        &object,
        &JsValue::from_str("prompt"),
        &prompt_to_js(&delivery.prompt)?,
    )
    .map_err(|_| JsError::new("cannot set prompt on the delivery"))?;
    js_sys::Reflect::set(
        &object,
        &JsValue::from_str("promptSha256"),
        &JsValue::from_str(&delivery.prompt.sha256_hex()),
    )
    .map_err(|_| JsError::new("cannot set promptSha256 on the delivery"))?;
    Ok(object)
}

/// A delivery without its prompt, in [`Delivery`]'s serde shape (`Action::Deliver`'s `type`
/// tag included); a test holds the two shapes together.
#[derive(Serialize)]
#[serde(tag = "type", rename = "deliver")]
struct DeliveryHead<'a> {
    to: &'a str,
    message: &'a MessageId,
    parent: &'a Option<MessageId>,
    intent: Intent,
}

impl<'a> From<&'a Delivery> for DeliveryHead<'a> {
    fn from(d: &'a Delivery) -> Self {
        DeliveryHead {
            to: &d.to,
            message: &d.message,
            parent: &d.parent,
            intent: d.intent,
        }
    }
}

/// The stored messages as JS objects, converted once each. Messages are only ever appended
/// (a new team starts a new cache), so the first `array.length` stored messages are the ones
/// already here.
struct MessageCache {
    array: Array,
}

impl Default for MessageCache {
    fn default() -> Self {
        Self {
            array: Array::new(),
        }
    }
}

impl MessageCache {
    /// A copy of the cached array after converting the messages stored since the last call.
    fn up_to_date(&self, stored: &[Message]) -> Result<Array, JsError> {
        let array = &self.array;
        if array.length() as usize > stored.len() {
            // Cannot happen (messages are only appended); rebuilt rather than wrong.
            array.set_length(0);
        }
        let new = &stored[array.length() as usize..];
        if !new.is_empty() {
            let converted: Array = to_js(new)?.unchecked_into();
            for message in converted.iter() {
                freeze_deep(&message);
                array.push(&message);
            }
        }
        Ok(array.slice(0, array.length()))
    }
}

/// `Object.freeze` on `value` and every object inside it: JSON data, so no cycles.
fn freeze_deep(value: &JsValue) {
    if let Some(object) = value.dyn_ref::<Object>() {
        for inner in Object::values(object).iter() {
            freeze_deep(&inner);
        }
        Object::freeze(object);
    }
}

/// The what-if overrides of `Conversation.preview`, read key by key so a number is checked as
/// a number (JSON would turn `NaN` into `null`, i.e. "keep the setting") and a mistyped key is
/// refused rather than ignored. Errors read `Conversation.preview(memberId, at, overrides):
/// <key>: …`.
fn preview_overrides(value: &JsValue) -> Result<PreviewOverrides, JsError> {
    const ARG: &str = "Conversation.preview(memberId, at, overrides)";
    const KEYS: [&str; 4] = ["windowSize", "maxBytes", "pinFirst", "maxTokens"];
    let mut overrides = PreviewOverrides::default();
    if value.is_undefined() || value.is_null() {
        return Ok(overrides);
    }
    let Some(object) = value
        .dyn_ref::<Object>()
        .filter(|_| !Array::is_array(value))
    else {
        let found = if Array::is_array(value) {
            "an array".to_owned()
        } else {
            kind_of(value)
        };
        return Err(JsError::new(&format!(
            "{ARG}: expected an object, found {found}"
        )));
    };
    for entry in Object::entries(object).iter() {
        let entry: Array = entry.unchecked_into();
        let key = entry.get(0).as_string().unwrap_or_default();
        let value = entry.get(1);
        let field = format!("{ARG}: {key}");
        match key.as_str() {
            "windowSize" => overrides.window_size = whole_number(&value, &field)?,
            "maxBytes" => overrides.max_bytes = whole_number(&value, &field)?,
            "maxTokens" => overrides.max_tokens = whole_number(&value, &field)?,
            "pinFirst" if value.is_undefined() || value.is_null() => overrides.pin_first = None,
            "pinFirst" => {
                overrides.pin_first = Some(value.as_bool().ok_or_else(|| {
                    JsError::new(&format!(
                        "{field}: expected true or false, found {}",
                        kind_of(&value)
                    ))
                })?);
            }
            _ => {
                return Err(JsError::new(&format!(
                    "{field}: not a key here (expected {})",
                    agent_chatter::error::choices(KEYS)
                )))
            }
        }
    }
    Ok(overrides)
}

fn time(at: Option<JsTime>, argument: &str) -> Result<Millis, JsError> {
    let at: JsValue = at.map_or(JsValue::UNDEFINED, Into::into);
    Ok(Millis(millis(&at, argument)?.unwrap_or_else(now)))
}

fn optional_string(s: Option<&str>) -> JsOptionalString {
    s.map_or(JsValue::NULL, JsValue::from_str).unchecked_into()
}

#[cfg(test)]
mod tests {
    use agent_chatter::conversation::Action;
    use agent_chatter::message::Millis;
    use agent_chatter::session::{Fact, Session};

    use super::DeliveryHead;

    #[test]
    fn a_delivery_head_is_the_delivery_shape_without_its_prompt() {
        let mut session = Session::new();
        session
            .apply(&Fact::set_team(agent_chatter::demo::team()))
            .expect("the demo team");
        session
            .apply(&Fact::human(
                "[FROM: kailai] Plan it [NEXT: max]",
                Millis(1),
            ))
            .expect("a human spoke");
        let delivery = std::iter::from_fn(|| session.poll_action())
            .find_map(|a| match a {
                Action::Deliver(d) => Some(d),
                _ => None,
            })
            .expect("max is due");
        let mut whole =
            serde_json::to_value(Action::Deliver(delivery.clone())).expect("serializes");
        whole
            .as_object_mut()
            .expect("an object")
            .remove("prompt")
            .expect("a prompt");
        let head = serde_json::to_value(DeliveryHead::from(delivery.as_ref())).expect("serializes");
        assert_eq!(head, whole);
    }
}
