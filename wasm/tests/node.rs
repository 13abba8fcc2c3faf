//! The binding on wasm32, in Node (`cargo test -p agent-chatter-wasm --target
//! wasm32-unknown-unknown`, runner `wasm-bindgen-test-runner`): the exports work through the real
//! JS boundary, errors arrive as JS `Error`s.
#![cfg(target_arch = "wasm32")]

use wasm_bindgen::JsValue;
use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen_test]
fn version_is_the_crate_version() {
    assert_eq!(agent_chatter_wasm::version(), env!("CARGO_PKG_VERSION"));
}

#[wasm_bindgen_test]
fn from_js_names_the_argument_and_the_failing_path() {
    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct Outer {
        inner: Inner,
    }
    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct Inner {
        id: String,
    }
    let value = js_sys::JSON::parse(r#"{"inner": {"id": 7}}"#).expect("valid JSON");
    let err = agent_chatter_wasm::js::from_js::<Outer>(value, "thing").expect_err("wrong type");
    let message = js_error_message(err.into());
    assert_eq!(message, "thing: inner.id: expected a string, found 7");
}

/// The `message` of a JS `Error`.
fn js_error_message(value: JsValue) -> String {
    js_sys::Error::from(value).message().into()
}

#[wasm_bindgen_test]
fn parse_message_crosses_packed_in_one_string() {
    use agent_chatter_wasm::inbox::hand_in;
    use agent_chatter_wasm::markers::{parse_message_packed, view_start, view_tail};
    // ASCII results cross as a string (non-ASCII ones go back through the outbox).
    let packed = |text: &str| {
        parse_message_packed(hand_in(text))
            .expect("packed")
            .expect("an ASCII result crosses as a string")
    };
    // Flags, names, intents, from, task, drops; the clean content "" is a view of the input.
    assert_eq!(packed("[DONE] [DROP: ALL]"), "vd\n\n\n\n\nALL\n");
    assert_eq!(
        packed("[FROM: k] hi [NEXT: max !P1, sarah]"),
        "vf\nmax,sarah\n12\nk\n\n\n"
    );
    // `[FROM: k] hi` is the start of the input: its position, in UTF-16 units.
    assert_eq!((view_start(), view_tail()), (0, 23));
    // `[TEAM_TASK:]` clears the task: present, empty.
    assert_eq!(packed("[TEAM_TASK:] x [DONE]"), "vtd\n\n\n\n\n\n");
    // Not a piece of the input: the clean content follows the last line.
    assert_eq!(packed("a [NEXT: b] c"), "\nb\n2\n\n\n\na c");
}
