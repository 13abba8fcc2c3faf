//! Snapshot v1 (docs/architecture.md §11, §19 (seed 001 §2.4/§4.9/§4.10)): export, full validation
//! before import, the peer's message shape.

use std::fs;
use std::path::Path;

use agent_chatter::context::{Store, TeamTaskTruncated, MAX_TEAM_TASK_BYTES};
use agent_chatter::markers::Intent;
use agent_chatter::message::{
    Addressee, MessageId, Millis, Routing, Speaker, SpeakerKind, MAX_MESSAGE_BYTES,
};
use agent_chatter::snapshot::{
    export, import, import_snapshot, import_str, Imported, Snapshot, SnapshotError,
};
use serde_json::{json, Value};

fn fixture(rel: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn fixture_value(rel: &str) -> Value {
    serde_json::from_str(&fixture(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn speaker(id: &str, kind: SpeakerKind) -> Speaker {
    Speaker {
        id: id.into(),
        name: id.into(),
        display_name: id.to_uppercase(),
        kind,
    }
}

fn routed(to: &[&str], parent: Option<&str>) -> Routing {
    Routing {
        raw_next: to
            .iter()
            .map(|n| Addressee {
                name: n.to_string(),
                intent: Intent::P2,
            })
            .collect(),
        resolved: to.iter().map(|s| s.to_string()).collect(),
        resolved_names: to.iter().map(|s| s.to_string()).collect(),
        parent: parent.map(|p| MessageId(p.into())),
        ..Routing::default()
    }
}

/// A small conversation: human → AI → AI, a system notice, with a team task.
fn sample_store() -> Store {
    let mut store = Store::new();
    let kailai = speaker("kailai", SpeakerKind::Human);
    store.push(
        kailai.clone(),
        "[TEAM_TASK: ship it] go [NEXT: max]".into(),
        routed(&["max"], None),
        Millis(10),
    );
    store.push(
        speaker("max", SpeakerKind::Ai),
        "ok [NEXT: sarah]".into(),
        routed(&["sarah"], Some("msg-1")),
        Millis(20),
    );
    store.push(
        speaker("sarah", SpeakerKind::Ai),
        "done, ünïcödé ✓".into(),
        routed(&[], Some("msg-2")),
        Millis(30),
    );
    store.push(
        Speaker::system(),
        "gina timed out".into(),
        Routing::default(),
        Millis(40),
    );
    store.set_team_task(Some("ship it"));
    store
}

fn import_err(store: &mut Store, value: &Value) -> String {
    match import(store, value) {
        Ok(done) => panic!("expected an error, imported {done:?}"),
        Err(e) => e.to_string(),
    }
}

// --- export / import -----------------------------------------------------------------------

#[test]
fn export_then_import_restores_an_equal_store() {
    let store = sample_store();
    let snapshot = export(&store, Millis(1_700_000_000_000));
    assert_eq!(snapshot.version, 1);
    assert_eq!(snapshot.timestamp, Millis(1_700_000_000_000));
    assert_eq!(snapshot.team_task.as_deref(), Some("ship it"));
    let value = serde_json::to_value(&snapshot).expect("serializes");

    let mut restored = Store::new();
    let done = import(&mut restored, &value).expect("imports");
    assert_eq!(
        done,
        Imported {
            messages: 4,
            team_task_truncated: None
        }
    );
    assert_eq!(restored, store);
}

#[test]
fn snapshot_json_uses_the_seed_field_names() {
    let mut store = sample_store();
    store.set_team_task(None);
    let value = serde_json::to_value(export(&store, Millis(5))).expect("serializes");
    assert_eq!(value["version"], 1);
    assert_eq!(value["timestamp"], 5);
    assert_eq!(
        value["teamTask"],
        Value::Null,
        "no team task is null, as in seed 001"
    );
    assert_eq!(value["messages"][1]["speaker"]["displayName"], "MAX");
    assert_eq!(value["messages"][1]["routing"]["parent"], "msg-1");
}

#[test]
fn import_from_text_equals_import_from_value() {
    let text = fixture("snapshots/ours-v1.json");
    let mut a = Store::new();
    let mut b = Store::new();
    import_str(&mut a, &text).expect("imports");
    import(&mut b, &fixture_value("snapshots/ours-v1.json")).expect("imports");
    assert_eq!(a, b);
}

#[test]
fn ids_continue_after_the_highest_imported_one() {
    let mut store = Store::new();
    let mut value = serde_json::to_value(export(&sample_store(), Millis(0))).expect("serializes");
    value["messages"][1]["id"] = json!("msg-41");
    import(&mut store, &value).expect("imports");
    let next = store.push(
        speaker("kailai", SpeakerKind::Human),
        "next".into(),
        Routing::default(),
        Millis(50),
    );
    assert_eq!(next.id, MessageId("msg-42".into()));
}

#[test]
fn our_fixture_keeps_routing_speakers_and_times() {
    let mut store = Store::new();
    import(&mut store, &fixture_value("snapshots/ours-v1.json")).expect("imports");
    assert_eq!(store.len(), 5);
    assert_eq!(store.team_task(), Some("ship the importer"));
    let max = &store.messages()[1];
    assert_eq!(max.at, Millis(1_700_000_002_000));
    assert_eq!(
        max.routing.raw_next,
        vec![
            Addressee {
                name: "sarah".into(),
                intent: Intent::P1
            },
            Addressee {
                name: "zed".into(),
                intent: Intent::P2
            },
        ]
    );
    assert_eq!(max.routing.resolved, ["sarah"]);
    assert_eq!(max.routing.parent, Some(MessageId("msg-1".into())));
    assert_eq!(max.routing.intent, Some(Intent::P2));
    assert_eq!(store.messages()[3].speaker.kind, SpeakerKind::System);
    assert_eq!(store.messages()[3].routing, Routing::default());
    assert!(store.messages()[4].routing.is_done);
    assert_eq!(store.messages()[4].to_label(), "all");
}

#[test]
fn peer_snapshot_imports_with_its_message_shape() {
    let mut store = Store::new();
    let done = import(&mut store, &fixture_value("snapshots/peer-v1.json")).expect("imports");
    assert_eq!(done.messages, 3);
    assert_eq!(store.team_task(), Some("Review the login flow"));

    let first = &store.messages()[0];
    assert_eq!(first.id.as_str(), "msg-1736937000000-a1b2c3d4e");
    assert_eq!(first.speaker.kind, SpeakerKind::Human);
    assert_eq!(first.speaker.display_name, "Human Coordinator");
    assert_eq!(
        first.at,
        Millis(1_736_937_000_000),
        "ISO date read as milliseconds"
    );
    assert_eq!(
        first.routing.raw_next,
        vec![
            Addressee {
                name: "alice".into(),
                intent: Intent::P2
            },
            Addressee {
                name: "bob".into(),
                intent: Intent::P1
            },
        ]
    );
    assert_eq!(first.routing.resolved, ["alice", "bob"]);
    assert_eq!(first.to_label(), "alice, bob");

    let alice = &store.messages()[1];
    assert_eq!(alice.at, Millis(1_736_937_030_000));
    assert_eq!(
        alice.routing.raw_next,
        vec![
            Addressee {
                name: "carol".into(),
                intent: Intent::P2
            },
            Addressee {
                name: "nobody".into(),
                intent: Intent::P2
            },
        ],
        "a raw marker value with several names is split"
    );
    assert_eq!(
        alice.routing.resolved,
        ["carol"],
        "unresolved addressees are left out"
    );
    assert_eq!(alice.routing.parent, Some(first.id.clone()));
    assert_eq!(alice.routing.intent, Some(Intent::P2));

    let notice = &store.messages()[2];
    assert_eq!(notice.speaker.kind, SpeakerKind::System);
    assert_eq!(notice.at, Millis(1_736_937_040_000));

    let next = store.push(
        speaker("coordinator", SpeakerKind::Human),
        "hi".into(),
        Routing::default(),
        Millis(0),
    );
    assert_eq!(
        next.id.as_str(),
        "msg-1",
        "peer ids are not msg-N, so numbering starts at 1"
    );
}

#[test]
fn peer_timestamp_that_is_no_date_names_the_field() {
    let mut value = fixture_value("snapshots/peer-v1.json");
    value["messages"][1]["timestamp"] = json!("yesterday");
    let message = import_err(&mut Store::new(), &value);
    assert!(
        message.starts_with("messages[1].timestamp: \"yesterday\" is not an ISO 8601 date"),
        "{message}"
    );
}

// --- team task -----------------------------------------------------------------------------

#[test]
fn team_task_over_5_kib_is_cut_at_a_char_boundary_with_a_notice() {
    let task = "é".repeat(3000); // 6000 bytes, 2 per char
    let mut value = fixture_value("snapshots/ours-v1.json");
    value["teamTask"] = json!(task);
    let mut store = Store::new();
    let done = import(&mut store, &value).expect("imports");
    assert_eq!(
        done.team_task_truncated,
        Some(TeamTaskTruncated {
            from: 6000,
            to: MAX_TEAM_TASK_BYTES
        })
    );
    assert_eq!(store.team_task().map(str::len), Some(MAX_TEAM_TASK_BYTES));
}

#[test]
fn team_task_null_empty_or_absent_is_none() {
    for task in [Some(json!(null)), Some(json!("")), None] {
        let mut value = fixture_value("snapshots/ours-v1.json");
        match &task {
            Some(t) => value["teamTask"] = t.clone(),
            None => {
                value.as_object_mut().map(|o| o.remove("teamTask"));
            }
        }
        let mut store = sample_store();
        import(&mut store, &value).expect("imports");
        assert_eq!(store.team_task(), None, "{task:?}");
    }
}

// --- bad snapshots -------------------------------------------------------------------------

#[test]
fn bad_snapshots_fail_naming_the_field() {
    let cases = [
        ("snapshot-version-2.json", "version: expected 1, found 2"),
        (
            "snapshot-missing-speaker-id.json",
            "messages[3].speaker.id: missing",
        ),
        (
            "snapshot-duplicate-ids.json",
            "messages[4].id: duplicate \"msg-3\", first used by messages[2]",
        ),
        (
            "snapshot-missing-content.json",
            "messages[1].content: missing",
        ),
        (
            "snapshot-unknown-speaker-kind.json",
            "messages[2].speaker.kind: expected \"human\", \"ai\" or \"system\", found \"robot\"",
        ),
        (
            "snapshot-content-not-a-string.json",
            "messages[0].content: expected a string, found 42",
        ),
        (
            "snapshot-unpaired-resolved-names.json",
            "messages[1].routing.resolvedNames: 0 names for 1 resolved ids; they must pair up",
        ),
        (
            "snapshot-invalid-json.json",
            "invalid JSON at line 3, column 16: expected a JSON value here",
        ),
    ];
    for (file, expected) in cases {
        let text = fixture(&format!("bad/{file}"));
        let message = match import_str(&mut Store::new(), &text) {
            Ok(done) => panic!("{file}: imported {done:?}"),
            Err(e) => e.to_string(),
        };
        assert_eq!(message, expected, "{file}");
    }
}

#[test]
fn failed_import_leaves_the_store_unchanged() {
    let mut bad_files: Vec<String> =
        fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bad"))
            .expect("bad/")
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("snapshot-"))
            .collect();
    bad_files.sort();
    assert!(bad_files.len() >= 8);
    for file in bad_files {
        let mut store = sample_store();
        let before = store.clone();
        assert!(
            import_str(&mut store, &fixture(&format!("bad/{file}"))).is_err(),
            "{file}"
        );
        assert_eq!(store, before, "{file}: a failed import changed the store");
    }
}

#[test]
fn ten_megabyte_message_is_refused_with_its_size() {
    let mut value = fixture_value("snapshots/ours-v1.json");
    value["messages"][0]["content"] = json!("x".repeat(10 * 1024 * 1024));
    let mut store = sample_store();
    let before = store.clone();
    let message = import_err(&mut store, &value);
    assert_eq!(
        message,
        "messages[0].content: over the 1 MiB limit (1048576 bytes), found 10485760 bytes"
    );
    assert_eq!(store, before);
}

#[test]
fn message_exactly_at_the_limit_is_accepted() {
    let mut value = fixture_value("snapshots/ours-v1.json");
    value["messages"][0]["content"] = json!("x".repeat(MAX_MESSAGE_BYTES));
    let mut store = Store::new();
    import(&mut store, &value).expect("imports");
    assert_eq!(store.messages()[0].content.len(), MAX_MESSAGE_BYTES);
}

#[test]
fn shape_errors_name_their_path() {
    let base = fixture_value("snapshots/ours-v1.json");
    type Mutation = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(Mutation, &str)> = vec![
        (Box::new(|v| v["version"] = json!("1")), "version: expected 1, found \"1\""),
        (
            Box::new(|v| {
                v.as_object_mut().map(|o| o.remove("version"));
            }),
            "version: missing",
        ),
        (Box::new(|v| v["messages"] = json!({})), "messages: expected an array, found an object"),
        (Box::new(|v| v["messages"][2] = json!("hi")), "messages[2]: expected an object, found the string \"hi\""),
        (Box::new(|v| v["messages"][0]["id"] = json!("")), "messages[0].id: empty"),
        (Box::new(|v| v["messages"][0]["speaker"]["id"] = json!(" ")), "messages[0].speaker.id: empty"),
        (
            Box::new(|v| {
                v["messages"][0]["speaker"].as_object_mut().map(|o| o.remove("name"));
            }),
            "messages[0].speaker.name: missing",
        ),
        (Box::new(|v| v["messages"][0]["at"] = json!(-5)), "messages[0].at: expected a non-negative integer, found -5"),
        (
            Box::new(|v| v["messages"][1]["routing"]["rawNext"][0]["intent"] = json!("P9")),
            "messages[1].routing.rawNext[0].intent: expected \"P1\", \"P2\" or \"P3\", found \"P9\"",
        ),
        (Box::new(|v| v["teamTask"] = json!(5)), "teamTask: expected a string, found 5"),
        (Box::new(|v| *v = json!([])), "(top level): expected an object, found an array"),
    ];
    for (mutate, expected) in cases {
        let mut value = base.clone();
        mutate(&mut value);
        assert_eq!(import_err(&mut Store::new(), &value), expected);
    }
}

#[test]
fn in_memory_snapshot_is_checked_like_json() {
    let mut snapshot = export(&sample_store(), Millis(0));
    snapshot.messages[3].id = MessageId("msg-1".into());
    let mut store = Store::new();
    let err = import_snapshot(&mut store, snapshot.clone()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "messages[3].id: duplicate \"msg-1\", first used by messages[0]"
    );
    assert!(store.is_empty());

    snapshot.messages[3].id = MessageId("msg-4".into());
    snapshot.version = 2;
    assert!(matches!(
        import_snapshot(&mut store, snapshot.clone()),
        Err(SnapshotError::Version { .. })
    ));
    snapshot.version = 1;
    assert_eq!(
        import_snapshot(&mut store, snapshot).map(|d| d.messages),
        Ok(4)
    );
}

#[test]
fn serde_reads_what_export_writes() {
    let snapshot = export(&sample_store(), Millis(7));
    let text = serde_json::to_string(&snapshot).expect("serializes");
    let back: Snapshot = serde_json::from_str(&text).expect("deserializes");
    assert_eq!(back, snapshot);
    assert_eq!(Snapshot::from_json(&text).expect("validates"), snapshot);
}

// --- one reader ----------------------------------------------------------------------------

/// A snapshot of one message whose object holds `fields` after the usual ones.
fn one_message(fields: &str) -> String {
    format!(
        r#"{{"version": 1, "messages": [{{"id": "msg-1", "content": "x",
           "speaker": {{"id": "k", "name": "kai", "kind": "human"}}{fields}}}]}}"#
    )
}

/// What every entry point makes of `text`: from text, from a parsed `Value`, through serde.
fn read_every_way(text: &str) -> Result<Snapshot, String> {
    let from_text = Snapshot::from_json(text).map_err(|e| e.to_string());
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        let from_value = Snapshot::from_value(&value).map_err(|e| e.to_string());
        assert_eq!(
            from_text, from_value,
            "text and Value read differently: {text}"
        );
    }
    let through_serde = serde_json::from_str::<Snapshot>(text);
    match (&from_text, through_serde) {
        (Ok(a), Ok(b)) => assert_eq!(a, &b, "{text}"),
        // serde words a syntax error its own way; past the syntax, the reader's error is its.
        (Err(reason), Err(e)) => assert!(
            reason.starts_with("invalid JSON") || e.to_string().starts_with(reason.as_str()),
            "serde's error {e} is not the reader's {reason}"
        ),
        (a, b) => panic!("serde reads {text} as {b:?}, the reader as {a:?}"),
    }
    from_text
}

#[test]
fn every_entry_point_reads_snapshots_alike() {
    let mut cases = vec![
        fixture("snapshots/ours-v1.json"),
        fixture("snapshots/peer-v1.json"),
        r#"{"version": 1, "messages": []}"#.to_string(),
        r#"{"version": 1, "messages": [], "teamTask": "ship \u00e9", "timestamp": 5, "x": [1]}"#
            .to_string(),
        one_message(
            r#", "at": 9, "routing": {"rawNext": [{"name": "max", "intent": "P1"}], "resolved": ["max"], "isDone": true, "parent": "msg-0", "intent": "P3_EXTEND"}"#,
        ),
        one_message(
            r#", "timestamp": "2025-01-15T10:30:00.000Z", "routing": {"rawNextMarkers": ["max, ghost !P1"], "resolvedAddressees": [{"identifier": "max", "memberId": "max", "memberName": null}, {"memberId": null}]}"#,
        ),
        one_message(
            r#", "routing": {"rawNextMarkers": ["a"], "parsedAddressees": [{"name": "b", "intent": "bogus"}], "intent": "nope", "parentMessageId": "msg-0"}"#,
        ),
    ];
    let bad = fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bad"))
        .expect("bad/")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("snapshot-"))
        .map(|e| fs::read_to_string(e.path()).expect("fixture"));
    cases.extend(bad);
    for fields in [
        r#", "at": -1"#,
        r#", "at": 1.5"#,
        r#", "timestamp": "yesterday""#,
        r#", "routing": {"rawNext": [{"name": "a", "intent": "P9"}]}"#,
        r#", "routing": {"parsedAddressees": [{"intent": "P1"}], "rawNextMarkers": []}"#,
        r#", "routing": {"resolvedAddressees": [null]}"#,
        r#", "routing": 3"#,
        r#", "id": "msg-2", "id": "msg-3""#,
    ] {
        cases.push(one_message(fields));
    }
    for case in &cases {
        read_every_way(case).ok();
    }
}

#[test]
fn keys_of_the_other_shape_may_hold_anything() {
    // Ours says `kind`, `at` and `rawNext`; the peer `type`, `timestamp` and `rawNextMarkers`.
    // Whichever shape a value is read as, the other shape's keys are not read at all.
    let cases = [
        (r#", "type": 5"#, Millis(0)),
        (r#", "at": 4, "timestamp": {}"#, Millis(4)),
        (
            r#", "routing": {"rawNextMarkers": [], "rawNext": "no", "resolved": 7}"#,
            Millis(0),
        ),
        (
            r#", "routing": {"parentMessageId": 5, "parsedAddressees": false}"#,
            Millis(0),
        ),
    ];
    for (fields, at) in cases {
        let snapshot = read_every_way(&one_message(fields)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(snapshot.messages[0].at, at, "{fields}");
        assert_eq!(snapshot.messages[0].speaker.kind, SpeakerKind::Human);
    }
}

#[test]
fn a_repeated_key_takes_its_last_value_and_null_is_absent() {
    let snapshot = read_every_way(&one_message(
        r#", "at": 3, "at": 8, "routing": {"parent": "msg-0", "parent": null}"#,
    ))
    .expect("reads");
    assert_eq!(snapshot.messages[0].at, Millis(8));
    assert_eq!(snapshot.messages[0].routing.parent, None);
    let err = read_every_way(&one_message(r#", "content": null"#)).unwrap_err();
    assert_eq!(err, "messages[0].content: missing");
}

#[test]
fn the_first_problem_in_document_order_is_the_one_reported() {
    // Each message is checked in this order: object, id, speaker, content, id not empty,
    // id not used before, size, routing, time. A duplicate id is found after the fact, but is
    // reported as if checked in place.
    let msg = |id: &str, extra: &str| {
        format!(
            r#"{{"id": "{id}", "content": "x", "speaker": {{"id": "k", "name": "k", "kind": "ai"}}{extra}}}"#
        )
    };
    let no_speaker = r#"{"id": "a", "content": "x"}"#.to_string();
    let cases = [
        (
            vec![msg("a", ""), msg("a", r#", "at": -1"#)],
            "messages[1].id: duplicate \"a\", first used by messages[0]",
        ),
        (
            vec![msg("a", ""), no_speaker.clone()],
            "messages[1].speaker: missing",
        ),
        (
            vec![msg("a", ""), msg("b", r#", "at": -1"#), msg("a", "")],
            "messages[1].at: expected a non-negative integer, found -1",
        ),
        (
            vec![msg("a", ""), msg("b", ""), msg("b", ""), no_speaker],
            "messages[2].id: duplicate \"b\", first used by messages[1]",
        ),
        (
            vec![msg("a", ""), msg(" ", ""), msg("a", "")],
            "messages[1].id: empty",
        ),
    ];
    for (messages, expected) in cases {
        let text = format!(r#"{{"version": 1, "messages": [{}]}}"#, messages.join(","));
        assert_eq!(read_every_way(&text).unwrap_err(), expected, "{text}");
    }
}

#[test]
fn an_in_memory_snapshot_reports_its_first_problem_too() {
    let mut snapshot = export(&sample_store(), Millis(0));
    snapshot.messages[1].id = MessageId("msg-1".into());
    std::sync::Arc::make_mut(&mut snapshot.messages[3].speaker).id = " ".into();
    let err = import_snapshot(&mut Store::new(), snapshot.clone()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "messages[1].id: duplicate \"msg-1\", first used by messages[0]"
    );
    snapshot.messages[1].id = MessageId("msg-2".into());
    snapshot.messages[3].id = MessageId("msg-2".into());
    let err = import_snapshot(&mut Store::new(), snapshot).unwrap_err();
    assert_eq!(err.to_string(), "messages[3].speaker.id: empty");
}

#[test]
fn serde_gives_the_readers_error() {
    let err = serde_json::from_str::<Snapshot>(&fixture("bad/snapshot-missing-content.json"))
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("messages[1].content: missing"), "{err}");
}

// --- properties ----------------------------------------------------------------------------

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn arb_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            any::<u64>().prop_map(|n| json!(n)),
            (-1e9f64..1e9).prop_map(|f| json!(f)),
            ".{0,12}".prop_map(Value::String),
            Just(json!("msg-1")),
            Just(json!("human")),
            Just(json!("P1_INTERRUPT")),
            Just(json!("2025-01-15T10:30:00.000Z")),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::hash_map("[a-zA-Z]{1,10}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// Where a mutation lands in a snapshot of either shape.
    const FIELDS: [&[&str]; 21] = [
        &["id"],
        &["content"],
        &["at"],
        &["timestamp"],
        &["speaker"],
        &["speaker", "id"],
        &["speaker", "name"],
        &["speaker", "kind"],
        &["speaker", "type"],
        &["routing"],
        &["routing", "rawNext"],
        &["routing", "resolvedNames"],
        &["routing", "resolvedAddressees"],
        &["routing", "parsedAddressees"],
        &["routing", "rawNextMarkers"],
        &["routing", "resolved"],
        &["routing", "isDone"],
        &["routing", "parent"],
        &["routing", "parentMessageId"],
        &["routing", "intent"],
        &["speaker", "displayName"],
    ];

    fn set_at(value: &mut Value, path: &[&str], new: Value) {
        let mut cur = value;
        for (i, key) in path.iter().enumerate() {
            if !cur.is_object() {
                *cur = json!({});
            }
            if i + 1 == path.len() {
                cur[*key] = new;
                return;
            }
            cur = &mut cur[*key];
        }
    }

    /// Our fixture or the peer's, with `FIELDS[field]` of one message set to `new`.
    fn mutated_fixture(peer: bool, index: usize, field: usize, new: Value) -> Value {
        let file = if peer {
            "snapshots/peer-v1.json"
        } else {
            "snapshots/ours-v1.json"
        };
        let mut value = fixture_value(file);
        let len = value["messages"].as_array().map_or(0, Vec::len);
        set_at(&mut value["messages"][index % len], FIELDS[field], new);
        value
    }

    fn check(value: &Value) -> Result<(), TestCaseError> {
        let mut store = sample_store();
        let before = store.clone();
        match import(&mut store, value) {
            Ok(done) => prop_assert_eq!(done.messages, store.len()),
            Err(_) => prop_assert_eq!(&store, &before, "a failed import changed the store"),
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn any_json_imports_or_fails_without_touching_the_store(value in arb_json()) {
            check(&value)?;
        }

        #[test]
        fn any_field_of_a_valid_snapshot_may_be_anything(
            peer in any::<bool>(),
            index in 0usize..5,
            field in 0usize..FIELDS.len(),
            new in arb_json(),
        ) {
            check(&mutated_fixture(peer, index, field, new))?;
        }

        #[test]
        fn a_snapshot_reads_alike_from_text_and_from_a_value(
            peer in any::<bool>(),
            index in 0usize..5,
            field in 0usize..FIELDS.len(),
            new in arb_json(),
        ) {
            let value = mutated_fixture(peer, index, field, new);
            // Through text: a float may not survive serde_json's printing and parsing exactly,
            // so both readers start from the text's own `Value`.
            let text = value.to_string();
            let reparsed: Value = serde_json::from_str(&text).expect("JSON");
            prop_assert_eq!(
                Snapshot::from_json(&text).map_err(|e| e.to_string()),
                Snapshot::from_value(&reparsed).map_err(|e| e.to_string())
            );
        }

        #[test]
        fn any_text_imports_or_fails_without_touching_the_store(text in "\\PC{0,64}") {
            let mut store = sample_store();
            let before = store.clone();
            if import_str(&mut store, &text).is_err() {
                prop_assert_eq!(&store, &before);
            }
        }
    }
}

#[test]
fn only_decimal_digits_make_a_numbered_id_as_in_the_peer() {
    use agent_chatter::message::MessageId;
    for (id, seq) in [
        ("msg-5", Some(5)),
        ("msg-+5", None),
        ("msg-", None),
        ("msg-5a", None),
        ("msg-007", Some(7)),
    ] {
        assert_eq!(MessageId(id.to_string()).seq(), seq, "{id}");
    }
}
