//! `agent-chatter export SESSION --format md|html|json` (docs/architecture.md §14): a session of
//! a real database as a transcript, made after a `chat` with a scripted agent.

mod support;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use support::{team, Bridge};

/// A database holding one session: Kailai asked max (the scripted Claude stream), who answered.
fn chatted() -> tempfile::TempDir {
    let dir = Bridge::new_dir(&team(None), "claude-stream.sh");
    let d = dir.path();
    let mut child = support::chat_command(d)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"[NEXT: max] Please draft </details><script>x</script>.\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

fn export(dir: &tempfile::TempDir, args: &[&str]) -> Output {
    Command::new(support::bin())
        .arg("export")
        .args(args)
        .arg("--db")
        .arg(dir.path().join("chat.db"))
        .output()
        .unwrap()
}

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[test]
fn a_chat_exports_as_markdown_with_who_said_what_to_whom_and_each_prompt() {
    let dir = chatted();
    let md = stdout(&export(&dir, &["1", "--format", "md"]));
    assert!(md.starts_with("# Transcript: relay\n"), "{md}");
    assert!(md.contains("\n## #1 kailai → max\n"), "{md}");
    assert!(md.contains("\n## #2 max → "), "{md}");
    assert!(md.contains("Relay héllo, "), "{md}");
    assert!(md.contains("\nPrompt delivered to max ("), "{md}");
    assert!(
        md.contains("\nSystem flag delivered to max:\n\n```text\nYou are Max.\n```\n"),
        "{md}"
    );
}

#[test]
fn the_html_export_is_one_page_with_a_details_block_per_delivery_and_no_script() {
    let dir = chatted();
    let html = stdout(&export(&dir, &["1", "--format", "html"]));
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert!(
        html.matches("<details class=\"delivery\"").count() >= 1,
        "{html}"
    );
    assert!(!html.contains("<script"), "{html}");
    assert!(
        html.contains("&lt;/details&gt;&lt;script&gt;x&lt;/script&gt;"),
        "{html}"
    );
}

#[test]
fn the_json_export_has_the_messages_and_the_digest_of_each_delivery() {
    let dir = chatted();
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&export(&dir, &["1", "--format", "json"]))).unwrap();
    assert_eq!(json["format"], "agent-chatter-transcript/1");
    let first = &json["messages"][0];
    assert_eq!(first["from"], "kailai");
    assert_eq!(first["to"], serde_json::json!(["max"]));
    let delivery = &first["deliveries"][0];
    assert_eq!(delivery["to"], "max");
    assert_eq!(delivery["sha256"].as_str().map(str::len), Some(64));
    assert_eq!(json["messages"][1]["outcome"]["kind"], "replied");
}

#[test]
fn output_goes_to_the_file_named_with_o() {
    let dir = chatted();
    let file = dir.path().join("transcript.md");
    let out = export(&dir, &["1", "-o", file.to_str().unwrap()]);
    assert!(stdout(&out).is_empty());
    let md = std::fs::read_to_string(&file).unwrap();
    assert!(md.contains("## #1 kailai → max"), "{md}");
}

#[test]
fn an_unknown_session_is_named_with_the_sessions_there_are() {
    let dir = chatted();
    for wrong in ["7", "draft"] {
        let out = export(&dir, &[wrong, "--format", "md"]);
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("session {wrong}: no such session in "))
                && err.contains("its sessions are 1"),
            "{err}"
        );
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn a_missing_database_is_named_and_not_created() {
    let dir = tempfile::tempdir().unwrap();
    let out = export(&dir, &["1"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("chat.db: no session database here"), "{err}");
    assert!(!dir.path().join("chat.db").exists());
}
