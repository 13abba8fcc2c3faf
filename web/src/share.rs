//! Shared links (docs/architecture.md §13, "share"): the scenario of the current view, deflated
//! (raw deflate, by the browser: [`crate::compression`]) and base64url-encoded (`base64`) into the URL fragment, so a link opens the
//! same prompts anywhere, with nothing sent to a server. A link longer than browsers keep is
//! refused with the scenario file as the way out; a damaged one says what is wrong.

use agent_chatter::scenario::{self, Scenario};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde::Serialize;
use serde_json::Value;

use crate::compression::{self, InflateError};

/// The fragment's prefix.
pub const PREFIX: &str = "#share=";
/// Longer links are refused: browsers and chat tools cut URLs beyond this.
pub const MAX_LINK_BYTES: usize = 64 * 1024;
/// A shared scenario never inflates beyond this (a deflate bomb is refused).
const MAX_INFLATED_BYTES: usize = 16 * 1024 * 1024;
/// The most members a shared case's team may have. Real teams have a handful; the core sets
/// no number, and a link of 20 000 members (67 KB) held the page 46 s at 4.8 GB before its
/// wasm ran out of memory.
pub const MAX_LINK_MEMBERS: usize = 100;
/// The most messages a shared case may hold: the size of session the page is measured at
/// (docs/architecture.md §13, "10⁴ messages"); a real case this long no longer fits a link.
pub const MAX_LINK_MESSAGES: usize = 10_000;
/// The most JSON values (objects, arrays, strings, numbers…) a link's data may hold, wherever
/// they are: the data is parsed before the scenario is read from it, and a parsed value costs
/// the page far more than its bytes (an object with a key ~300 B for its 8 bytes of text), so
/// 16 MiB of tiny objects would take ~700 MB that the page's memory never gives back. A case
/// at both limits above holds ~60 000.
pub const MAX_LINK_VALUES: usize = 100_000;

/// What a link holds: a scenario and the member shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shared {
    pub scenario: Scenario,
    pub member: Option<String>,
}

/// The address bar's `#share=…` fragment, removed from it (a reload then shows the session,
/// not the link again); `None` when the page was not opened from a shared link.
pub fn take_from_url() -> Option<String> {
    let window = web_sys::window()?;
    let hash = window.location().hash().ok()?;
    if !hash.starts_with(PREFIX) {
        return None;
    }
    let path = window.location().pathname().unwrap_or_else(|_| "/".into());
    if let Ok(history) = window.history() {
        let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&path));
    }
    Some(hash)
}

/// The link to `fragment` on the page at `page` (its address as the browser has it): the
/// address without its own fragment, where a bridge page keeps its launch token (`#token=…`),
/// so a link never carries the token.
pub fn link(page: &str, fragment: &str) -> String {
    let base = page.split('#').next().unwrap_or_default();
    format!("{base}{fragment}")
}

/// The `#share=…` part of whatever the user pasted: a whole link from any address (another
/// machine's bridge, a hosted copy of the page, a file), the fragment alone, or the fragment
/// without its `#`; `None` when there is none.
pub fn fragment_in(pasted: &str) -> Option<String> {
    let pasted = pasted.trim();
    let bare = &PREFIX[1..];
    let data = match pasted.find(PREFIX) {
        Some(i) => &pasted[i + PREFIX.len()..],
        None => pasted.strip_prefix(bare)?,
    };
    Some(format!("{PREFIX}{}", data.trim()))
}

/// The fragment for `scenario` shown for `member`; `Err` when the link would be too long.
pub async fn encode(scenario: &Scenario, member: Option<&str>) -> Result<String, String> {
    let json = link_json(scenario, member)?;
    fragment_of(&compression::deflate(json.as_bytes()).await?)
}

/// Reads a fragment made by [`encode`]; the error says what is damaged.
pub async fn decode(fragment: &str) -> Result<Shared, String> {
    let deflated = deflated_in(fragment)?;
    let json = compression::inflate(&deflated, MAX_INFLATED_BYTES)
        .await
        .map_err(|e| match e {
            InflateError::Damaged => "the shared link is damaged (its data does not decompress): ask for it again, or for the scenario file".to_string(),
            InflateError::TooLarge => format!("the shared link holds more than {} MiB once decompressed: ask for the scenario file instead", MAX_INFLATED_BYTES >> 20),
            InflateError::Unsupported => "this browser cannot open shared links (it has no DecompressionStream): open the scenario file instead".to_string(),
        })?;
    read_link(&json)
}

/// What a link holds, as JSON text: `{"v": 1, "scenario": …, "member": …}`.
fn link_json(scenario: &Scenario, member: Option<&str>) -> Result<String, String> {
    /// Written straight to text with the serializer session files use (not built as a
    /// `Value` first: that second serializer of every scenario type weighed on the page's
    /// wasm, docs/architecture.md §18).
    #[derive(Serialize)]
    struct Link<'a> {
        v: u64,
        scenario: &'a Scenario,
        member: Option<&'a str>,
    }
    serde_json::to_string(&Link {
        v: 1,
        scenario,
        member,
    })
    .map_err(|e| format!("this case cannot be written as a link: {e}"))
}

/// The fragment carrying `deflated` (base64url); `Err` when it is longer than links can be.
fn fragment_of(deflated: &[u8]) -> Result<String, String> {
    let fragment = format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(deflated));
    if fragment.len() > MAX_LINK_BYTES {
        return Err(format!(
            "this case is too long for a link ({} KiB, browsers keep at most {} KiB): save the scenario file and share that instead",
            fragment.len() / 1024,
            MAX_LINK_BYTES / 1024
        ));
    }
    Ok(fragment)
}

/// The deflated bytes a fragment carries.
fn deflated_in(fragment: &str) -> Result<Vec<u8>, String> {
    let data = fragment.strip_prefix(PREFIX).ok_or("not a shared link")?;
    URL_SAFE_NO_PAD
        .decode(data.trim())
        .map_err(|_| "the shared link is damaged (it is not base64url text): ask for it again, or for the scenario file".to_string())
}

/// The shared case in a link's JSON (inflated) bytes.
fn read_link(json: &[u8]) -> Result<Shared, String> {
    const NOT_JSON: &str = "the shared link is damaged (its data is not JSON)";
    // Read as text, with the reader every other JSON of the page goes through (a second one,
    // for bytes, would weigh on the page's wasm, docs/architecture.md §18).
    let text = std::str::from_utf8(json).map_err(|_| NOT_JSON)?;
    // Sized before anything is built from it, the parsed JSON included.
    check_sizes(text)?;
    let value: Value = serde_json::from_str(text).map_err(|_| NOT_JSON)?;
    if value.get("v").and_then(Value::as_u64) != Some(1) {
        return Err(
            "the shared link was made by another version of agent-chatter (v is not 1)".to_string(),
        );
    }
    let scenario = scenario::scenario_from_value(value.get("scenario").unwrap_or(&Value::Null))
        .map_err(|e| format!("the shared link's scenario: {e}"))?;
    let member = value
        .get("member")
        .and_then(Value::as_str)
        .map(str::to_string);
    Ok(Shared { scenario, member })
}

/// Where a link's JSON holds what [`check_sizes`] counts: the scenario's messages, and its
/// team's members (ours: `team.members`; the peer's cli-config: `team.team.members`).
const COUNTED: [&[&str]; 3] = [
    &["scenario", "messages"],
    &["scenario", "team", "members"],
    &["scenario", "team", "team", "members"],
];

/// Refuses a link's JSON text holding a team, a history or data larger than a shared case may
/// be, naming which, before anything is built from it (the parsed JSON included): one pass
/// over the text, counting values and the arrays at [`COUNTED`], holding nothing of it. What
/// is not JSON is left for the reader to name.
fn check_sizes(text: &str) -> Result<(), String> {
    /// An array or an object being read: which paths of [`COUNTED`] lead to it (a bit each),
    /// and for an array its elements so far.
    struct Open {
        array: bool,
        live: u8,
        count: usize,
    }
    let bytes = text.as_bytes();
    let mut open: Vec<Open> = Vec::new();
    let mut lengths = [0usize; COUNTED.len()];
    let mut values = 0usize;
    // The paths the next value is on (the root is on all of them; a key narrows them).
    let mut next: u8 = (1 << COUNTED.len()) - 1;
    let mut in_key = false;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b':') {
            i += 1;
            continue;
        }
        if matches!(b, b'}' | b']' | b',') {
            if b != b',' {
                if let Some(done) = open.pop().filter(|o| o.array) {
                    for (k, path) in COUNTED.iter().enumerate() {
                        if done.live & (1 << k) != 0 && path.len() == open.len() {
                            lengths[k] = done.count;
                        }
                    }
                }
            }
            next = 0;
            in_key = b == b',' && open.last().is_some_and(|o| !o.array);
            i += 1;
            continue;
        }
        let start = i;
        if b == b'"' {
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
        }
        if in_key {
            // A key: the paths it continues.
            // A key written with escapes is read as the reader reads it (`m\u0065mbers` is
            // `members`), so none hides what it holds.
            let raw = text.get(start + 1..i).unwrap_or_default();
            let decoded = raw
                .contains('\\')
                .then(|| {
                    text.get(start..=i)
                        .and_then(|q| serde_json::from_str::<String>(q).ok())
                })
                .flatten();
            let key = decoded.as_deref().unwrap_or(raw);
            let (depth, live) = (
                open.len().saturating_sub(1),
                open.last().map_or(0, |o| o.live),
            );
            next = (0..COUNTED.len())
                .filter(|&k| live & (1 << k) != 0 && COUNTED[k].get(depth) == Some(&key))
                .fold(0, |bits, k| bits | (1 << k));
            in_key = false;
            i += 1;
            continue;
        }
        // A value starts.
        values += 1;
        if values > MAX_LINK_VALUES {
            return Err(format!(
                "the shared link holds more data than a shared case may (over {MAX_LINK_VALUES} JSON values): it was not opened"
            ));
        }
        if let Some(parent) = open.last_mut().filter(|o| o.array) {
            parent.count += 1;
        }
        if matches!(b, b'{' | b'[') {
            open.push(Open {
                array: b == b'[',
                live: next,
                count: 0,
            });
            next = 0;
            in_key = b == b'{';
        } else if b != b'"' {
            // A number, true, false or null: to its end.
            while i + 1 < bytes.len() && !b",]} \t\n\r".contains(&bytes[i + 1]) {
                i += 1;
            }
        }
        i += 1;
    }
    let [messages, ours, peers] = lengths;
    let members = ours.max(peers);
    if members > MAX_LINK_MEMBERS {
        return Err(format!(
            "the shared link's team has {members} members; a shared case opens with at most {MAX_LINK_MEMBERS}: it was not opened"
        ));
    }
    if messages > MAX_LINK_MESSAGES {
        return Err(format!(
            "the shared link holds {messages} messages; a shared case opens with at most {MAX_LINK_MESSAGES}: it was not opened"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`encode`] with the deflate the browser does, by `miniz_oxide` (raw deflate, as the
    /// page's links were made before the browser made them).
    fn encode_here(scenario: &Scenario, member: Option<&str>) -> Result<String, String> {
        let json = link_json(scenario, member)?;
        fragment_of(&miniz_oxide::deflate::compress_to_vec(json.as_bytes(), 9))
    }

    /// [`decode`] likewise (the browser's errors are checked in web/e2e/share.test.mjs).
    fn decode_here(fragment: &str) -> Result<Shared, String> {
        let deflated = deflated_in(fragment)?;
        let json =
            miniz_oxide::inflate::decompress_to_vec_with_limit(&deflated, MAX_INFLATED_BYTES)
                .map_err(|_| "does not decompress".to_string())?;
        read_link(&json)
    }

    fn demo() -> Scenario {
        scenario::load_scenario(include_str!("../../examples/demo-scenario.json")).unwrap()
    }

    #[test]
    fn a_link_round_trips_the_scenario_and_the_member() {
        let fragment = encode_here(&demo(), Some("sarah")).unwrap();
        assert!(fragment.starts_with(PREFIX));
        let shared = decode_here(&fragment).unwrap();
        assert_eq!(shared.scenario, demo());
        assert_eq!(shared.member.as_deref(), Some("sarah"));
    }

    #[test]
    fn a_link_never_carries_the_pages_own_fragment_or_the_bridge_token() {
        let cases = [
            (
                "http://127.0.0.1:8080/#token=abc123",
                "http://127.0.0.1:8080/#share=x",
            ),
            ("http://127.0.0.1:8080/", "http://127.0.0.1:8080/#share=x"),
            (
                "https://example.org/chatter/index.html#share=old",
                "https://example.org/chatter/index.html#share=x",
            ),
            (
                "file:///home/k/dist/index.html",
                "file:///home/k/dist/index.html#share=x",
            ),
        ];
        for (page, want) in cases {
            let link = link(page, "#share=x");
            assert_eq!(link, want);
            assert!(!link.contains("token"), "{link}");
        }
    }

    #[test]
    fn the_shared_part_is_found_in_whatever_was_pasted() {
        let cases = [
            ("http://127.0.0.1:8080/#share=abc", Some("#share=abc")),
            ("  https://example.org/x/#share=abc \n", Some("#share=abc")),
            ("#share=abc", Some("#share=abc")),
            ("share=abc", Some("#share=abc")),
            ("http://127.0.0.1:8080/#token=abc", None),
            ("hello", None),
            ("", None),
        ];
        for (pasted, want) in cases {
            assert_eq!(fragment_in(pasted).as_deref(), want, "{pasted:?}");
        }
    }

    #[test]
    fn a_case_too_long_for_a_link_says_so() {
        let mut big = demo();
        // Incompressible text: a pseudo-random walk over letters.
        let mut x: u64 = 1;
        let text: String = (0..120_000)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                char::from(b'a' + (x >> 59) as u8 % 26)
            })
            .collect();
        big.messages[0].content = text;
        let err = encode_here(&big, None).unwrap_err();
        assert!(
            err.contains("too long for a link") && err.contains("scenario file"),
            "{err}"
        );
    }

    /// A link's JSON whose team has `members` humans and whose history has `messages`.
    fn sized(members: usize, messages: usize) -> String {
        let members: Vec<String> = (0..members)
            .map(|i| format!(r#"{{"name":"m{i}","kind":"human"}}"#))
            .collect();
        let messages: Vec<&str> = (0..messages)
            .map(|_| r#"{"from":"m0","content":"hi"}"#)
            .collect();
        format!(
            r#"{{"v":1,"scenario":{{"team":{{"name":"big","members":[{}]}},"messages":[{}]}}}}"#,
            members.join(","),
            messages.join(",")
        )
    }

    #[test]
    fn a_team_or_a_history_larger_than_a_shared_case_may_be_is_refused_naming_it() {
        let at_limits = sized(MAX_LINK_MEMBERS, MAX_LINK_MESSAGES);
        let shared = read_link(at_limits.as_bytes()).unwrap();
        assert_eq!(shared.scenario.team.members.len(), MAX_LINK_MEMBERS);
        assert_eq!(shared.scenario.messages.len(), MAX_LINK_MESSAGES);

        let err = read_link(sized(20_000, 1).as_bytes()).unwrap_err();
        assert_eq!(
            err,
            "the shared link's team has 20000 members; a shared case opens with at most 100: it was not opened"
        );
        let err = read_link(sized(MAX_LINK_MEMBERS + 1, 1).as_bytes()).unwrap_err();
        assert!(err.contains("team has 101 members"), "{err}");
        let err = read_link(sized(2, MAX_LINK_MESSAGES + 1).as_bytes()).unwrap_err();
        assert_eq!(
            err,
            "the shared link holds 10001 messages; a shared case opens with at most 10000: it was not opened"
        );

        // The peer's cli-config keeps its members one level deeper.
        let members: Vec<String> = (0..150).map(|i| format!(r#"{{"name":"m{i}"}}"#)).collect();
        let peer = format!(
            r#"{{"v":1,"scenario":{{"team":{{"schemaVersion":"1.2","team":{{"members":[{}]}}}},"messages":[]}}}}"#,
            members.join(",")
        );
        let err = read_link(peer.as_bytes()).unwrap_err();
        assert!(err.contains("team has 150 members"), "{err}");
        // A key written with escapes is the same key to the reader.
        let escaped = sized(101, 0).replace(r#""members""#, r#""m\u0065mbers""#);
        let err = read_link(escaped.as_bytes()).unwrap_err();
        assert!(err.contains("team has 101 members"), "{err}");

        // Arrays elsewhere are not members or messages, but they are data all the same.
        let junk = format!(
            r#"{{"v":1,"junk":[{}],"scenario":{{}}}}"#,
            vec!["{}"; MAX_LINK_VALUES].join(",")
        );
        let err = read_link(junk.as_bytes()).unwrap_err();
        assert!(
            err.contains("more data than a shared case may (over 100000 JSON values)"),
            "{err}"
        );
    }

    #[test]
    fn the_size_check_leaves_other_damage_to_the_reader() {
        assert_eq!(check_sizes("{not json"), Ok(()));
        assert_eq!(
            check_sizes(r#"{"scenario":{"team":"x","messages":7}}"#),
            Ok(())
        );
        assert_eq!(
            check_sizes(include_str!("../../examples/demo-scenario.json")),
            Ok(())
        );
        let err = read_link(br#"{"v":1,"scenario":{"team":{"members":[]},"messages":"x"}}"#);
        assert!(err
            .unwrap_err()
            .starts_with("the shared link's scenario: team"));
    }

    #[test]
    fn a_damaged_link_says_what_is_wrong() {
        let err = decode_here(&format!("{PREFIX}not*base64")).unwrap_err();
        assert!(err.contains("not base64url"), "{err}");
        let cases = [
            (&b"plain text"[..], "its data is not JSON"),
            (br#"{"v": 2, "scenario": {}}"#, "another version"),
            (
                br#"{"v": 1, "scenario": {"team": {}}}"#,
                "the shared link's scenario: team",
            ),
        ];
        for (json, want) in cases {
            let err = read_link(json).unwrap_err();
            assert!(
                err.contains(want),
                "{}: {err}",
                String::from_utf8_lossy(json)
            );
        }
    }
}
