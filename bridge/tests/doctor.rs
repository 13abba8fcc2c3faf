//! `agent-chatter doctor` (docs/architecture.md §14e, issue #42.5): per agent type and member,
//! what would run and whether it can, each problem with its fix; key variables by name only;
//! exit 1 when a member cannot run, 0 when all can.

mod support;

use std::process::Command;

use serde_json::json;
use support::{bin, fixture, Bridge};

fn doctor(d: &std::path::Path, path: &str) -> (Option<i32>, String, String) {
    let out = Command::new(bin())
        .args(["doctor", "--port", "0", "--team"])
        .arg(d.join("team.json"))
        .arg("--agents")
        .arg(d.join("agents.json"))
        .arg("--db")
        .arg(d.join("sessions.db"))
        .env("PATH", path)
        .env("ANTHROPIC_API_KEY", "sk-doctor-secret-value")
        .env_remove("OPENAI_API_KEY")
        .env_remove("CODEX_API_KEY")
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_member_whose_cli_is_missing_is_a_problem_with_its_fix_and_keys_are_named_never_shown() {
    let mut team = support::team(None);
    team["members"][1]["model"] = json!("opus-doctor");
    team["members"][2]["agentType"] = json!("codex");
    let dir = Bridge::new_dir(&team, "claude-settings.sh");
    let d = dir.path();
    // max runs the fixture; sarah is Codex, whose `codex` is not on this PATH.
    let (code, out, err) = doctor(d, "/usr/bin:/bin");
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(
        out.contains(&format!(
            "max (claude-code): runs `{}",
            fixture("claude-settings.sh").display()
        )),
        "{out}"
    );
    assert!(out.contains("--model opus-doctor"), "{out}");
    assert!(out.contains("its settings' flags are known to it"), "{out}");
    assert!(out.contains("sarah (openai-codex): cannot run"), "{out}");
    assert!(
        out.contains(
            "sarah: agent-chatter-test-no-such-codex is not installed (not on PATH); install it"
        ) && out.contains("npm install -g @openai/codex"),
        "{out}"
    );
    assert!(
        out.contains("key variables set: ANTHROPIC_API_KEY"),
        "{out}"
    );
    assert!(!out.contains("sk-doctor-secret-value") && !err.contains("sk-doctor-secret-value"));
    assert!(
        out.contains("database:") && out.contains("not made yet"),
        "{out}"
    );
    assert!(err.contains("1 problem found"), "{err}");
}

#[test]
fn a_team_whose_members_can_all_run_passes() {
    let dir = Bridge::new_dir(&support::team(None), "claude-settings.sh");
    let (code, out, err) = doctor(dir.path(), "/usr/bin:/bin");
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("no problems: every member can run"), "{out}");
}

#[test]
fn a_member_over_acp_is_shown_with_its_protocol_and_approval_rule_and_a_missing_adapter_named() {
    let team = support::team(None);
    let dir = Bridge::new_dir(&team, "claude-settings.sh");
    let d = dir.path();
    let agents = json!({"agents": {
        "max": {"protocol": "acp", "command": fixture("acp-agent.mjs").display().to_string(),
                "approve": "reads", "approvalTimeoutMs": 120000},
        "claude-code": {"protocol": "acp"}
    }});
    std::fs::write(d.join("agents.json"), agents.to_string()).unwrap();
    let (code, out, err) = doctor(d, "/usr/bin:/bin");
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(
        out.contains("max (claude-code): runs `")
            && out.contains(
                "· ACP · approve: reads · an unanswered question is rejected after 120 s"
            ),
        "{out}"
    );
    // The agent type's built-in ACP profile, not installed here: its adapter's package.
    assert!(
        out.contains("claude-code: `claude-agent-acp` · not installed (`npm install -g @agentclientprotocol/claude-agent-acp`) · ACP · approve: ask"),
        "{out}"
    );
}

#[test]
fn an_agents_file_entry_that_looks_misspelt_is_a_problem_and_another_teams_entry_is_listed() {
    let team = support::team(None);
    let dir = Bridge::new_dir(&team, "claude-settings.sh");
    let d = dir.path();
    let command = fixture("claude-settings.sh").display().to_string();
    let agents = json!({"agents": {
        "max": {"command": command},
        "sarha": {"command": command},
        "claude-cod": {"command": command},
        "reviewer-bot": {"command": command}
    }});
    std::fs::write(d.join("agents.json"), agents.to_string()).unwrap();
    let (code, out, err) = doctor(d, "/usr/bin:/bin");
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(
        out.contains("agents file entry `sarha`: used by no member of this team (did you mean member id `sarah`?)"),
        "{out}"
    );
    assert!(
        out.contains("agents file entry `claude-cod`: used by no member of this team (did you mean agent type `claude-code`?)"),
        "{out}"
    );
    assert!(
        out.contains(
            "agents file entry `reviewer-bot`: used by no member of this team (another team's?)"
        ),
        "{out}"
    );
    assert!(
        out.contains("the agents file's entry `sarha` is used by no member of this team; if it is meant for member id `sarah`, rename the entry to that"),
        "{out}"
    );
    assert!(err.contains("2 problems found"), "{err}");
}

/// An ACP member's model is asked of its agent (a session opened, no prompt): one it does not
/// offer is a problem naming member, value and offer.
#[test]
fn an_acp_model_the_agent_does_not_offer_is_a_problem() {
    let mut team = support::team(None);
    team["members"][1]["model"] = json!("gpt-9");
    let dir = Bridge::new_dir(&team, "claude-settings.sh");
    let d = dir.path();
    let agents = json!({"agents": {"max": {
        "protocol": "acp",
        "command": fixture("acp-agent.mjs").display().to_string(),
        "args": ["reply", d.join("acp.log").display().to_string()],
    }}});
    std::fs::write(d.join("agents.json"), agents.to_string()).unwrap();
    let (code, out, err) = doctor(d, &std::env::var("PATH").unwrap());
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(
        out.contains(
            "max: model \"gpt-9\": the agent offers no such model (its models: m-small, \
             m-large): set one the agent offers in the team file, or leave it out"
        ),
        "{out}"
    );
    let log = std::fs::read_to_string(d.join("acp.log")).unwrap();
    assert!(
        log.contains("session/new") && !log.contains("session/prompt"),
        "{log}"
    );
}
