//! Transcripts stay on the machine and say only what happened (docs/architecture.md §14c
//! "Secrets and paths stay on the machine", issue 45): `export -o` writes an owner-only file
//! and never through a symbolic link; in Markdown no text from an agent, a member, a team or a
//! file can forge a heading, a list, a fence's end or HTML; `export` and `sessions` only read
//! the database, so a read-only one (0444) is read and left as it was. Real `chat` runs make
//! the database; real `export` and `sessions` read it.

mod support;

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::json;

/// The reply of max, with a fence of its own and a heading inside it.
const REPLY: &str =
    "Here is the plan:\n```\n## #9 forged inside a fence\n```\n- not a list of ours [NEXT: sarah]";
/// What sarah's CLI says on stderr before it crashes: its failure's reason.
const STDERR: &str = "Error: <script>alert(1)</script>";
/// A team name with a line break and a heading after it.
const TEAM: &str = "relay\n## #5 forged by the team name";

/// Writes an executable shell script `name` in `d` and returns its path.
fn script(d: &Path, name: &str, body: &str) -> PathBuf {
    let path = d.join(name);
    std::fs::write(&path, format!("#!/bin/sh\ncat > /dev/null\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// A database (`chat.db` in the directory returned) made by a real `chat`: the team named
/// [`TEAM`]; kailai asks max, who replies [`REPLY`] and passes to sarah, whose CLI crashes
/// saying [`STDERR`].
fn chatted() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let result =
        json!({"type": "result", "subtype": "success", "is_error": false, "result": REPLY});
    std::fs::write(d.join("reply.jsonl"), format!("{result}\n")).unwrap();
    let max = script(
        d,
        "max.sh",
        &format!("cat '{}'", d.join("reply.jsonl").display()),
    );
    let sarah = script(d, "sarah.sh", &format!("echo '{STDERR}' >&2; exit 1"));
    let team = json!({"name": TEAM, "members": [
        {"name": "kailai", "kind": "human"},
        {"name": "max", "kind": "ai", "agentType": "claude-code"},
        {"name": "sarah", "kind": "ai", "agentType": "openai-codex"}]});
    std::fs::write(d.join("team.json"), team.to_string()).unwrap();
    let agents = json!({"agents": {
        "max": {"command": max, "args": [], "output": "claude"},
        "sarah": {"command": sarah, "args": [], "output": "command"}}});
    std::fs::write(d.join("agents.json"), agents.to_string()).unwrap();
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
        .write_all(b"[NEXT: max] Plan it.\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    // The conversation ends on sarah's failure.
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("alert(1)"), "{err}");
    dir
}

fn agent_chatter(d: &Path, args: &[&str]) -> Output {
    Command::new(support::bin())
        .args(args)
        .arg("--db")
        .arg(d.join("chat.db"))
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

/// The lines of Markdown `md` that are not inside a fenced code block (CommonMark: a fence of
/// n backticks is closed only by a line of at least n backticks and nothing else).
fn outside_fences(md: &str) -> Vec<&str> {
    let mut outside = Vec::new();
    let mut open: Option<usize> = None;
    for line in md.lines() {
        let ticks = line.chars().take_while(|&c| c == '`').count();
        match open {
            Some(n) if ticks >= n && line.trim_end().len() == ticks => open = None,
            Some(_) => {}
            None if ticks >= 3 => open = Some(ticks),
            None if line.starts_with("~~~") => panic!("a tilde fence: {line}"),
            None => outside.push(line),
        }
    }
    assert!(open.is_none(), "a fence is left open");
    outside
}

#[test]
fn no_text_from_an_agent_a_team_or_a_file_forges_markdown() {
    let dir = chatted();
    let md = stdout(&agent_chatter(dir.path(), &["export", "1"]));
    let lines = outside_fences(&md);
    // Headings: the title, then one per message (#1 kailai, #2 max, #3 sarah's failure).
    let headings: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with('#'))
        .collect();
    assert_eq!(headings.len(), 4, "{headings:#?}");
    assert!(headings[0].starts_with("# Transcript: relay"), "{md}");
    for (n, heading) in headings[1..].iter().enumerate() {
        assert!(heading.starts_with(&format!("## #{} ", n + 1)), "{md}");
    }
    // No setext heading either: no line of `=` or `-` alone.
    for line in &lines {
        let bare = line.trim();
        let underline =
            !bare.is_empty() && (bare.chars().all(|c| c == '=') || bare.chars().all(|c| c == '-'));
        assert!(!underline, "{line}\n{md}");
    }
    // Lists: the header's lines only.
    let labels = [
        "- members: ",
        "- settings: ",
        "- team task: ",
        "- usage: ",
        "- exported: ",
    ];
    let list_item = |l: &&&str| {
        ["- ", "* ", "+ ", ">"].iter().any(|m| l.starts_with(m))
            || l.split_once(". ")
                .is_some_and(|(n, _)| n.parse::<u32>().is_ok())
    };
    for line in lines.iter().filter(list_item) {
        assert!(labels.iter().any(|l| line.starts_with(l)), "{line}\n{md}");
    }
    // HTML: none, at a line's start or within one.
    for line in &lines {
        let raw_html = line
            .match_indices('<')
            .any(|(at, _)| !line[..at].ends_with('\\'));
        assert!(!raw_html, "{line}\n{md}");
    }
    // What was said is all there: the reason escaped, the reply whole in its fence.
    assert!(
        md.contains(r"**failed**: Error: \<script\>alert(1)\</script\>"),
        "{md}"
    );
    assert!(md.contains(&format!("````text\n{REPLY}\n````\n")), "{md}");
}

#[test]
fn the_html_transcript_stays_escaped_and_the_json_one_holds_the_texts_as_they_are() {
    let dir = chatted();
    let html = stdout(&agent_chatter(
        dir.path(),
        &["export", "1", "--format", "html"],
    ));
    assert!(!html.contains("<script"), "{html}");
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{html}"
    );
    assert!(!html.contains("<h2>#5"), "{html}");
    let json: serde_json::Value = serde_json::from_str(&stdout(&agent_chatter(
        dir.path(),
        &["export", "1", "--format", "json"],
    )))
    .unwrap();
    assert_eq!(json["team"]["name"], TEAM);
    assert_eq!(json["messages"][1]["text"], REPLY);
    assert!(json["messages"][2]["outcome"]["reason"]
        .as_str()
        .unwrap()
        .starts_with(STDERR));
}

#[test]
fn export_o_creates_an_owner_only_file() {
    let dir = chatted();
    let file = dir.path().join("transcript.md");
    let out = agent_chatter(dir.path(), &["export", "1", "-o", file.to_str().unwrap()]);
    assert!(stdout(&out).is_empty());
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{mode:o}");
    assert!(std::fs::read_to_string(&file)
        .unwrap()
        .starts_with("# Transcript: relay"));
}

#[test]
fn export_o_refuses_a_symbolic_link_and_any_file_that_is_not_a_regular_one() {
    let dir = chatted();
    let d = dir.path();
    let secret = d.join("secret");
    std::fs::write(&secret, "keep me").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::os::unix::fs::symlink(&secret, d.join("link.md")).unwrap();
    let fifo = std::ffi::CString::new(d.join("fifo.md").to_str().unwrap()).unwrap();
    // SAFETY: mkfifo reads the NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    std::fs::create_dir(d.join("dir.md")).unwrap();
    // (the name given to -o, what the refusal says)
    let cases = [
        ("link.md", "is a symbolic link"),
        ("fifo.md", "is a FIFO"),
        ("dir.md", "is a directory"),
    ];
    for (name, says) in cases {
        let target = d.join(name);
        let out = agent_chatter(d, &["export", "1", "-o", target.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        assert!(err.contains(says), "{name}: {err}");
    }
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "keep me");
    let mode = std::fs::metadata(&secret).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

/// Every file in `d`: its name, a digest of its bytes, its mode and modification time.
fn snapshot(d: &Path) -> Vec<(String, u64, u32, std::time::SystemTime)> {
    use std::hash::{Hash, Hasher};
    let mut files: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let mut digest = std::collections::hash_map::DefaultHasher::new();
            if meta.is_file() {
                std::fs::read(&path).unwrap().hash(&mut digest);
            }
            (
                path.file_name().unwrap().to_string_lossy().into_owned(),
                digest.finish(),
                meta.permissions().mode(),
                meta.modified().unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}

#[test]
fn export_and_sessions_read_a_read_only_database_and_write_nothing() {
    let dir = chatted();
    let d = dir.path();
    let db = d.join("chat.db");
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o444)).unwrap();
    let before = snapshot(d);
    let md = stdout(&agent_chatter(d, &["export", "1"]));
    assert!(md.starts_with("# Transcript: relay"), "{md}");
    let listed = stdout(&agent_chatter(d, &["sessions"]));
    assert!(listed.starts_with("1  relay"), "{listed}");
    let found = stdout(&agent_chatter(d, &["sessions", "--search", "plan"]));
    assert!(found.starts_with("1  relay"), "{found}");
    let kept = agent_chatter(d, &["outputs", "1"]);
    assert!(
        kept.status.success(),
        "{}",
        String::from_utf8_lossy(&kept.stderr)
    );
    assert_eq!(snapshot(d), before, "the directory changed");
}

#[test]
fn export_and_sessions_refuse_a_link_or_a_foreign_file_as_the_bridge_does() {
    let dir = chatted();
    let d = dir.path();
    let real = d.join("real.db");
    std::fs::rename(d.join("chat.db"), &real).unwrap();
    std::os::unix::fs::symlink(&real, d.join("chat.db")).unwrap();
    let foreign = tempfile::tempdir().unwrap();
    let other = rusqlite::Connection::open(foreign.path().join("chat.db")).unwrap();
    other
        .execute_batch("PRAGMA application_id = 7; CREATE TABLE sessions (id INTEGER);")
        .unwrap();
    drop(other);
    // (database directory, what the refusal says)
    let cases = [
        (d, "is a symbolic link"),
        (foreign.path(), "not an agent-chatter session database"),
    ];
    for (dir, says) in cases {
        let before = snapshot(dir);
        for args in [&["export", "1"][..], &["sessions"]] {
            let out = agent_chatter(dir, args);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
            assert!(err.contains(says), "{args:?}: {err}");
        }
        assert_eq!(snapshot(dir), before, "{says}: the directory changed");
    }
}
