//! Golden previews (docs/architecture.md §11b): every
//! `tests/fixtures/previews/<case>/scenario.json` gives, for each member with a
//! `<member>.prompt.txt`, exactly that prompt (and flag). The npm package's Node tests read the
//! same files.

use std::fs;
use std::path::{Path, PathBuf};

use agent_chatter::scenario::{load_scenario, preview};

fn cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/previews");
    let mut dirs: Vec<PathBuf> = fs::read_dir(&root)
        .expect("previews folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// The file's text without its final newline, or `None` if there is no such file.
fn expected(path: &Path) -> Option<String> {
    let text = fs::read_to_string(path).ok()?;
    Some(text.strip_suffix('\n').unwrap_or(&text).to_string())
}

#[test]
fn every_golden_preview_matches_byte_for_byte() {
    let mut checked = 0;
    for dir in cases() {
        let scenario = load_scenario(&fs::read_to_string(dir.join("scenario.json")).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            let Some(member) = name.strip_suffix(".prompt.txt") else {
                continue;
            };
            let p = preview(&scenario, member)
                .unwrap_or_else(|e| panic!("{}: {member}: {e}", dir.display()));
            assert_eq!(
                p.prompt,
                expected(&path).unwrap(),
                "{} / {member}: prompt",
                dir.display()
            );
            assert_eq!(
                p.system_flag,
                expected(&dir.join(format!("{member}.flag.txt"))),
                "{} / {member}: system flag",
                dir.display()
            );
            assert!(p.prompt.len() + p.system_flag.map_or(0, |f| f.len()) <= p.explain.max_bytes);
            checked += 1;
        }
    }
    assert!(checked >= 6, "only {checked} golden prompts found");
}
