//! Raw deflate (RFC 1951) through the browser's own `CompressionStream` and
//! `DecompressionStream`, for share links: the page carries no deflate code of its own (it
//! weighed ~15 KB of the gzipped wasm, docs/architecture.md §18). Links made before, by
//! `miniz_oxide`, are raw deflate too and open the same.

use js_sys::{Array, Object, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{ReadableStream, ReadableStreamDefaultReader, ReadableStreamReadResult};

/// Why inflating failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InflateError {
    /// The bytes are not raw deflate (or are cut short).
    Damaged,
    /// They inflate past the limit asked for (a deflate bomb, or not ours).
    TooLarge,
    /// This browser has no `DecompressionStream` (before Chrome 80, Firefox 113, Safari 16.4).
    Unsupported,
}

#[wasm_bindgen]
extern "C" {
    /// `CompressionStream` (web-sys has it only behind `web_sys_unstable_apis`).
    type CompressionStream;
    #[wasm_bindgen(constructor, catch)]
    fn new(format: &str) -> Result<CompressionStream, JsValue>;

    /// `DecompressionStream`.
    type DecompressionStream;
    #[wasm_bindgen(constructor, catch)]
    fn new(format: &str) -> Result<DecompressionStream, JsValue>;
}

/// `bytes` as a stream piped through `transform` (a `{readable, writable}` pair).
fn piped(bytes: &[u8], transform: &Object) -> Result<ReadableStream, JsValue> {
    let blob = web_sys::Blob::new_with_u8_array_sequence(&Array::of1(&Uint8Array::from(bytes)))?;
    Ok(blob.stream().pipe_through(transform.unchecked_ref()))
}

/// Everything `stream` yields, up to `limit` bytes (`Ok(None)` beyond: reading stops there).
async fn read_all(stream: ReadableStream, limit: usize) -> Result<Option<Vec<u8>>, JsValue> {
    let reader: ReadableStreamDefaultReader = stream.get_reader().unchecked_into();
    let mut out = Vec::new();
    loop {
        let chunk: ReadableStreamReadResult = JsFuture::from(reader.read()).await?.unchecked_into();
        if chunk.get_done().unwrap_or(true) {
            return Ok(Some(out));
        }
        let chunk = Uint8Array::new(&chunk.get_value());
        let start = out.len();
        let end = start + chunk.length() as usize;
        if end > limit {
            let _ = reader.cancel();
            return Ok(None);
        }
        out.resize(end, 0);
        chunk.copy_to(&mut out[start..]);
    }
}

/// `bytes` deflated (raw deflate, as `miniz_oxide::deflate::compress_to_vec` wrote them).
pub async fn deflate(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let failed = |_| "this browser could not compress the link (no CompressionStream)".to_string();
    let stream = CompressionStream::new("deflate-raw").map_err(failed)?;
    let deflated = piped(bytes, stream.unchecked_ref()).map_err(failed)?;
    let out = read_all(deflated, usize::MAX).await.map_err(failed)?;
    Ok(out.unwrap_or_default())
}

/// `bytes` inflated, refused past `limit` bytes.
pub async fn inflate(bytes: &[u8], limit: usize) -> Result<Vec<u8>, InflateError> {
    let stream = DecompressionStream::new("deflate-raw").map_err(|_| InflateError::Unsupported)?;
    let inflated = piped(bytes, stream.unchecked_ref()).map_err(|_| InflateError::Unsupported)?;
    match read_all(inflated, limit).await {
        Ok(Some(out)) => Ok(out),
        Ok(None) => Err(InflateError::TooLarge),
        Err(_) => Err(InflateError::Damaged),
    }
}
