//! Text handed to wasm by the JS half with `TextEncoder.encodeInto`, straight into a buffer in
//! wasm memory: one native pass over the string, no intermediate `Uint8Array` and no second
//! copy (`TextEncoder.encode` plus wasm-bindgen's copy took 1.2 ms for 1 MiB on Node 20;
//! `encodeInto` takes 0.1 ms).
//!
//! The JS half asks [`text_inbox`] for room (a pointer into memory), encodes into a
//! `Uint8Array` over `wasmMemory().buffer` at that pointer, and passes the byte count it was
//! told was written to an export that reads the text with [`with_text`].
//!
//! Text handed back goes the cheaper of two ways for its content ([`hand_back`]): ASCII as a
//! wasm-bindgen string (UTF-8, which Node decodes fastest for ASCII), anything else as UTF-16
//! in the outbox, which JS decodes with a `utf-16le` `TextDecoder` (for CJK text ~6x faster
//! than decoding its UTF-8 on Node 20; figures in docs/measurements.md).

use std::cell::RefCell;

use wasm_bindgen::prelude::*;

thread_local! {
    /// The buffer the JS half encodes into. Kept initialised to its full length (zeros when
    /// grown) so reading what JS wrote needs no `unsafe`.
    static INBOX: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// The last text handed back as UTF-16 ([`hand_back`]); empty when it crossed otherwise.
    static OUTBOX: RefCell<Vec<u16>> = const { RefCell::new(Vec::new()) };
}

/// `Some(text)` when `text` is ASCII (it crosses as a string), else `None` with `text` put in
/// the outbox as UTF-16, for JS to read with [`outbox`] and [`outbox_units`]. A non-ASCII text
/// is never empty, so `outboxUnits() > 0` tells JS which way the last text went.
pub fn hand_back(text: String) -> Option<String> {
    OUTBOX.with_borrow_mut(|outbox| {
        outbox.clear();
        if text.is_ascii() {
            Some(text)
        } else {
            push_utf16(outbox, &text);
            None
        }
    })
}

/// Appends `text` as UTF-16 to `out`: a byte loop (std's `encode_utf16` iterator, at the
/// package's opt-level "z", took ~8 ns a character: most of a 2 KB CJK strip).
fn push_utf16(out: &mut Vec<u16>, text: &str) {
    let bytes = text.as_bytes();
    out.reserve(bytes.len());
    let at = |i: usize| u32::from(bytes.get(i).copied().unwrap_or(0) & 0x3F);
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let lead = u32::from(b);
        if b < 0x80 {
            out.push(u16::from(b));
            i += 1;
        } else if b < 0xE0 {
            out.push((((lead & 0x1F) << 6) | at(i + 1)) as u16);
            i += 2;
        } else if b < 0xF0 {
            out.push((((lead & 0x0F) << 12) | (at(i + 1) << 6) | at(i + 2)) as u16);
            i += 3;
        } else {
            let c = (((lead & 0x07) << 18) | (at(i + 1) << 12) | (at(i + 2) << 6) | at(i + 3))
                .wrapping_sub(0x1_0000);
            out.push((0xD800 | (c >> 10)) as u16);
            out.push((0xDC00 | (c & 0x3FF)) as u16);
            i += 4;
        }
    }
}

/// Empties the outbox: the last call handed back nothing through it.
pub fn clear_outbox() {
    OUTBOX.with_borrow_mut(Vec::clear);
}

/// Where the outbox's UTF-16 units start in wasm memory (see [`hand_back`]).
#[wasm_bindgen]
pub fn outbox() -> *const u16 {
    OUTBOX.with_borrow(|outbox| outbox.as_ptr())
}

/// How many UTF-16 units the outbox holds: 0 when the last text did not go through it.
#[wasm_bindgen(js_name = outboxUnits)]
pub fn outbox_units() -> usize {
    OUTBOX.with_borrow(Vec::len)
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
        // The SIMD validator first; std's only to word the (never expected) error.
        let text = match simdutf8::basic::from_utf8(bytes) {
            Ok(text) => text,
            Err(_) => std::str::from_utf8(bytes)
                .map_err(|e| JsError::new(&format!("{argument}: not UTF-8: {e}")))?,
        };
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

#[cfg(test)]
mod tests {
    use super::push_utf16;

    #[test]
    fn utf16_equals_std_encoding_for_every_width() {
        for text in [
            "",
            "abc",
            "é ü",
            "日本語。、",
            "レビュー",
            "👋🏽 — “x” 👨‍👩‍👧",
            "\u{7F}\u{80}\u{7FF}\u{800}\u{FFFF}\u{10000}\u{10FFFF}",
        ] {
            let mut out = Vec::new();
            push_utf16(&mut out, text);
            assert_eq!(out, text.encode_utf16().collect::<Vec<_>>(), "{text}");
        }
    }
}
