//! Text handed to wasm by the JS half with `TextEncoder.encodeInto`, straight into a buffer in
//! wasm memory: one native pass over the string, no intermediate `Uint8Array` and no second
//! copy (`TextEncoder.encode` plus wasm-bindgen's copy took 1.2 ms for 1 MiB on Node 20;
//! `encodeInto` takes 0.1 ms).
//!
//! The JS half asks [`text_inbox`] for room (a pointer into memory), encodes into a
//! `Uint8Array` over `wasmMemory().buffer` at that pointer, and passes the byte count it was
//! told was written to an export that reads the text with [`with_text`].

use std::cell::RefCell;

use wasm_bindgen::prelude::*;

thread_local! {
    /// The buffer the JS half encodes into. Kept initialised to its full length (zeros when
    /// grown) so reading what JS wrote needs no `unsafe`.
    static INBOX: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// A pointer to at least `capacity` bytes the JS half may write its UTF-8 into. May grow wasm
/// memory, so JS makes its `Uint8Array` view after this call.
#[wasm_bindgen(js_name = textInbox)]
pub fn text_inbox(capacity: usize) -> *mut u8 {
    INBOX.with_borrow_mut(|inbox| {
        if inbox.len() < capacity {
            // Room to spare, so a run of growing texts grows memory in few, large steps.
            inbox.resize(capacity.max(inbox.len() * 2).max(4096), 0);
        }
        inbox.as_mut_ptr()
    })
}

/// The module's `WebAssembly.Memory`, for the JS half's views of the inbox.
#[wasm_bindgen(js_name = wasmMemory, unchecked_return_type = "{ readonly buffer: ArrayBuffer }")]
pub fn wasm_memory() -> JsValue {
    wasm_bindgen::memory()
}

/// Calls `f` with the first `len` bytes of the inbox as text. `argument` names the caller's
/// argument in the error (only a misuse of the inbox can produce invalid UTF-8:
/// `encodeInto` writes lone surrogates as U+FFFD).
pub fn with_text<R>(len: usize, argument: &str, f: impl FnOnce(&str) -> R) -> Result<R, JsError> {
    INBOX.with_borrow(|inbox| {
        let bytes = inbox
            .get(..len)
            .ok_or_else(|| JsError::new(&format!("{argument}: the text was not handed in")))?;
        let text = std::str::from_utf8(bytes)
            .map_err(|e| JsError::new(&format!("{argument}: not UTF-8: {e}")))?;
        Ok(f(text))
    })
}

/// Puts `text` in the inbox as the JS half's `encodeInto` does; returns its length in bytes.
/// For Rust callers (the binding's tests).
pub fn hand_in(text: &str) -> usize {
    INBOX.with_borrow_mut(|inbox| {
        if inbox.len() < text.len() {
            inbox.resize(text.len(), 0);
        }
        if let Some(room) = inbox.get_mut(..text.len()) {
            room.copy_from_slice(text.as_bytes());
        }
    });
    text.len()
}
