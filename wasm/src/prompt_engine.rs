//! `PromptEngine`: the wasm half of the npm `ContextManager`. The JS half
//! (`wasm/npm/context-manager.js`) keeps the messages in JS, in the peer's shapes, as the peer
//! does — so reads and snapshots cost what the peer's do — and hands the engine only what a
//! prompt reads: the messages of the window, once each (the engine keeps their stripped text).
//!
//! The engine holds a suffix of the conversation (the core's [`ContextManager::restart_at`]);
//! when a prompt needs an earlier message, or later messages were skipped, the JS half starts
//! a new mirror. A [`HeldContext`] (what `getContextForAgent` returns, behind lazy getters) is
//! a recipe — the mirror it was taken from, the length of the conversation and the team task
//! then — so `assemblePrompt` builds from the held messages directly, with no copy of the
//! history crossing the boundary, and gives the same bytes later even if messages were added
//! meanwhile. Every rule stays in the core; this file converts and calls.

use std::cell::RefCell;
use std::rc::Rc;

use agent_chatter::config;
use agent_chatter::message::Millis;
use agent_chatter::objects::Object;
use agent_chatter::peer::context_manager::{
    AgentContextOptions, Asked, ContextManager, ManagerOptions,
};
use agent_chatter::team::{self, PromptFormat};
use js_sys::JsString;
use wasm_bindgen::prelude::*;

use agent_chatter::context::Store;
use agent_chatter::message::{Message, MAX_MESSAGE_BYTES};
use agent_chatter::snapshot;

use crate::js::{
    from_js, into_error, json_text, kind_of, optional_string_arg, parse_json, set_date_at,
    string_arg, to_js,
};
use agent_chatter::peer::message::{NewPeerMessage, PeerMessages};

type Mirror = Rc<RefCell<ContextManager>>;

/// The held messages and team task of one `ContextManager` (module doc).
///
/// Every method takes `&self` and reads its arguments (a caller's getters may run, and throw)
/// before it borrows the mirror, which it then holds only while Rust alone runs: an exception
/// crossing wasm skips destructors, so a borrow held then would never be released and the
/// manager would be stuck for good.
#[wasm_bindgen]
pub struct PromptEngine {
    mirror: RefCell<Mirror>,
    options: ManagerOptions,
}

#[wasm_bindgen]
impl PromptEngine {
    /// An engine with the manager's window and budget (checked by the JS half).
    #[wasm_bindgen(constructor)]
    pub fn new(window: usize, max_bytes: usize) -> PromptEngine {
        let options = ManagerOptions {
            context_window_size: window,
            max_bytes,
        };
        PromptEngine {
            mirror: RefCell::new(Rc::new(RefCell::new(ContextManager::new(options)))),
            options,
        }
    }

    /// Position of the first held message.
    pub fn first(&self) -> usize {
        self.mirror().borrow().first_index()
    }

    /// One past the position of the last held message.
    pub fn end(&self) -> usize {
        self.mirror().borrow().end_index()
    }

    /// The first position a prompt for the first `end` messages reads (the window in force:
    /// `windowSizeOverride`, else the manager's).
    #[wasm_bindgen(js_name = neededFrom)]
    pub fn needed_from(&self, end: usize, window_override: Option<usize>) -> usize {
        let window = self.mirror().borrow().window(window_override);
        ContextManager::needed(end, window).start
    }

    /// Starts a new mirror holding from position `first` on, with the same team task; contexts
    /// taken before keep the mirror they were taken from.
    #[wasm_bindgen(js_name = restartAt)]
    pub fn restart_at(&self, first: usize) {
        let mut fresh = ContextManager::new(self.options);
        fresh.set_team_task(self.mirror().borrow().team_task().unwrap_or_default());
        fresh.restart_at(first);
        *self.mirror.borrow_mut() = Rc::new(RefCell::new(fresh));
    }

    /// Mirrors the message at position `end()`: a stored message object (the JS half checked
    /// its shape). Only speaker, content and routing are read.
    pub fn push(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ConversationMessage")] message: JsValue,
    ) -> Result<(), JsError> {
        let message = read_message(message)?;
        add_to(&mut self.mirror().borrow_mut(), message)
    }

    /// Sets the team task (capped at 5 KiB on a character boundary, `""` clears) and returns
    /// what is stored.
    #[wasm_bindgen(js_name = setTeamTask)]
    pub fn set_team_task(&self, task: &JsString) -> Result<Option<String>, JsError> {
        let task = string_arg(task, "setTeamTask(task)")?;
        let mirror = self.mirror();
        let mut mirror = mirror.borrow_mut();
        mirror.set_team_task(&task);
        Ok(mirror.team_task().map(str::to_string))
    }

    /// The context for `agentId` as of the first `end` messages (all held: the JS half made
    /// sure), with the team task in force now.
    pub fn context(
        &self,
        end: usize,
        #[wasm_bindgen(js_name = agentId)] agent_id: &JsString,
        #[wasm_bindgen(js_name = windowSizeOverride)] window_size_override: Option<usize>,
        #[wasm_bindgen(js_name = systemInstruction, unchecked_param_type = "string | string[] | null")]
        system_instruction: JsValue,
        #[wasm_bindgen(js_name = instructionFileText)] instruction_file_text: Option<JsString>,
    ) -> Result<HeldContext, JsError> {
        let argument = "getContextForAgent(agentId, agentType, options)";
        // The arguments first (an array of lines may run a caller's code), then the mirror.
        let agent_id = string_arg(agent_id, "getContextForAgent(agentId)")?;
        let options = AgentContextOptions {
            window_size_override,
            system_instruction: instruction_lines(
                &system_instruction,
                &format!("{argument}: systemInstruction"),
            )?,
            instruction_file_text: optional_string_arg(
                instruction_file_text,
                &format!("{argument}: instructionFileText"),
            )?,
        };
        let mirror = self.mirror();
        let team_task = mirror.borrow().team_task().map(str::to_string);
        Ok(HeldContext {
            mirror,
            end,
            team_task,
            agent_id,
            options,
        })
    }

    /// The normalised agent type when `agentType` names no known format (the plain assembler
    /// builds its prompt), for the peer's `logger.warn`; `undefined` for a known one.
    #[wasm_bindgen(js_name = unknownAgentType)]
    pub fn unknown_agent_type(
        #[wasm_bindgen(js_name = agentType)] agent_type: &JsString,
    ) -> Result<Option<String>, JsError> {
        let agent_type = string_arg(agent_type, "assemblePrompt(agentType)")?;
        Ok((team::prompt_format(&agent_type) == PromptFormat::Plain)
            .then(|| team::normalize_agent_type(&agent_type)))
    }

    /// The largest message content, in UTF-8 bytes.
    #[wasm_bindgen(js_name = messageLimit)]
    pub fn message_limit() -> usize {
        MAX_MESSAGE_BYTES
    }

    /// Checks an `addMessage` argument with the core's reader: the error names the field
    /// (`addMessage(message): speaker.id: missing`). The JS half accepts clean messages by
    /// itself and asks here only about the rest, so errors come from one reader (a test over
    /// one corpus of bad messages holds the two checks together).
    #[wasm_bindgen(js_name = checkMessage)]
    pub fn check_message(
        #[wasm_bindgen(unchecked_param_type = "unknown")] message: JsValue,
    ) -> Result<(), JsError> {
        add_to(&mut ContextManager::default(), read_message(message)?)
    }

    /// Reads a snapshot the JS half did not accept by itself (ours, the peer's with unusual
    /// values, or a bad one) with the core's one snapshot reader: `{messages, teamTask}` in the
    /// peer's shapes (`Date` timestamps), or an error naming the field.
    #[wasm_bindgen(
        js_name = readSnapshot,
        unchecked_return_type = "{ messages: ConversationMessage[]; teamTask: string | null }"
    )]
    pub fn read_snapshot(
        #[wasm_bindgen(unchecked_param_type = "unknown")] snapshot: JsValue,
    ) -> Result<JsValue, JsError> {
        let argument = "importSnapshot(snapshot)";
        let text = json_text(&snapshot, argument)?;
        let mut store = Store::new();
        snapshot::import_str(&mut store, &text)
            .map_err(|e| into_error(format!("{argument}: {e}")))?;
        let messages = parse_json(&PeerMessages(store.messages()).to_json())?;
        set_dates(&messages, store.messages())?;
        let out = js_sys::Object::new();
        let set = |key: &str, value: &JsValue| {
            js_sys::Reflect::set(&out, &JsValue::from_str(key), value)
                .map(|_| ())
                .map_err(|_| into_error(format!("cannot set {key} on the result")))
        };
        set("messages", &messages)?;
        let task = store.team_task().map_or(JsValue::NULL, JsValue::from_str);
        set("teamTask", &task)?;
        Ok(out.into())
    }

    /// Assembles an input the caller built or changed (`{contextMessages, currentMessage, …}`)
    /// in `agentType`'s format: the input crosses as JSON, as any caller-made value does.
    #[wasm_bindgen(js_name = assembleInput, unchecked_return_type = "[string, string | undefined, string]")]
    pub fn assemble_input(
        &self,
        #[wasm_bindgen(js_name = agentType)] agent_type: &JsString,
        #[wasm_bindgen(unchecked_param_type = "AssemblerInput")] input: JsValue,
    ) -> Result<JsValue, JsError> {
        let agent_type = string_arg(agent_type, "assemblePrompt(agentType)")?;
        let argument = "assemblePrompt(agentType, input)";
        let given = input_keys(&input, argument)?;
        let Object(input) = from_js(input, argument)?;
        for required in ["contextMessages", "currentMessage"] {
            if given
                .as_ref()
                .is_some_and(|keys| !keys.iter().any(|k| k == required))
            {
                return Err(JsError::new(&format!(
                    "{argument}: {required}: missing (an AssemblerInput has contextMessages and currentMessage, as getContextForAgent gives it)"
                )));
            }
        }
        let prompt = self.mirror().borrow().assemble_prompt(&agent_type, &input);
        assembled(&prompt)
    }
}

impl PromptEngine {
    /// The mirror in use (a short borrow: nothing else runs while it is held).
    fn mirror(&self) -> Mirror {
        Rc::clone(&self.mirror.borrow())
    }
}

/// The keys an `AssemblerInput` may have: the peer's (v3 routing fields included) and ours.
const INPUT_KEYS: &[&str] = &[
    "contextMessages",
    "currentMessage",
    "teamTask",
    "systemInstruction",
    "instructionFileText",
    "maxBytes",
    "parentContext",
    "siblingContext",
    "routeMeta",
    "currentIndex",
    "pinned",
    "omitted",
    "parent",
    "related",
    "extraSections",
    "agentId",
];

/// The own keys of `input` when it is a plain object (else `None`: its reader names what it
/// is), refusing a key no `AssemblerInput` has, so a misspelt one is named rather than read as
/// absent (an empty prompt).
fn input_keys(input: &JsValue, argument: &str) -> Result<Option<Vec<String>>, JsError> {
    if !input.is_object() || js_sys::Array::is_array(input) {
        return Ok(None);
    }
    let keys: Vec<String> = js_sys::Object::keys(input.unchecked_ref::<js_sys::Object>())
        .iter()
        .filter_map(|k| k.as_string())
        .collect();
    if let Some(unknown) = keys.iter().find(|k| !INPUT_KEYS.contains(&k.as_str())) {
        return Err(JsError::new(&format!(
            "{argument}: unknown key, found \"{unknown}\" (an AssemblerInput has {})",
            INPUT_KEYS[..6].join(", ")
        )));
    }
    Ok(Some(keys))
}

/// A system instruction given as a string or, as the peer accepts it, an array of lines
/// (joined by the core's rule, docs/architecture.md §4); `undefined`/`null` mean none.
fn instruction_lines(value: &JsValue, argument: &str) -> Result<Option<String>, JsError> {
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    if let Some(lines) = value.dyn_ref::<js_sys::Array>() {
        let lines = lines
            .iter()
            .enumerate()
            .map(|(i, line)| string_arg(&line.unchecked_into(), &format!("{argument}[{i}]")))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(config::join_instruction_lines(
            lines.iter().map(String::as_str),
        ));
    }
    if value.is_string() {
        return string_arg(value.unchecked_ref(), argument).map(Some);
    }
    Err(JsError::new(&format!(
        "{argument}: expected a string or an array of strings, found {}",
        kind_of(value)
    )))
}

/// What `getContextForAgent` returned, kept as a recipe (module doc).
#[wasm_bindgen]
pub struct HeldContext {
    mirror: Mirror,
    end: usize,
    team_task: Option<String>,
    agent_id: String,
    options: AgentContextOptions,
}

#[wasm_bindgen]
impl HeldContext {
    /// The whole assembler input in the peer's shape (`contextMessages`, `currentMessage`, …),
    /// for a caller who reads it.
    #[wasm_bindgen(unchecked_return_type = "AssemblerInput")]
    pub fn input(&self) -> Result<JsValue, JsError> {
        let input = self
            .mirror
            .borrow()
            .context_as_of(&self.asked())
            .map_err(into_error)?;
        to_js(&input)
    }

    /// `assemblePrompt(agentType, this input)`, built from the held messages: `[prompt,
    /// systemFlag | undefined]` (the explain is made only when read, by [`Self::explain`]).
    #[wasm_bindgen(unchecked_return_type = "[string, string | undefined]")]
    pub fn assemble(
        &self,
        #[wasm_bindgen(js_name = agentType)] agent_type: &JsString,
    ) -> Result<JsValue, JsError> {
        let (text, flag) = prompt_and_flag(&self.prompt(agent_type)?);
        Ok(js_sys::Array::of2(&text, &flag).into())
    }

    /// Whether this context dropped a history line repeating the current message (AI→AI
    /// deduplication), for the logger's debug line; asked only when the logger has `debug`.
    pub fn deduplicated(&self) -> Result<bool, JsError> {
        self.mirror
            .borrow()
            .deduplicated_as_of(&self.asked())
            .map_err(into_error)
    }

    /// The explain of [`Self::assemble`], as JSON text (the same recipe gives the same prompt).
    pub fn explain(
        &self,
        #[wasm_bindgen(js_name = agentType)] agent_type: &JsString,
    ) -> Result<String, JsError> {
        serde_json::to_string(&self.prompt(agent_type)?.explain).map_err(into_error)
    }
}

impl HeldContext {
    fn prompt(&self, agent_type: &JsString) -> Result<agent_chatter::context::Prompt, JsError> {
        let agent_type = string_arg(agent_type, "assemblePrompt(agentType)")?;
        self.mirror
            .borrow()
            .prompt_as_of(&agent_type, &self.asked())
            .map_err(into_error)
    }

    fn asked(&self) -> Asked<'_> {
        Asked {
            end: self.end,
            team_task: self.team_task.as_deref(),
            agent_id: &self.agent_id,
            options: &self.options,
        }
    }
}

/// `[prompt, systemFlag | undefined, explainJson]`: the JS half makes the result object, with
/// `explain` parsed only when read.
fn assembled(prompt: &agent_chatter::context::Prompt) -> Result<JsValue, JsError> {
    let explain = serde_json::to_string(&prompt.explain).map_err(into_error)?;
    let (text, flag) = prompt_and_flag(prompt);
    Ok(js_sys::Array::of3(&text, &flag, &JsValue::from_str(&explain)).into())
}

/// The prompt text and the system flag (`undefined` when none: the peer's `systemFlag?`).
fn prompt_and_flag(prompt: &agent_chatter::context::Prompt) -> (JsValue, JsValue) {
    let flag = prompt
        .system_flag
        .as_deref()
        .map_or(JsValue::UNDEFINED, JsValue::from_str);
    (JsValue::from_str(&prompt.prompt), flag)
}

/// Reads an `addMessage` argument (or a stored message) with the core's reader: one place for
/// the shape (its getters run here, before anything is borrowed).
fn read_message(message: JsValue) -> Result<NewPeerMessage, JsError> {
    Ok(from_js::<Object<NewPeerMessage>>(message, "addMessage(message)")?.0)
}

/// Adds a read message to `manager`, with the core's checks (speaker id, size).
fn add_to(manager: &mut ContextManager, message: NewPeerMessage) -> Result<(), JsError> {
    let (speaker, content, routing) = message.into_core();
    manager
        .add_message(speaker, content, routing, Millis(0))
        .map(|_| ())
        .map_err(|e| into_error(format!("addMessage(message): {e}")))
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
