//! `ContextManager`: a drop-in for the TypeScript peer's class (DESIGN §12, seed 001), over
//! the core's `agent_chatter::context::manager::ContextManager`.
//!
//! Inputs and outputs use the peer's shapes ([`crate::peer_shapes`]). State lives in a
//! `RefCell` borrowed only for the duration of a core call, and hooks run after the borrow
//! ends, so a hook may call back into the same instance (the peer allows that). An exception
//! thrown by a hook propagates to the caller unchanged, after the change it reports was made
//! (as in the peer).

use std::cell::RefCell;

use agent_chatter::context::manager::{AgentContextOptions, ContextManager, ManagerOptions};
use agent_chatter::message::{Message, Millis};
use agent_chatter::snapshot;
use js_sys::JsString;
use serde::Deserialize;
use wasm_bindgen::prelude::*;

use crate::js::{
    from_js, into_error, json_text, millis, now, parse_json, prompt_to_js, set_date, set_date_at,
    string_arg, to_js, AbsentFlag,
};
use crate::peer_shapes::{
    NewPeerMessage, PeerAssemblerInput, PeerMessage, PeerMessages, PeerSnapshot,
};

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(typescript_type = "ContextManagerOptions")]
    pub type JsContextManagerOptions;
    #[wasm_bindgen(typescript_type = "NewConversationMessage")]
    pub type JsNewMessage;
    #[wasm_bindgen(typescript_type = "ConversationMessage")]
    pub type JsMessage;
    #[wasm_bindgen(typescript_type = "ConversationMessage[]")]
    pub type JsMessages;
    #[wasm_bindgen(typescript_type = "ConversationMessage | null")]
    pub type JsMaybeMessage;
    #[wasm_bindgen(typescript_type = "AgentContextOptions")]
    pub type JsAgentContextOptions;
    #[wasm_bindgen(typescript_type = "AssemblerInput")]
    pub type JsAssemblerInput;
    #[wasm_bindgen(typescript_type = "AssemblerOutput")]
    pub type JsAssemblerOutput;
    #[wasm_bindgen(typescript_type = "ContextSnapshot")]
    pub type JsContextSnapshot;
    #[wasm_bindgen(typescript_type = "string | null")]
    pub type JsStringOrNull;
    #[wasm_bindgen(typescript_type = "ContextSnapshot | string")]
    pub type JsContextSnapshotInput;
}

/// The numeric constructor options; the hooks are read separately.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct NumericOptions {
    context_window_size: Option<usize>,
    max_bytes: Option<usize>,
}

/// Message store, team task and prompt building with the peer's API.
#[wasm_bindgen(js_name = ContextManager)]
pub struct JsContextManager {
    inner: RefCell<ContextManager>,
    on_message_added: Option<js_sys::Function>,
    on_team_task_changed: Option<js_sys::Function>,
}

#[wasm_bindgen(js_class = ContextManager)]
impl JsContextManager {
    /// `new ContextManager({contextWindowSize?, maxBytes?, onMessageAdded?, onTeamTaskChanged?})`.
    /// Defaults: window 5 (0 gives no history), budget 768 KiB.
    #[wasm_bindgen(constructor)]
    pub fn new(options: Option<JsContextManagerOptions>) -> Result<JsContextManager, JsError> {
        let options: JsValue = options.map_or(JsValue::UNDEFINED, Into::into);
        let (numeric, on_message_added, on_team_task_changed) =
            if options.is_undefined() || options.is_null() {
                (NumericOptions::default(), None, None)
            } else {
                (
                    from_js::<NumericOptions>(options.clone(), "new ContextManager(options)")?,
                    hook(&options, "onMessageAdded")?,
                    hook(&options, "onTeamTaskChanged")?,
                )
            };
        if numeric.max_bytes == Some(0) {
            return Err(JsError::new(
                "new ContextManager(options): maxBytes: must be at least 1 (a 0-byte budget holds no prompt)",
            ));
        }
        let defaults = ManagerOptions::default();
        let core = ContextManager::new(ManagerOptions {
            context_window_size: numeric
                .context_window_size
                .unwrap_or(defaults.context_window_size),
            max_bytes: numeric.max_bytes.unwrap_or(defaults.max_bytes),
        });
        Ok(JsContextManager {
            inner: RefCell::new(core),
            on_message_added,
            on_team_task_changed,
        })
    }

    /// Stores a message under the next `msg-N` id and returns it (with `onMessageAdded` called
    /// first). `timestamp` may be a `Date`, milliseconds or a date string; absent means now.
    #[wasm_bindgen(js_name = addMessage)]
    pub fn add_message(&self, message: JsNewMessage) -> Result<JsMessage, JsValue> {
        let message: JsValue = message.into();
        if !message.is_object() {
            return Err(JsError::new("addMessage(message): expected a message object").into());
        }
        let timestamp = js_sys::Reflect::get(&message, &JsValue::from_str("timestamp"))
            .unwrap_or(JsValue::UNDEFINED);
        let at = millis(&timestamp, "addMessage(message): timestamp")?.unwrap_or_else(now);
        let (speaker, content, routing) =
            from_js::<NewPeerMessage>(message, "addMessage(message)")?.into_core();
        let stored = {
            let mut inner = self.inner.borrow_mut();
            let stored = inner
                .add_message(speaker, content, routing, Millis(at))
                .map_err(|e| into_error(format!("addMessage(message): {e}")))?;
            message_to_js(stored)?
        };
        if let Some(hook) = &self.on_message_added {
            hook.call1(&JsValue::NULL, &stored)?;
        }
        Ok(stored.unchecked_into())
    }

    /// Every stored message, oldest first (a new array each call).
    #[wasm_bindgen(js_name = getMessages)]
    pub fn get_messages(&self) -> Result<JsMessages, JsError> {
        let inner = self.inner.borrow();
        let messages = inner.messages();
        let array = parse_json(&PeerMessages(messages).to_json())?;
        set_dates(&array, messages)?;
        Ok(array.unchecked_into())
    }

    /// The newest message, or `null`.
    #[wasm_bindgen(js_name = getLatestMessage)]
    pub fn get_latest_message(&self) -> Result<JsMaybeMessage, JsError> {
        let inner = self.inner.borrow();
        let value = match inner.latest() {
            Some(m) => message_to_js(m)?,
            None => JsValue::NULL,
        };
        Ok(value.unchecked_into())
    }

    /// Sets the team task, cut at 5 KiB on a character boundary (`""` clears it), then calls
    /// `onTeamTaskChanged` with the stored value.
    #[wasm_bindgen(js_name = setTeamTask)]
    pub fn set_team_task(&self, task: &JsString) -> Result<(), JsValue> {
        let task = string_arg(task, "setTeamTask(task)")?;
        let stored = {
            let mut inner = self.inner.borrow_mut();
            inner.set_team_task(&task);
            inner.team_task().map(str::to_string)
        };
        self.team_task_changed(stored)
    }

    /// The team task, or `null`.
    #[wasm_bindgen(js_name = getTeamTask)]
    pub fn get_team_task(&self) -> JsStringOrNull {
        let task = self.inner.borrow().team_task().map(JsValue::from_str);
        task.unwrap_or(JsValue::NULL).unchecked_into()
    }

    /// The assembler input for `agentId`: the latest message as current, the window before it
    /// (markers stripped, AI→AI deduplicated), the team task, the agent's instructions and
    /// the budget.
    #[wasm_bindgen(js_name = getContextForAgent)]
    pub fn get_context_for_agent(
        &self,
        #[wasm_bindgen(js_name = agentId)] agent_id: &JsString,
        #[wasm_bindgen(js_name = agentType)] agent_type: &JsString,
        options: Option<JsAgentContextOptions>,
    ) -> Result<JsAssemblerInput, JsError> {
        let agent_id = string_arg(agent_id, "getContextForAgent(agentId)")?;
        let agent_type = string_arg(agent_type, "getContextForAgent(agentId, agentType)")?;
        let options: AgentContextOptions = match options {
            Some(o) => from_js(o.into(), "getContextForAgent(agentId, agentType, options)")?,
            None => AgentContextOptions::default(),
        };
        let input: PeerAssemblerInput =
            self.inner
                .borrow()
                .context_for_agent(&agent_id, &agent_type, &options);
        Ok(to_js(&input)?.unchecked_into())
    }

    /// Assembles `input` in `agentType`'s format within `input.maxBytes`: `{prompt,
    /// systemFlag?, explain}`. Claude's system part is in `systemFlag` only (DESIGN §8).
    #[wasm_bindgen(js_name = assemblePrompt)]
    pub fn assemble_prompt(
        &self,
        #[wasm_bindgen(js_name = agentType)] agent_type: &JsString,
        input: JsAssemblerInput,
    ) -> Result<JsAssemblerOutput, JsError> {
        let agent_type = string_arg(agent_type, "assemblePrompt(agentType)")?;
        let input: PeerAssemblerInput = from_js(input.into(), "assemblePrompt(agentType, input)")?;
        let prompt = self.inner.borrow().assemble_prompt(&agent_type, &input);
        Ok(prompt_to_js(&prompt, AbsentFlag::Omitted)?.unchecked_into())
    }

    /// Empties the store and the team task, restarts ids at `msg-1`, and calls
    /// `onTeamTaskChanged(null)`.
    pub fn clear(&self) -> Result<(), JsValue> {
        self.inner.borrow_mut().clear();
        self.team_task_changed(None)
    }

    /// `{messages, teamTask, timestamp, version: 1}` in the peer's shapes (messages with `Date`
    /// timestamps), taken now.
    #[wasm_bindgen(js_name = exportSnapshot)]
    pub fn export_snapshot(&self) -> Result<JsContextSnapshot, JsError> {
        let inner = self.inner.borrow();
        // The peer's shape of `snapshot::export`, borrowed from the store (no copy of it).
        let snapshot = PeerSnapshot {
            messages: inner.messages(),
            team_task: inner.team_task(),
            timestamp: now(),
            version: snapshot::SNAPSHOT_VERSION,
        };
        let value = parse_json(&snapshot.to_json())?;
        let messages = js_sys::Reflect::get(&value, &JsValue::from_str("messages"))
            .map_err(|_| into_error("exportSnapshot: messages missing from the output"))?;
        set_dates(&messages, snapshot.messages)?;
        Ok(value.unchecked_into())
    }

    /// Replaces the state with a snapshot (the peer's or ours, as an object or JSON text),
    /// after validating all of it: on error nothing changes and the message names the field
    /// (`messages[3].speaker.id: missing`). Then calls `onTeamTaskChanged`.
    #[wasm_bindgen(js_name = importSnapshot)]
    pub fn import_snapshot(&self, snapshot: JsContextSnapshotInput) -> Result<(), JsValue> {
        let text = json_text(&snapshot.into(), "importSnapshot(snapshot)")?;
        let task = {
            let mut inner = self.inner.borrow_mut();
            snapshot::import_str(inner.store_mut(), &text)
                .map_err(|e| into_error(format!("importSnapshot(snapshot): {e}")))?;
            inner.team_task().map(str::to_string)
        };
        self.team_task_changed(task)
    }
}

impl JsContextManager {
    fn team_task_changed(&self, task: Option<String>) -> Result<(), JsValue> {
        if let Some(hook) = &self.on_team_task_changed {
            let arg = task.map_or(JsValue::NULL, |t| JsValue::from_str(&t));
            hook.call1(&JsValue::NULL, &arg)?;
        }
        Ok(())
    }
}

/// A hook from the options object: absent, or a function.
fn hook(options: &JsValue, name: &str) -> Result<Option<js_sys::Function>, JsError> {
    let value =
        js_sys::Reflect::get(options, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED);
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    value.dyn_into::<js_sys::Function>().map(Some).map_err(|_| {
        JsError::new(&format!(
            "new ContextManager(options): {name}: expected a function"
        ))
    })
}

/// Turns the `timestamp` of each message object in the JS array `array` into a `Date`.
fn set_dates(array: &JsValue, messages: &[Message]) -> Result<(), JsError> {
    let array: &js_sys::Array = array.unchecked_ref();
    let key = JsValue::from_str("timestamp");
    for (i, m) in messages.iter().enumerate() {
        let index =
            u32::try_from(i).map_err(|_| into_error("more messages than a JS array holds"))?;
        set_date_at(&array.get(index), &key, m.at.0)?;
    }
    Ok(())
}

/// A stored message in the peer's shape, with a `Date` timestamp.
fn message_to_js(m: &Message) -> Result<JsValue, JsError> {
    let value = parse_json(&PeerMessage(m).to_json())?;
    set_date(&value, m.at.0)?;
    Ok(value)
}
