//! Agents over ACP (docs/architecture.md §14d, issue #41) against the test's own ACP agent
//! (`fixtures/agents/acp-agent.mjs`, run by Node): exact bytes, activity, approvals by a
//! person, a rule and the timeout, usage and the context fill, and every way a run ends.

mod support;

use std::path::{Path, PathBuf};

use agent_chatter::activity::{Activity, DecidedBy, ToolKind, ToolStatus};
use agent_chatter::protocol::{Command, Event};
use agent_chatter::session::Failure;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use support::{cancel, human, Bridge, Client};

/// A bridge whose `max` (claude-code) is the fixture agent over ACP playing `scenario`, with
/// `entry` added to its agents-file entry and `member` to its team member; the fixture's log
/// and working directory are in the bridge's directory.
struct Lab {
    bridge: Bridge,
    log: PathBuf,
    work: PathBuf,
}

fn lab(scenario: &str, entry: Value, member: Value, timeout_ms: u64) -> Lab {
    let (dir, log, work) = lab_dir(scenario, entry, member, timeout_ms);
    Lab {
        bridge: Bridge::start(dir, None),
        log,
        work,
    }
}

/// [`lab`]'s directory, its fixture's log and working directory, before any bridge starts.
fn lab_dir(
    scenario: &str,
    entry: Value,
    member: Value,
    timeout_ms: u64,
) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = Bridge::new_dir(&json!({}), "claude-settings.sh");
    let log = dir.path().join("acp.log");
    let work = dir.path().join("max-work");
    std::fs::create_dir_all(&work).unwrap();
    let mut team = support::team(Some(timeout_ms));
    team["members"][1]["baseDir"] = json!(work.display().to_string());
    for (k, v) in member.as_object().unwrap() {
        team["members"][1][k] = v.clone();
    }
    std::fs::write(dir.path().join("team.json"), team.to_string()).unwrap();
    let mut max = json!({
        "protocol": "acp",
        "command": support::fixture("acp-agent.mjs").display().to_string(),
        "args": [scenario, log.display().to_string()],
    });
    for (k, v) in entry.as_object().unwrap() {
        max[k] = v.clone();
    }
    let agents = json!({"agents": {"max": max}});
    std::fs::write(dir.path().join("agents.json"), agents.to_string()).unwrap();
    let work = std::fs::canonicalize(&work).unwrap();
    (dir, log, work)
}

fn plain(scenario: &str) -> Lab {
    lab(scenario, json!({}), json!({}), 20_000)
}

/// The messages the fixture received, in order.
fn received(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The fixture's process id (the first line of its log), once it has started.
async fn fixture_pid(log: &Path) -> u32 {
    for _ in 0..600 {
        if let Some(pid) = received(log).first().and_then(|l| l["pid"].as_u64()) {
            return pid as u32;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the fixture never started");
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(") ")
            .next()
            .is_some_and(|s| !s.starts_with('Z'))
    })
}

/// Waits (30 s at most) until `pid` is gone.
async fn gone(pid: u32) -> bool {
    for _ in 0..600 {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    false
}

fn request<'a>(log: &'a [Value], method: &str) -> Option<&'a Value> {
    log.iter().find(|m| m["method"] == method)
}

async fn ask_max(lab: &Lab) -> Client {
    let (mut page, _) = lab.bridge.join().await;
    page.send_command(human("[NEXT: max] please do it")).await;
    page
}

#[tokio::test]
async fn the_prompt_and_system_part_reach_the_agent_exactly_as_the_digest_says() {
    let lab = plain("reply");
    let mut page = ask_max(&lab).await;
    let Event::Delivering { prompt_sha256, .. } = page.wait_for(support::is_delivering).await
    else {
        unreachable!()
    };
    let replied = page.until_replied().await;
    assert_eq!(replied.text, "done [NEXT: kailai]");
    let log = received(&lab.log);
    let new = request(&log, "session/new").expect("session/new");
    assert_eq!(new["params"]["cwd"], json!(lab.work.display().to_string()));
    assert_eq!(new["params"]["mcpServers"], json!([]));
    assert_eq!(new["params"]["systemPrompt"]["mode"], "append");
    let system = new["params"]["systemPrompt"]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(system.contains("You are Max."), "{system}");
    let prompt = &request(&log, "session/prompt").expect("prompt")["params"]["prompt"];
    assert_eq!(prompt.as_array().unwrap().len(), 1, "one text block");
    let text = prompt[0]["text"].as_str().unwrap();
    let mut sha = Sha256::new();
    sha.update(text.as_bytes());
    sha.update([0u8]);
    sha.update(system.as_bytes());
    let digest: String = sha.finalize().iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(
        digest, prompt_sha256,
        "the digest covers exactly what was sent"
    );
    // No permission mode set: the agent's asking mode, not its own `auto`.
    assert_eq!(
        request(&log, "session/set_mode").unwrap()["params"]["modeId"],
        "default"
    );
    let init = request(&log, "initialize").unwrap();
    assert_eq!(
        init["params"]["clientCapabilities"]["terminal"],
        json!(false)
    );
}

#[tokio::test]
async fn tool_calls_plan_thoughts_and_the_context_fill_stream_and_are_kept_with_the_run() {
    let lab = plain("reply");
    let mut page = ask_max(&lab).await;
    let events = page
        .collect_events_until(|e| matches!(e, Event::Fact { fact, .. } if fact.kind() == "replied"))
        .await;
    let items: Vec<&Activity> = events
        .iter()
        .filter_map(|e| match e {
            Event::Activity { to, item, .. } if to == "max" => Some(item),
            _ => None,
        })
        .collect();
    assert!(items
        .iter()
        .any(|i| matches!(i, Activity::Thought { text } if text == "Let me look.")));
    assert!(items
        .iter()
        .any(|i| matches!(i, Activity::Plan { entries } if entries.len() == 1)));
    assert!(items.iter().any(|i| matches!(
        i,
        Activity::Context {
            used: 1200,
            size: 200_000
        }
    )));
    assert!(items.iter().any(|i| matches!(i,
        Activity::ToolCall(c) if c.id == "r1" && c.kind == ToolKind::Read
            && c.status == ToolStatus::Completed && c.files[0].ends_with("README.md"))));
    // Usage: tokens from the prompt's response, the cost from the usage update.
    let usage = events
        .iter()
        .find_map(|e| match e {
            Event::Fact {
                fact: agent_chatter::session::Fact::Replied { usage, .. },
                ..
            } => usage.as_deref().cloned(),
            _ => None,
        })
        .expect("usage");
    // ACP's inputTokens (1 200) leave the cached ones (300) out; ours count them in.
    assert_eq!(usage.input_tokens, Some(1500));
    assert_eq!(usage.cached_tokens, Some(300));
    assert_eq!(usage.output_tokens, Some(100));
    assert_eq!(usage.cost_usd.map(|c| c.dollars()), Some(0.02));
    // A page that comes later is sent the run's activity with the session.
    let mut late = lab.bridge.greeted().await;
    let Event::Session { activity, .. } =
        late.wait_for(|e| matches!(e, Event::Session { .. })).await
    else {
        unreachable!()
    };
    assert_eq!(activity.len(), 1);
    assert_eq!(activity[0].to, "max");
    assert!(activity[0]
        .items
        .iter()
        .any(|i| matches!(i, Activity::ToolCall(c) if c.id == "r1")));
}

/// Activity is kept beside the run, outside the fact log: the next prompt holds the reply, and
/// none of the thought, plan or tool call that came with it (docs/architecture.md §14d).
#[tokio::test]
async fn activity_never_reaches_a_later_prompt() {
    let lab = plain("reply");
    let mut page = ask_max(&lab).await;
    page.until_replied().await;
    page.send_command(human("[FROM: kailai] once more [NEXT: max]"))
        .await;
    page.until_replied().await;
    let log = received(&lab.log);
    let prompts: Vec<&str> = log
        .iter()
        .filter(|m| m["method"] == "session/prompt")
        .map(|m| m["params"]["prompt"][0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(prompts.len(), 2, "{log:?}");
    let later = prompts[1];
    assert!(
        later.contains("done"),
        "the reply is in its history: {later}"
    );
    for activity in [
        "Let me look.",
        "read the file",
        "Read README.md",
        "README.md",
    ] {
        assert!(
            !later.contains(activity),
            "{activity:?} reached the prompt: {later}"
        );
    }
}

/// Waits for max's question and answers it with `option`.
async fn answer(page: &mut Client, option: &str) -> String {
    let Event::Approval { request, to, .. } =
        page.wait_for(|e| matches!(e, Event::Approval { .. })).await
    else {
        unreachable!()
    };
    assert_eq!(to, "max");
    assert_eq!(request.tool_call.title, "Write hello.txt");
    assert_eq!(request.tool_call.kind, ToolKind::Edit);
    let ids: Vec<&str> = request.options.iter().map(|o| o.id.as_str()).collect();
    assert_eq!(ids, ["allow", "always", "reject"]);
    page.send_command(Command::AnswerApproval {
        to: "max".into(),
        request: request.id.clone(),
        option: option.into(),
    })
    .await;
    request.id
}

async fn settled(page: &mut Client) -> (Option<String>, DecidedBy) {
    match page
        .wait_for(|e| matches!(e, Event::ApprovalSettled { .. }))
        .await
    {
        Event::ApprovalSettled { option, by, .. } => (option, by),
        _ => unreachable!(),
    }
}

#[tokio::test]
async fn an_approval_allowed_from_the_page_lets_the_agent_write_and_is_recorded() {
    let lab = plain("ask");
    let mut page = ask_max(&lab).await;
    answer(&mut page, "allow").await;
    let (option, by) = settled(&mut page).await;
    assert_eq!(option.as_deref(), Some("allow"));
    assert_eq!(
        by,
        DecidedBy::Person {
            r#where: "page".into()
        }
    );
    assert_eq!(
        page.until_replied().await.text,
        "wrote hello.txt [NEXT: kailai]"
    );
    assert_eq!(
        std::fs::read_to_string(lab.work.join("hello.txt")).unwrap(),
        "hello\n"
    );
    let mut late = lab.bridge.greeted().await;
    let Event::Session { activity, .. } =
        late.wait_for(|e| matches!(e, Event::Session { .. })).await
    else {
        unreachable!()
    };
    let decision = activity[0]
        .items
        .iter()
        .find_map(|i| match i {
            Activity::Decision(d) => Some(d),
            _ => None,
        })
        .expect("the decision is kept with the run");
    assert_eq!(decision.option.as_ref().unwrap().name, "Allow");
}

#[tokio::test]
async fn an_approval_denied_from_the_page_keeps_the_file_unwritten_and_the_agent_is_told() {
    let lab = plain("ask");
    let mut page = ask_max(&lab).await;
    answer(&mut page, "reject").await;
    assert_eq!(
        page.until_replied().await.text,
        "not allowed (reject) [NEXT: kailai]"
    );
    assert!(!lab.work.join("hello.txt").exists());
}

#[tokio::test]
async fn an_agent_that_ends_its_turn_on_a_refusal_fails_saying_what_was_refused_and_by_whom() {
    let lab = plain("ask_strict");
    let mut page = ask_max(&lab).await;
    answer(&mut page, "reject").await;
    let failed = page.until_failed().await;
    assert_eq!(failed.failure, Some(Failure::AgentError));
    assert_eq!(
        failed.reason,
        "the agent stopped its turn without a reply: \"Write hello.txt\" was refused by you, \
         in the page"
    );
}

#[tokio::test]
async fn an_answer_naming_no_option_of_the_question_is_refused_by_name() {
    let lab = plain("ask");
    let mut page = ask_max(&lab).await;
    let Event::Approval { request, .. } =
        page.wait_for(|e| matches!(e, Event::Approval { .. })).await
    else {
        unreachable!()
    };
    page.send_command(Command::AnswerApproval {
        to: "max".into(),
        request: request.id.clone(),
        option: "yes-please".into(),
    })
    .await;
    let Event::Error { message } = page.wait_for(|e| matches!(e, Event::Error { .. })).await else {
        unreachable!()
    };
    assert!(
        message.contains("no option \"yes-please\"") && message.contains("allow, always, reject"),
        "{message}"
    );
    // The question is still open and can be answered.
    page.send_command(Command::AnswerApproval {
        to: "max".into(),
        request: request.id,
        option: "allow".into(),
    })
    .await;
    assert_eq!(
        page.until_replied().await.text,
        "wrote hello.txt [NEXT: kailai]"
    );
}

#[tokio::test]
async fn an_approval_no_one_answers_is_rejected_at_the_members_timeout() {
    let lab = lab("ask", json!({"approvalTimeoutMs": 300}), json!({}), 20_000);
    let mut page = ask_max(&lab).await;
    let (option, by) = settled(&mut page).await;
    assert_eq!(
        (option.as_deref(), by),
        (Some("reject"), DecidedBy::Timeout)
    );
    assert_eq!(
        page.until_replied().await.text,
        "not allowed (reject) [NEXT: kailai]"
    );
    assert!(!lab.work.join("hello.txt").exists());
}

#[tokio::test]
async fn an_approve_rule_answers_for_the_kinds_it_allows_and_no_one_is_asked() {
    let lab = lab("ask", json!({"approve": "edits"}), json!({}), 20_000);
    let mut page = ask_max(&lab).await;
    let events = page
        .collect_events_until(|e| matches!(e, Event::Fact { fact, .. } if fact.kind() == "replied"))
        .await;
    assert!(!events.iter().any(|e| matches!(e, Event::Approval { .. })));
    let by = events.iter().find_map(|e| match e {
        Event::ApprovalSettled { by, .. } => Some(by.clone()),
        _ => None,
    });
    assert_eq!(
        by,
        Some(DecidedBy::Rule {
            rule: "approve: edits".into()
        })
    );
    assert!(lab.work.join("hello.txt").exists());
}

#[tokio::test]
async fn a_cancel_during_a_question_withdraws_it_and_the_run_ends_cancelled() {
    let lab = plain("ask");
    let mut page = ask_max(&lab).await;
    page.wait_for(|e| matches!(e, Event::Approval { .. })).await;
    page.send_command(cancel("max")).await;
    let (option, by) = settled(&mut page).await;
    assert_eq!((option, by), (None, DecidedBy::RunEnded));
    let failed = page.until_failed().await;
    assert_eq!(failed.failure, Some(Failure::Cancelled));
    assert!(!lab.work.join("hello.txt").exists());
}

#[tokio::test]
async fn mode_and_model_are_set_in_the_session_from_the_members_run_settings() {
    let lab = lab(
        "reply",
        json!({}),
        json!({"permissionMode": "edit", "model": "m-large"}),
        20_000,
    );
    let mut page = ask_max(&lab).await;
    page.until_replied().await;
    let log = received(&lab.log);
    assert_eq!(
        request(&log, "session/set_mode").unwrap()["params"]["modeId"],
        "acceptEdits"
    );
    let set = &request(&log, "session/set_config_option").unwrap()["params"];
    assert_eq!(
        (&set["configId"], &set["value"]),
        (&json!("model"), &json!("m-large"))
    );
}

#[test]
fn a_model_the_agent_does_not_offer_is_an_error_at_start_naming_member_value_and_offer() {
    let (dir, log, _) = lab_dir("reply", json!({}), json!({"model": "gpt-9"}), 20_000);
    let out = support::serve_command(dir.path()).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(out.stdout.is_empty(), "no address printed: {stderr}");
    assert!(
        stderr.contains(
            "max: model \"gpt-9\": the agent offers no such model (its models: m-small, m-large)"
        ),
        "{stderr}"
    );
    // A session was opened to ask, and no prompt sent: nothing reached a model.
    let asked = received(&log);
    assert!(request(&asked, "session/new").is_some(), "{asked:?}");
    assert!(request(&asked, "session/prompt").is_none(), "{asked:?}");
}

/// The same setting refused at the first run: a session resumed from before the agent's
/// models changed is not checked at start, and its run fails naming member, value and offer.
#[tokio::test]
async fn a_model_the_agent_does_not_offer_fails_the_run_naming_member_value_and_offer() {
    let (dir, log, work) = lab_dir("reply", json!({}), json!({}), 20_000);
    let first = Bridge::start(dir, None);
    let (_, opened) = first.join().await;
    let dir = first.kill();
    let team_file = dir.path().join("team.json");
    let mut team: Value =
        serde_json::from_str(&std::fs::read_to_string(&team_file).unwrap()).unwrap();
    team["members"][1]["model"] = json!("gpt-9");
    std::fs::write(&team_file, team.to_string()).unwrap();
    let lab = Lab {
        bridge: Bridge::start(dir, Some(opened.id)),
        log,
        work,
    };
    let mut page = ask_max(&lab).await;
    let failed = page.until_failed().await;
    assert_eq!(failed.failure, Some(Failure::CannotRun));
    assert_eq!(
        failed.reason,
        "max: model \"gpt-9\": the agent offers no such model (its models: m-small, m-large)"
    );
}

#[tokio::test]
async fn a_cancel_the_agent_ignores_stops_its_process_after_the_grace() {
    let lab = plain("deaf");
    let mut page = ask_max(&lab).await;
    page.wait_for(|e| matches!(e, Event::Output { .. })).await;
    let pid = fixture_pid(&lab.log).await;
    page.send_command(cancel("max")).await;
    let failed = page.until_failed().await;
    assert_eq!(failed.failure, Some(Failure::Cancelled));
    assert!(
        received(&lab.log)
            .iter()
            .any(|m| m["method"] == "session/cancel"),
        "session/cancel was sent first"
    );
    assert!(gone(pid).await, "the agent {pid} still runs");
}

#[tokio::test]
async fn a_bridge_killed_with_sigkill_leaves_no_acp_agent_running() {
    let lab = plain("hang");
    let mut page = ask_max(&lab).await;
    page.wait_for(|e| matches!(e, Event::Output { .. })).await;
    let pid = fixture_pid(&lab.log).await;
    assert!(alive(pid));
    let _dir = lab.bridge.kill();
    assert!(gone(pid).await, "the agent {pid} outlived the bridge");
}

/// A tool the adapter started in a session of its own (out of the agent's process group) goes
/// with the bridge too.
#[tokio::test]
async fn a_bridge_killed_with_sigkill_leaves_no_tool_of_an_acp_agent_running() {
    let lab = plain("hang_tool");
    let mut page = ask_max(&lab).await;
    page.wait_for(|e| matches!(e, Event::Output { .. })).await;
    let agent = fixture_pid(&lab.log).await;
    let tool = received(&lab.log)
        .iter()
        .find_map(|l| l["tool"].as_u64())
        .expect("the tool started before the agent said anything") as u32;
    assert!(alive(agent) && alive(tool));
    let _dir = lab.bridge.kill();
    assert!(gone(agent).await, "the agent {agent} outlived the bridge");
    assert!(
        gone(tool).await,
        "the agent's tool {tool} outlived the bridge"
    );
}

/// Each way an ACP run can end, and what the conversation records.
#[tokio::test]
async fn every_stop_reason_and_fault_ends_the_run_as_the_design_says() {
    let table: [(&str, u64, &str, Option<Failure>, &str); 8] = [
        ("max_tokens", 20_000, "replied", None, "output token limit"),
        (
            "max_turn_requests",
            20_000,
            "replied",
            None,
            "limit of model requests",
        ),
        (
            "refusal",
            20_000,
            "failed",
            Some(Failure::AgentError),
            "refused",
        ),
        (
            "crash",
            20_000,
            "failed",
            Some(Failure::Crashed),
            "code 3: Error: the fixture crashed on purpose",
        ),
        (
            "silent",
            1_500,
            "failed",
            Some(Failure::Timeout),
            "never answered initialize",
        ),
        (
            "rpc_error",
            20_000,
            "failed",
            Some(Failure::AgentError),
            "model overloaded, try later",
        ),
        (
            "garbage",
            20_000,
            "failed",
            Some(Failure::AgentError),
            "it printed a line that is not ACP (JSON-RPC): \\\"this is not json-rpc\\\"",
        ),
        (
            "no_system",
            20_000,
            "failed",
            Some(Failure::CannotRun),
            "does not take a system prompt",
        ),
    ];
    for (scenario, timeout, kind, failure, says) in table {
        let lab = lab(scenario, json!({}), json!({}), timeout);
        let mut page = ask_max(&lab).await;
        let Event::Fact { fact, .. } = page
            .wait_for(|e| matches!(e, Event::Fact { fact, .. } if matches!(fact.kind(), "replied" | "failed")))
            .await
        else {
            unreachable!()
        };
        assert_eq!(fact.kind(), kind, "{scenario}: {fact:?}");
        let text = serde_json::to_string(&fact).unwrap();
        assert!(text.contains(says), "{scenario}: {text}");
        // What a crashed agent wrote on stderr is kept as its output, and the reason says so.
        if scenario == "crash" {
            assert!(
                text.contains(
                    "is kept in the session database (`agent-chatter outputs` prints it)"
                ),
                "{scenario}: {text}"
            );
        }
        if let Some(failure) = failure {
            assert!(
                matches!(&fact, agent_chatter::session::Fact::Failed { failure: Some(f), .. } if *f == failure),
                "{scenario}: {fact:?}"
            );
        }
    }
}
