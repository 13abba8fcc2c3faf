//! `parseMessage`, `stripAll`, `stripRouting` (DESIGN §5, §12).

use js_sys::JsString;
use wasm_bindgen::prelude::*;

use crate::js::{string_arg, to_js};
use crate::peer_shapes::ParseResult;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(typescript_type = "ParseResult")]
    pub type JsParseResult;
}

/// Parses every marker of `text`: the peer's `MessageRouter.parseMessage` result plus `isDone`.
#[wasm_bindgen(js_name = parseMessage)]
pub fn parse_message(text: &JsString) -> Result<JsParseResult, JsError> {
    let text = string_arg(text, "parseMessage(text)")?;
    let result = ParseResult::of(&text);
    let value = to_js(&result)?;
    js_sys::Reflect::set(
        &value,
        &JsValue::from_str("cleanContent"),
        &JsValue::from_str(&result.clean_content),
    )
    .map_err(|_| JsError::new("parseMessage: cannot set cleanContent on the result"))?;
    Ok(value.unchecked_into())
}

/// The agent view of a message: removes FROM, TEAM_TASK, NEXT, DONE and DROP markers.
#[wasm_bindgen(js_name = stripAll)]
pub fn strip_all(text: &JsString) -> Result<String, JsError> {
    Ok(agent_chatter::markers::strip_all(&string_arg(
        text,
        "stripAll(text)",
    )?))
}

/// The stored-content view: removes NEXT, DONE and DROP; keeps FROM and TEAM_TASK.
#[wasm_bindgen(js_name = stripRouting)]
pub fn strip_routing(text: &JsString) -> Result<String, JsError> {
    Ok(agent_chatter::markers::strip_routing(&string_arg(
        text,
        "stripRouting(text)",
    )?))
}
