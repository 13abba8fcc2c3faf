//! Crossing the JS boundary: one serializer, one deserializer entry point, one error conversion.
//!
//! Every exported function goes through here, so all outputs have the same shape rules and
//! every failure reaches JS as a plain `Error` carrying the core's message.

use serde::de::DeserializeOwned;
use serde::Serialize;
use wasm_bindgen::prelude::*;

/// The one serializer: JSON-compatible output, so maps become plain objects, `None` becomes
/// `null` (never `undefined`) and 64-bit integers become numbers, exactly as `JSON.parse` of the
/// core's serde_json output would give.
const SERIALIZER: serde_wasm_bindgen::Serializer =
    serde_wasm_bindgen::Serializer::json_compatible();

/// Converts a Rust value to its JS form with [`SERIALIZER`].
pub fn to_js<T: Serialize + ?Sized>(value: &T) -> Result<JsValue, JsError> {
    value.serialize(&SERIALIZER).map_err(into_error)
}

/// Converts a JS value to `T`, naming the argument and the failing path in the error
/// (`addMessage(message): speaker.type: unknown variant ...`), so a caller can fix the input.
pub fn from_js<T: DeserializeOwned>(value: JsValue, argument: &str) -> Result<T, JsError> {
    let de = serde_wasm_bindgen::Deserializer::from(value);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        // serde-wasm-bindgen's errors are JS `Error`s whose `Display` adds an `Error: ` prefix.
        let text = e.into_inner().to_string();
        let inner = text.strip_prefix("Error: ").unwrap_or(&text);
        if path == "." {
            JsError::new(&format!("{argument}: {inner}"))
        } else {
            JsError::new(&format!("{argument}: {path}: {inner}"))
        }
    })
}

/// The one error conversion: JS receives an `Error` whose message is the error's `Display`.
pub fn into_error(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}
