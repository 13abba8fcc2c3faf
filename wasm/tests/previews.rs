//! The expected previews shared with the Node suite (`wasm/js/preview.test.mjs`): for every
//! scenario fixture (`tests/fixtures/scenarios/*.json`) and every member, the core's
//! `preview` as JSON must equal `wasm/tests/expected/previews/<scenario>.<member>.json`. The
//! Node suite checks the npm package against the same files, so both give the same bytes.
//!
//! After an intended change of the core's output, regenerate them with
//! `UPDATE_EXPECTED=1 cargo test -p agent-chatter-wasm --test previews` and review the diff.
#![cfg(not(target_arch = "wasm32"))]

use std::path::{Path, PathBuf};

use agent_chatter::scenario::{load_scenario, preview};
use agent_chatter::sorted_keys;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `(scenario stem, member id, expected file)` for every fixture and member.
fn cases() -> Vec<(String, String, PathBuf, String)> {
    let dir = root().join("tests/fixtures/scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("scenario fixtures")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for file in files {
        let stem = file
            .file_stem()
            .expect("stem")
            .to_string_lossy()
            .into_owned();
        let text = std::fs::read_to_string(&file).expect("readable fixture");
        let scenario = load_scenario(&text).expect("scenario fixtures are valid");
        for member in &scenario.team.members {
            let expected = root()
                .join("wasm/tests/expected/previews")
                .join(format!("{stem}.{}.json", member.id));
            let actual = match preview(&scenario, &member.id) {
                Ok(p) => serde_json::to_value(&p).expect("serializes"),
                Err(e) => serde_json::json!({ "error": e.to_string() }),
            };
            let actual =
                serde_json::to_string_pretty(&sorted_keys(actual)).expect("serializes") + "\n";
            cases.push((stem.clone(), member.id.clone(), expected, actual));
        }
    }
    cases
}

#[test]
fn every_scenario_fixture_previews_as_the_expected_files_say() {
    let update = std::env::var_os("UPDATE_EXPECTED").is_some();
    let cases = cases();
    assert!(!cases.is_empty(), "no scenario fixtures found");
    for (stem, member, expected, actual) in cases {
        if update {
            std::fs::create_dir_all(expected.parent().expect("parent")).expect("creates dir");
            std::fs::write(&expected, &actual).expect("writes expected file");
            continue;
        }
        let want = std::fs::read_to_string(&expected).unwrap_or_else(|e| {
            panic!(
                "{}: {e}; generate it with UPDATE_EXPECTED=1 cargo test -p agent-chatter-wasm --test previews",
                expected.display()
            )
        });
        assert_eq!(
            actual,
            want,
            "{stem} for {member} differs from {}",
            expected.display()
        );
    }
}
