//! An ACP agent in `agent-chatter chat` and in its transcript (docs/architecture.md §14d): its tool calls show
//! as lines, its question shows with how to answer it, `/allow` answers it, and `export` shows
//! the tool call and the decision after the run's reply (md, html, json).

mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::json;
use support::{chat_command, team, Bridge};

/// A chat directory whose max is the ACP fixture agent in scenario `ask` (it asks to write
/// hello.txt in its baseDir), and that baseDir.
fn acp_dir() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = Bridge::new_dir(&json!({}), "claude-settings.sh");
    let work = dir.path().join("max-work");
    std::fs::create_dir_all(&work).unwrap();
    let mut team = team(Some(30_000));
    team["members"][1]["baseDir"] = json!(work.display().to_string());
    std::fs::write(dir.path().join("team.json"), team.to_string()).unwrap();
    let agents = json!({"agents": {"max": {
        "protocol": "acp",
        "command": support::fixture("acp-agent.mjs").display().to_string(),
        "args": ["ask", dir.path().join("acp.log").display().to_string()],
    }}});
    std::fs::write(dir.path().join("agents.json"), agents.to_string()).unwrap();
    (dir, work)
}

/// Chats in `dir`: asks max, then answers its question with `answer` once the chat shows it.
/// Returns (stdout, stderr).
fn chat_answering(dir: &tempfile::TempDir, answer: &str) -> (String, String) {
    let mut child = chat_command(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"[NEXT: max] please write it\n").unwrap();
    let stdout = child.stdout.take().unwrap();
    let (lines_tx, lines_rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let _ = lines_tx.send(line.clone());
            all += &line;
            all += "\n";
        }
        all
    });
    // The answer is typed once the question is on the screen, as a person would.
    let asked = loop {
        match lines_rx.recv_timeout(Duration::from_secs(30)) {
            Ok(line) if line.contains("answer with") => break true,
            Ok(_) => {}
            Err(_) => break false,
        }
    };
    if asked {
        stdin.write_all(format!("{answer}\n").as_bytes()).unwrap();
    }
    drop(stdin);
    let mut stderr = String::new();
    use std::io::Read;
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    let out = reader.join().unwrap();
    assert!(asked, "the question never showed:\n{out}\n{stderr}");
    assert!(status.success(), "{out}\n{stderr}");
    (out, stderr)
}

#[test]
fn allow_in_the_chat_answers_the_agents_question_and_the_file_is_written() {
    let (dir, work) = acp_dir();
    let (out, err) = chat_answering(&dir, "/allow");
    assert!(
        out.contains("  ⚙ max: Write hello.txt (edit)"),
        "{out}\n{err}"
    );
    assert!(
        out.contains("? max asks to run: Write hello.txt (edit)"),
        "{out}"
    );
    assert!(
        out.contains("  options: Allow, Always allow, Reject"),
        "{out}"
    );
    assert!(
        out.contains("  answer with /allow, /allow always, /deny"),
        "{out}"
    );
    assert!(
        out.contains("Allow, decided by you, in the chat"),
        "{out}\n{err}"
    );
    assert!(out.contains("→ max (AI): wrote hello.txt"), "{out}\n{err}");
    assert_eq!(
        std::fs::read_to_string(work.join("hello.txt")).unwrap(),
        "hello\n"
    );
}

#[test]
fn deny_in_the_chat_refuses_and_the_failed_tool_call_is_told() {
    let (dir, work) = acp_dir();
    let (out, err) = chat_answering(&dir, "/deny");
    assert!(out.contains("Reject, decided by you, in the chat"), "{out}");
    assert!(err.contains("  ✗ max: Write hello.txt failed"), "{err}");
    assert!(out.contains("not allowed (reject)"), "{out}");
    assert!(!work.join("hello.txt").exists());
}

#[test]
fn an_answer_with_no_question_open_says_so() {
    let (dir, _) = acp_dir();
    let out = chat_command(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            c.stdin.take().unwrap().write_all(b"/allow\n/help\n")?;
            c.wait_with_output()
        })
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        err.contains("Error: No agent is asking for approval"),
        "{err}"
    );
    assert!(help.contains("/allow always - "), "{help}");
}

fn export(dir: &tempfile::TempDir, format: &str) -> String {
    let out = Command::new(support::bin())
        .args(["export", "1", "--format", format, "--db"])
        .arg(dir.path().join("chat.db"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_transcript_shows_the_tool_call_and_the_decision_after_the_reply() {
    let (dir, work) = acp_dir();
    chat_answering(&dir, "/allow");
    let file = work.join("hello.txt").display().to_string();

    let md = export(&dir, "md");
    let reply = md.find("wrote hello.txt").expect(&md);
    let activity = md.find("\nActivity:\n").expect(&md);
    assert!(activity > reply, "after the reply:\n{md}");
    let md_file = agent_chatter::transcript::markdown_inline(&file);
    assert!(
        md.contains(&format!(
            "- tool: Write hello.txt (edit, done; files: {md_file}; +1 −0)"
        )),
        "{md}"
    );
    assert!(
        md.contains(&format!(
            "- approval: Write hello.txt (edit; files: {md_file}; +1 −0) → Allow, by you, in the chat, "
        )) || md.contains("- approval: Write hello.txt (edit) → Allow, by you, in the chat, "),
        "{md}"
    );

    let html = export(&dir, "html");
    assert!(html.contains("<ul class=\"activity\">"), "{html}");
    assert!(
        html.contains("<li class=\"tool\">tool: Write hello.txt (edit, done;"),
        "{html}"
    );
    assert!(
        html.contains("<li class=\"decision\">approval: Write hello.txt"),
        "{html}"
    );
    assert!(html.contains("→ Allow, by you, in the chat, "), "{html}");

    let json: serde_json::Value = serde_json::from_str(&export(&dir, "json")).unwrap();
    let runs = json["activity"].as_array().expect("an activity array");
    assert_eq!(runs.len(), 1, "{json:#}");
    let run = &runs[0];
    assert_eq!(run["message"], "msg-1");
    assert_eq!(run["member"], "max");
    assert_eq!(run["endedIn"], 2);
    let items = run["items"].as_array().unwrap();
    let call = items
        .iter()
        .find(|i| i["type"] == "toolCall")
        .expect("a tool call");
    assert_eq!(call["title"], "Write hello.txt");
    assert_eq!(call["status"], "completed");
    assert_eq!(call["kind"], "edit");
    let decision = items
        .iter()
        .find(|i| i["type"] == "decision")
        .expect("a decision");
    assert_eq!(decision["option"]["name"], "Allow");
    assert_eq!(decision["by"], json!({"kind": "person", "where": "chat"}));
    assert!(decision["at"].as_u64().unwrap() > 0);
}
