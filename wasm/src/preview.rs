//! `preview(scenario, memberId)` and the `Scenario` class (docs/architecture.md §11b, §12): the
//! same scenario file gives the same bytes here as in the CLI and the page.

use agent_chatter::scenario::{self, PreparedScenario};
use js_sys::JsString;
use wasm_bindgen::prelude::*;

use crate::js::{into_error, json_text, prompt_to_js, string_arg};

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(typescript_type = "ScenarioInput | string")]
    pub type JsScenarioInput;
    #[wasm_bindgen(typescript_type = "Preview")]
    pub type JsPreview;
}

/// The prompt `memberId` (id or name) receives with the scenario's last message as the
/// current one: `{prompt, systemFlag, explain}` (`systemFlag` is `null` when there is none).
/// The scenario is an object or JSON text.
#[wasm_bindgen]
pub fn preview(
    scenario: JsScenarioInput,
    #[wasm_bindgen(js_name = memberId)] member_id: &JsString,
) -> Result<JsPreview, JsError> {
    let member_id = string_arg(member_id, "preview(scenario, memberId): memberId")?;
    let text = json_text(&scenario.into(), "preview(scenario)")?;
    let scenario = scenario::load_scenario(&text)
        .map_err(|e| into_error(format!("preview(scenario): {e}")))?;
    let prompt = scenario::preview(&scenario, &member_id)
        .map_err(|e| into_error(format!("preview: {e}")))?;
    Ok(prompt_to_js(&prompt)?.unchecked_into())
}

/// A scenario loaded and stored once, for previewing many members or many times: each
/// `preview` costs O(window + bytes emitted), not O(history).
#[wasm_bindgen(js_name = Scenario)]
pub struct JsScenario {
    prepared: PreparedScenario,
}

#[wasm_bindgen(js_class = Scenario)]
impl JsScenario {
    /// Loads and checks a scenario (object or JSON text) and stores its history.
    #[wasm_bindgen(constructor)]
    pub fn new(scenario: JsScenarioInput) -> Result<JsScenario, JsError> {
        let text = json_text(&scenario.into(), "new Scenario(scenario)")?;
        let scenario = scenario::load_scenario(&text)
            .map_err(|e| into_error(format!("new Scenario(scenario): {e}")))?;
        let prepared = PreparedScenario::new(scenario)
            .map_err(|e| into_error(format!("new Scenario(scenario): {e}")))?;
        Ok(JsScenario { prepared })
    }

    /// Exactly `preview(scenario, memberId)`.
    pub fn preview(
        &self,
        #[wasm_bindgen(js_name = memberId)] member_id: &JsString,
    ) -> Result<JsPreview, JsError> {
        let member_id = string_arg(member_id, "Scenario.preview(memberId)")?;
        let prompt = self
            .prepared
            .preview(&member_id)
            .map_err(|e| into_error(format!("preview: {e}")))?;
        Ok(prompt_to_js(&prompt)?.unchecked_into())
    }

    /// Number of history messages.
    #[wasm_bindgen(getter, js_name = messageCount)]
    pub fn message_count(&self) -> usize {
        self.prepared.store().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prepared_scenario_previews_exactly_like_preview() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/fixtures/scenarios/demo.json"
        );
        let text = std::fs::read_to_string(path).expect("fixture");
        let scenario = scenario::load_scenario(&text).expect("valid scenario");
        let prepared = PreparedScenario::new(scenario.clone()).expect("stores");
        for member in &scenario.team.members {
            let expected = scenario::preview(&scenario, &member.id);
            assert_eq!(prepared.preview(&member.id), expected, "{}", member.id);
        }
    }
}
