//! The page `serve` hands out (docs/architecture.md §14, §14e): by default the one built into
//! the binary at compile time (`web/dist`, embedded: no path of the machine it was built on is
//! ever read), or a folder given with `--dist` for development. Both are served with the same
//! paths, `Content-Type`s and Content-Security-Policy, compressed where the browser accepts it:
//! the embedded page from its files compressed at build time (`build.rs`: brotli and gzip,
//! chosen by `Accept-Encoding`), a folder on the fly.

use std::path::{Component, Path, PathBuf};

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, MethodRouter};
use tower::ServiceExt;
use tower_http::compression::CompressionLayer;
use tower_http::services::{ServeDir, ServeFile};

use crate::guard::REJECTIONS;

#[cfg(page_missing)]
compile_error!(
    "the page is not built (web/dist/index.html is missing): run `cargo xtask page` (or `cargo xtask run`, `cargo xtask install`), then build again"
);

/// The page built into this binary.
#[cfg(not(page_missing))]
#[derive(rust_embed::Embed)]
#[folder = "../web/dist"]
struct BuiltPage;

// `PRECOMPRESSED`: the embedded page's files compressed by build.rs.
include!(concat!(env!("OUT_DIR"), "/precompressed.rs"));

/// Where the page's files come from.
#[derive(Clone)]
enum Source {
    /// Built into the binary.
    Embedded,
    /// A folder (`--dist`), made absolute.
    Dir(PathBuf),
}

/// The page to serve, and its index.html (for the Content-Security-Policy it needs).
#[derive(Clone)]
pub struct Page {
    source: Source,
    index: String,
}

impl Page {
    /// The page built into this binary.
    pub fn embedded() -> Result<Page, String> {
        let index = embedded_file("index.html")
            .ok_or("this binary holds no page (index.html): build it with `cargo xtask install`")?;
        let index = String::from_utf8(index.data.into_owned())
            .map_err(|_| "the page built into this binary is not UTF-8 text".to_string())?;
        Ok(Page {
            source: Source::Embedded,
            index,
        })
    }

    /// The page in `dir`, which must hold an index.html that is a plain file.
    pub fn open(dir: &Path) -> Result<Page, String> {
        let missing = || {
            format!(
                "{}: no built page here (index.html missing): run `cargo xtask page`, or `trunk build --release` in web/",
                dir.display()
            )
        };
        let dir = dir.canonicalize().map_err(|_| missing())?;
        let index = dir.join("index.html");
        match std::fs::symlink_metadata(&index) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(format!(
                    "{}: a symbolic link; the page's files must be plain files",
                    index.display()
                ))
            }
            Ok(meta) if meta.is_file() => {}
            _ => return Err(missing()),
        }
        let index = crate::files::read_text(&index, "page")?;
        Ok(Page {
            source: Source::Dir(dir),
            index,
        })
    }

    /// The policy for the page on `port`: nothing but its own files, WebAssembly compiled
    /// from them (`'wasm-unsafe-eval'`), its inline scripts and styles by their SHA-256 (Trunk
    /// writes the loader as an inline module script) and its own WebSocket.
    pub(crate) fn content_security_policy(&self, port: u16) -> String {
        let scripts = inline_hashes(&self.index, "script");
        let styles = inline_hashes(&self.index, "style");
        format!(
            "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'{scripts}; \
             style-src 'self'{styles}; img-src 'self' data:; font-src 'self'; \
             connect-src 'self' ws://127.0.0.1:{port} ws://localhost:{port}; \
             base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        )
    }

    /// The service answering a path with the page's file there, or its index.html (the page
    /// reads its state from the fragment), compressed (gzip, brotli) when the browser accepts it.
    pub(crate) fn files(&self) -> MethodRouter {
        let files: MethodRouter = match &self.source {
            Source::Embedded => get(embedded_response),
            Source::Dir(dir) => {
                let dir = dir.clone();
                let files = ServeDir::new(&dir).fallback(ServeFile::new(dir.join("index.html")));
                get(move |req: Request<Body>| from_dir(dir.clone(), files.clone(), req))
            }
        };
        files.layer(CompressionLayer::new())
    }
}

/// The embedded file at `path` (no leading `/`).
fn embedded_file(path: &str) -> Option<rust_embed::EmbeddedFile> {
    #[cfg(not(page_missing))]
    return BuiltPage::get(path);
    #[cfg(page_missing)]
    return {
        let _ = path;
        None
    };
}

/// A request for the embedded page: its file, or its index.html for any other path; as
/// compressed at build time when the browser accepts brotli or gzip (always saying it varies
/// with `Accept-Encoding`, so no cache hands one client's form to another).
async fn embedded_response(req: Request<Body>) -> Response {
    let path = percent_decoded(req.uri().path()).unwrap_or_default();
    let path = path.trim_start_matches('/');
    let (path, file) = match Some(path).filter(|p| !p.is_empty()).and_then(embedded_file) {
        Some(file) => (path, file),
        None => match embedded_file("index.html") {
            Some(file) => ("index.html", file),
            None => return (StatusCode::NOT_FOUND, "not found\n").into_response(),
        },
    };
    let content_type = (header::CONTENT_TYPE, file.metadata.mimetype().to_string());
    let accepted = req
        .headers()
        .get(header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let compressed = PRECOMPRESSED.iter().find(|(p, _, _)| *p == path);
    let vary = (header::VARY, "accept-encoding".to_string());
    match (compressed, preferred_encoding(accepted)) {
        (Some((_, br, _)), Some(Encoding::Brotli)) => {
            let encoding = (header::CONTENT_ENCODING, "br".to_string());
            ([content_type, encoding, vary], Body::from(*br)).into_response()
        }
        (Some((_, _, gz)), Some(Encoding::Gzip)) => {
            let encoding = (header::CONTENT_ENCODING, "gzip".to_string());
            ([content_type, encoding, vary], Body::from(*gz)).into_response()
        }
        (Some(_), None) => {
            ([content_type, vary], Body::from(file.data.into_owned())).into_response()
        }
        (None, _) => ([content_type], Body::from(file.data.into_owned())).into_response(),
    }
}

/// A compressed form of the page's files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Encoding {
    Brotli,
    Gzip,
}

/// The encoding to send for an `Accept-Encoding` value: brotli (the smaller) when accepted,
/// else gzip, else none. A coding is accepted when named (or matched by `*`) with a weight
/// above zero; weights otherwise order nothing, as both are better than the identity.
fn preferred_encoding(accepted: &str) -> Option<Encoding> {
    let weights: Vec<(String, bool)> = accepted
        .split(',')
        .filter_map(|item| {
            let mut parts = item.split(';');
            let coding = parts.next()?.trim().to_ascii_lowercase();
            let refused = parts.any(|p| {
                let p = p.trim();
                let q = p.strip_prefix("q=").or_else(|| p.strip_prefix("Q="));
                q.is_some_and(|q| q.trim().parse::<f32>().is_ok_and(|q| q <= 0.0))
            });
            Some((coding, !refused))
        })
        .collect();
    let accepts = |name: &str| match weights.iter().find(|(c, _)| c == name) {
        Some((_, ok)) => *ok,
        None => weights.iter().any(|(c, ok)| c == "*" && *ok),
    };
    if accepts("br") {
        Some(Encoding::Brotli)
    } else if accepts("gzip") {
        Some(Encoding::Gzip)
    } else {
        None
    }
}

/// A request for a page folder: refused (404) when its path reaches through a symbolic link
/// there (it could lead anywhere, `dist/x → /etc/passwd`), else the folder's file.
async fn from_dir(
    dir: PathBuf,
    files: tower_http::services::ServeDir<tower_http::services::ServeFile>,
    req: Request<Body>,
) -> Response {
    let path = req.uri().path().to_string();
    if through_a_link(&dir, &path) {
        REJECTIONS.note("symbolic link in the page's folder", || {
            format!(
                "refused GET {path}: a symbolic link in the page's folder {}",
                dir.display()
            )
        });
        return (StatusCode::NOT_FOUND, "not found\n").into_response();
    }
    match files.oneshot(req).await {
        Ok(response) => response.map(Body::new),
        Err(never) => match never {},
    }
}

/// Adds the Content-Security-Policy and friends to every response.
pub(crate) async fn headers(csp: HeaderValue, req: Request<Body>, next: Next) -> Response {
    let mut response = next.run(req).await;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_SECURITY_POLICY, csp);
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

/// Whether the request path, resolved in `dir` as the file server does, meets a symbolic
/// link (a directory's index.html included).
fn through_a_link(dir: &Path, path: &str) -> bool {
    let Some(decoded) = percent_decoded(path) else {
        return false;
    };
    let mut at = dir.to_path_buf();
    for part in Path::new(decoded.trim_start_matches('/')).components() {
        let Component::Normal(part) = part else {
            // `..` and the like: the file server refuses them itself.
            continue;
        };
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() => return true,
            Ok(meta) if meta.is_dir() => {}
            _ => return false,
        }
    }
    std::fs::symlink_metadata(at.join("index.html")).is_ok_and(|m| m.file_type().is_symlink())
}

/// `%XX` decoded, as the file server reads a path; `None` when that is not UTF-8.
fn percent_decoded(path: &str) -> Option<String> {
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                out.push((hex(h)? * 16 + hex(l)?) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// ` 'sha256-…'` for each inline `<tag>` element (one without `src`) of `html`.
fn inline_hashes(html: &str, tag: &str) -> String {
    use sha2::{Digest, Sha256};
    let open = format!("<{tag}");
    let close = format!("</{tag}>");
    let mut hashes = String::new();
    let mut rest = html;
    while let Some(at) = rest.find(&open) {
        rest = &rest[at + open.len()..];
        let Some(end) = rest.find('>') else { break };
        let attributes = &rest[..end];
        // `<scripts…>` is not a `<script>`.
        if !(attributes.is_empty() || attributes.starts_with(char::is_whitespace)) {
            continue;
        }
        rest = &rest[end + 1..];
        let Some(stop) = rest.find(&close) else { break };
        if !attributes.contains("src=") {
            let digest = Sha256::digest(&rest.as_bytes()[..stop]);
            hashes.push_str(&format!(" 'sha256-{}'", base64(&digest)));
        }
        rest = &rest[stop..];
    }
    hashes
}

/// Standard base64 with padding (the CSP hash source form).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{preferred_encoding, Encoding};

    #[test]
    fn brotli_is_chosen_over_gzip_when_both_are_accepted() {
        let chromium = "gzip, deflate, br, zstd";
        assert_eq!(preferred_encoding(chromium), Some(Encoding::Brotli));
        assert_eq!(preferred_encoding("gzip"), Some(Encoding::Gzip));
        assert_eq!(preferred_encoding("GZIP;q=0.5"), Some(Encoding::Gzip));
        assert_eq!(preferred_encoding("*"), Some(Encoding::Brotli));
    }

    #[test]
    fn a_coding_refused_or_not_named_is_never_sent() {
        assert_eq!(preferred_encoding(""), None);
        assert_eq!(preferred_encoding("identity"), None);
        assert_eq!(preferred_encoding("br;q=0, gzip"), Some(Encoding::Gzip));
        assert_eq!(preferred_encoding("br;q=0.0, gzip;q=0"), None);
        assert_eq!(preferred_encoding("*, br;q=0"), Some(Encoding::Gzip));
        assert_eq!(preferred_encoding("*;q=0"), None);
    }
}
