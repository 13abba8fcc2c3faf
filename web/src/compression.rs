//! Raw deflate (RFC 1951) through the browser's own `CompressionStream` and
//! `DecompressionStream`, for share links: the page carries no deflate code of its own (it
//! weighed ~15 KB of the gzipped wasm, docs/architecture.md §18). Links made before, by
//! `miniz_oxide`, are raw deflate too and open the same.

use js_sys::{Array, Object, Promise, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    ReadableStreamDefaultReader, ReadableStreamReadResult, ReadableWritablePair,
    WritableStreamDefaultWriter,
};

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

/// At most this many bytes go into a stream at a time. Chromium inflates each chunk it is
/// given whole, and queues all of its output, before a reader sees any of it; deflate
/// expands at most ~1032:1, so a 1 KiB chunk of a deflate bomb is ~1 MiB held, not the
/// gigabyte one large chunk could be.
const CHUNK_BYTES: usize = 1024;

/// `bytes` through `stream` (a `{readable, writable}` pair), fed [`CHUNK_BYTES`] at a time as
/// it asks for them: everything it yields, or `Ok(None)` as soon as that passes `limit`
/// bytes. Then reading stops there and the stream is cancelled, so what it still held is
/// released: no more than `limit` bytes and one chunk's output were ever held.
async fn through(stream: &Object, bytes: &[u8], limit: usize) -> Result<Option<Vec<u8>>, JsValue> {
    let pair: &ReadableWritablePair = stream.unchecked_ref();
    let writer = pair.get_writable().get_writer()?;
    let reader: ReadableStreamDefaultReader = pair.get_readable().get_reader().unchecked_into();
    let mut chunks = bytes.chunks(CHUNK_BYTES);
    let mut feed = |writer: &WritableStreamDefaultWriter| {
        chunks
            .next()
            .map(|chunk| writer.write_with_chunk(&Uint8Array::from(chunk)))
    };
    // The write (or the close) under way: the stream takes it once the reader asks for more,
    // so the read and the write are awaited together (whichever settles first). Every promise
    // made here is awaited in that race, so none rejects unhandled when the stream is
    // cancelled or the data is damaged.
    let mut writing = feed(&writer);
    let mut closing = writing.is_none().then(|| writer.close());
    let mut reading: Option<Promise> = None;
    // What it yielded so far, kept as the browser gave it until the end.
    let kept = Array::new();
    let mut total = 0;
    loop {
        let read = reading.take().unwrap_or_else(|| reader.read());
        let settled = match writing.as_ref().or(closing.as_ref()) {
            Some(write) => JsFuture::from(Promise::race(&Array::of2(&read, write))).await?,
            None => JsFuture::from(read.clone()).await?,
        };
        if settled.is_undefined() {
            // The write (or the close) was taken: the next chunk, or the close, goes in.
            reading = Some(read);
            if writing.take().is_some() {
                writing = feed(&writer);
                if writing.is_none() {
                    closing = Some(writer.close());
                }
            } else {
                closing = None;
            }
            continue;
        }
        let chunk: ReadableStreamReadResult = settled.unchecked_into();
        if chunk.get_done().unwrap_or(true) {
            // Copied into the page's memory once whole, at its size: a refused stream never
            // grows it (the wasm's memory never shrinks).
            let mut out = vec![0; total];
            let mut at = 0;
            for part in kept.iter() {
                let part: Uint8Array = part.unchecked_into();
                let end = at + part.length() as usize;
                part.copy_to(&mut out[at..end]);
                at = end;
            }
            return Ok(Some(out));
        }
        // A Uint8Array (a view, not `Uint8Array::new`, which would copy it).
        let part = chunk.get_value();
        total += part.unchecked_ref::<Uint8Array>().length() as usize;
        if total > limit {
            let _ = reader.cancel();
            return Ok(None);
        }
        kept.push(&part);
    }
}

/// `bytes` deflated (raw deflate, as `miniz_oxide::deflate::compress_to_vec` wrote them).
pub async fn deflate(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let failed = |_| "this browser could not compress the link (no CompressionStream)".to_string();
    let stream = CompressionStream::new("deflate-raw").map_err(failed)?;
    let out = through(stream.unchecked_ref(), bytes, usize::MAX)
        .await
        .map_err(failed)?;
    Ok(out.unwrap_or_default())
}

/// `bytes` inflated, refused past `limit` bytes (reading stops there: at most `limit` bytes
/// and one chunk's output are held).
pub async fn inflate(bytes: &[u8], limit: usize) -> Result<Vec<u8>, InflateError> {
    let stream = DecompressionStream::new("deflate-raw").map_err(|_| InflateError::Unsupported)?;
    match through(stream.unchecked_ref(), bytes, limit).await {
        Ok(Some(out)) => Ok(out),
        Ok(None) => Err(InflateError::TooLarge),
        Err(_) => Err(InflateError::Damaged),
    }
}
