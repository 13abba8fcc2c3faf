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
    assert!(
        message.starts_with("thing: inner.id: invalid type"),
        "{message}"
    );
}

/// The `message` of a JS `Error`.
fn js_error_message(value: JsValue) -> String {
    js_sys::Error::from(value).message().into()
}

#[wasm_bindgen_test]
fn parse_message_parts_cross_as_plain_arrays_with_nulls() {
    let value = agent_chatter_wasm::markers::parse_message_parts("[DONE] [DROP: ALL]".as_bytes())
        .expect("parts");
    let json = js_sys::JSON::stringify(&value)
        .expect("plain array")
        .as_string()
        .expect("string");
    // The clean content `""` is the input trimmed to nothing: a view `[start, end]`.
    assert_eq!(json, r#"[[0,0],[],[],null,null,["ALL"],true]"#);
}
