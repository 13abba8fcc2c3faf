//! Secrets and paths stay on the machine (docs/architecture.md §14c, issue #45.1): members' run
//! settings and working directories come from the team file, never from the database, and
//! never reach a fact, a frame or the database file.

mod support;

use serde_json::{json, Value};
use support::{human, set_team, Bridge};

/// The test team, max (answered by `claude-settings.sh`, which replies with its arguments, its
/// `AGENT_CHATTER_TEST_VAR` and its working directory) with `var` in its env, a model, and a
/// working directory made in `dir`.
fn team_with_settings(dir: &std::path::Path, var: &str) -> Value {
    let work = dir.join("max-work");
    std::fs::create_dir_all(&work).unwrap();
    let mut team = support::team(None);
    team["members"][1]["env"] = json!({"AGENT_CHATTER_TEST_VAR": var});
    team["members"][1]["model"] = json!("opus-e2e");
    team["members"][1]["baseDir"] = json!(work.display().to_string());
    team
}

/// Every byte the database keeps (the file and its -wal), as text.
fn database_bytes(dir: &std::path::Path) -> String {
    ["sessions.db", "sessions.db-wal"]
        .iter()
        .filter_map(|f| std::fs::read(dir.join(f)).ok())
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .collect()
}

#[tokio::test]
async fn env_values_and_working_directories_never_reach_a_fact_a_frame_or_the_database() {
    let dir = Bridge::new_dir(&json!({}), "claude-settings.sh");
    let secret = "sk-ant-api-secret-45";
    std::fs::write(
        dir.path().join("team.json"),
        team_with_settings(dir.path(), secret).to_string(),
    )
    .unwrap();
    let work = std::fs::canonicalize(dir.path().join("max-work")).unwrap();
    let work = work.display().to_string();
    let bridge = Bridge::start(dir, None);
    // What reaches the page is checked on the frames' text, as sent: raw.
    let mut page = bridge.greeted().await;
    let session = page.until(|e| e["type"] == "session").await.to_string();
    let agents = page.until(|e| e["type"] == "agents").await;
    assert!(
        !session.contains(secret) && !session.contains(&work),
        "{session}"
    );
    assert!(
        !session.contains("opus-e2e"),
        "run settings in the log: {session}"
    );
    // The bridge's own page is shown the settings read only: env names, never values.
    let max = &agents["list"][0];
    assert_eq!(
        max["settings"]["env"],
        json!({"AGENT_CHATTER_TEST_VAR": ""})
    );
    assert_eq!(max["settings"]["model"], "opus-e2e");
    assert_eq!(max["dir"], json!(work));
    assert!(!agents.to_string().contains(secret), "{agents}");
    // A team the page sends with settings of its own: none of them is kept or echoed.
    let mut sent = support::team(None);
    sent["members"][1]["env"] = json!({"PAGE_SECRET": "page-secret-value"});
    sent["members"][1]["baseDir"] = json!("/");
    page.send_command(set_team(&sent)).await;
    let fact = page.until_fact("setTeam").await.to_string();
    assert!(
        !fact.contains("page-secret-value") && !fact.contains("PAGE_SECRET"),
        "{fact}"
    );
    assert!(!fact.contains("baseDir"), "{fact}");
    let dir = bridge.kill();
    let stored = database_bytes(dir.path());
    for value in [secret, work.as_str(), "page-secret-value", "opus-e2e"] {
        assert!(!stored.contains(value), "{value} is in the database file");
    }
}

#[tokio::test]
async fn a_member_renamed_away_and_back_runs_with_its_settings_again() {
    let dir = Bridge::new_dir(&json!({}), "claude-settings.sh");
    std::fs::write(
        dir.path().join("team.json"),
        team_with_settings(dir.path(), "v1").to_string(),
    )
    .unwrap();
    let work = std::fs::canonicalize(dir.path().join("max-work")).unwrap();
    let bridge = Bridge::start(dir, None);
    let (mut page, _) = bridge.join().await;
    for name in ["maxx", "max"] {
        let mut renamed = support::team(None);
        renamed["members"][1]["name"] = json!(name);
        page.send_command(set_team(&renamed)).await;
        page.until_fact_kind("setTeam").await;
    }
    page.send_command(human("[NEXT: max] go")).await;
    let text = page.until_replied().await.text;
    assert!(text.contains("--model,opus-e2e,"), "{text}");
    assert!(text.contains("var=v1 "), "{text}");
    assert!(text.contains(&format!("dir={}", work.display())), "{text}");
}

#[tokio::test]
async fn a_page_team_that_gives_a_member_with_settings_another_cli_is_refused() {
    let dir = Bridge::new_dir(&json!({}), "claude-settings.sh");
    std::fs::write(
        dir.path().join("team.json"),
        team_with_settings(dir.path(), "v1").to_string(),
    )
    .unwrap();
    let bridge = Bridge::start(dir, None);
    let (mut page, _) = bridge.join().await;
    let mut sent = support::team(None);
    sent["members"][1]["agentType"] = json!("gemini");
    page.send_command(set_team(&sent)).await;
    let message = page.until_error().await;
    assert!(
        message.contains("max") && message.contains("claude") && message.contains("gemini"),
        "{message}"
    );
}

#[tokio::test]
async fn a_resumed_session_reads_its_team_file_again_and_says_when_it_changed_or_is_gone() {
    let dir = Bridge::new_dir(&json!({}), "claude-settings.sh");
    let team_file = dir.path().join("team.json");
    std::fs::write(&team_file, team_with_settings(dir.path(), "v1").to_string()).unwrap();
    let dir = Bridge::start(dir, None).kill();

    // Changed: said at start, and the file as it is now is what runs.
    std::fs::write(&team_file, team_with_settings(dir.path(), "v2").to_string()).unwrap();
    let bridge = Bridge::start_logged(dir, Some(1), &[]);
    let stderr = bridge.stderr();
    assert!(
        stderr.contains("team file") && stderr.contains("changed"),
        "{stderr}"
    );
    let (mut page, _) = bridge.join().await;
    page.send_command(human("[NEXT: max] go")).await;
    let text = page.until_replied().await.text;
    assert!(text.contains("var=v2 "), "{text}");
    let dir = bridge.kill();
    // Said once: a restart with the file as it is now says nothing more of it.
    let bridge = Bridge::start_logged(dir, Some(1), &[]);
    let stderr = bridge.stderr();
    assert!(!stderr.contains("changed"), "{stderr}");
    let dir = bridge.kill();

    // Gone: said at start, and max runs with no settings of its own (nothing from the database).
    // (`serve --session` does not read --team: the session's own file is the one gone.)
    std::fs::remove_file(&team_file).unwrap();
    let bridge = Bridge::start_logged(dir, Some(1), &[]);
    let stderr = bridge.stderr();
    assert!(stderr.contains("cannot be read again"), "{stderr}");
    let (mut page, _) = bridge.join().await;
    page.send_command(human("[NEXT: max] again")).await;
    let text = page.until_replied().await.text;
    assert!(
        text.contains("var= ") && !text.contains("opus-e2e"),
        "{text}"
    );
}
