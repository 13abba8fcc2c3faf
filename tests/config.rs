//! Team configs (docs/architecture.md §4, §11): our format, the peer's cli-config 1.1/1.2,
//! validation.

use std::fs;
use std::path::{Path, PathBuf};

use agent_chatter::config::{
    detect_format, join_instruction_lines, load_team, team_from_value, ConfigError, ConfigFormat,
};
use agent_chatter::peer::cli_config::{peer_export_problem, to_peer_config};
use agent_chatter::team::{Member, MemberKind, Team, TeamSettings, DEFAULT_MAX_ROUNDS};
use serde_json::json;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn fixture(rel: &str) -> String {
    let path = fixtures().join(rel);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn json_files(dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(fixtures().join(dir))
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|e| e.map(|e| e.path()).unwrap_or_default())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

fn load_err(json: &str) -> String {
    match load_team(json) {
        Ok(team) => panic!("expected an error, loaded {team:?}"),
        Err(e) => e.to_string(),
    }
}

fn member<'a>(team: &'a Team, id: &str) -> &'a Member {
    team.member(id).unwrap_or_else(|| panic!("no member {id}"))
}

// --- the peer's format ---------------------------------------------------------------------

#[test]
fn every_valid_peer_file_loads() {
    let files = json_files("peer/valid");
    assert_eq!(files.len(), 3, "the peer's valid examples are all here");
    for path in files {
        let text = fs::read_to_string(&path).unwrap_or_default();
        let team = load_team(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(team.members.len() >= 2, "{}", path.display());
    }
}

#[test]
fn full_peer_config_maps_every_member_field() {
    let team = load_team(&fixture("peer/valid/cli-config-full.json")).expect("loads");
    assert_eq!(team.id, "full-team");
    assert_eq!(team.name, "Full Feature Team");
    assert_eq!(team.settings.max_rounds, 50);
    assert_eq!(team.settings.max_agent_response_ms, Some(300_000));

    let claude = member(&team, "claude");
    assert_eq!(claude.name, "claude");
    assert_eq!(claude.display_name, "Claude Code");
    assert_eq!(claude.kind, MemberKind::Ai);
    assert_eq!(claude.agent_type.as_deref(), Some("claude-code"));
    assert_eq!(
        claude.system_instruction.as_deref(),
        Some(
            "You are a helpful coding assistant.\nFollow best practices for code quality.\n\
             Always explain your reasoning."
        )
    );
    assert_eq!(claude.instruction_file.as_deref(), Some("instruction.md"));
    assert_eq!(claude.base_dir.as_deref(), Some("./roles/claude"));
    assert_eq!(
        claude.instruction_file_text, None,
        "reading the file is the host's job"
    );

    let human = member(&team, "human");
    assert_eq!(human.display_name, "Human User");
    assert_eq!(human.kind, MemberKind::Human);
    assert_eq!(human.agent_type, None);
    assert_eq!(
        human.system_instruction.as_deref(),
        Some("You are the project manager, provide decisions and context.")
    );
    assert_eq!(human.base_dir.as_deref(), Some("./roles/human"));
}

#[test]
fn peer_agent_type_claude_is_normalised_and_missing_fields_default() {
    let team = load_team(&fixture("peer/valid/multi-role-demo-config.json")).expect("loads");
    assert_eq!(team.settings.max_rounds, 10);
    assert_eq!(team.settings.max_agent_response_ms, None);
    let ids: Vec<&str> = team.members.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["alice", "bob", "carol", "coordinator"]);
    for id in ["alice", "bob", "carol"] {
        assert_eq!(
            member(&team, id).agent_type.as_deref(),
            Some("claude-code"),
            "{id}"
        );
    }
    let bob = member(&team, "bob");
    assert_eq!(bob.system_instruction, None);
    assert_eq!(bob.base_dir, None);
    assert_eq!(
        bob.instruction_file.as_deref(),
        Some("./teams/multi-role-demo/performance/bob/AGENTS.md")
    );
}

#[test]
fn every_invalid_peer_file_fails_naming_the_field() {
    let cases = [
        (
            "cli-config-ai-missing-agentType.json",
            "team.members[0] (claude): agentType: missing for an AI member",
        ),
        ("cli-config-missing-team.json", "team: missing"),
        (
            "cli-config-single-member.json",
            "team.members: at least 2 members required, found 1",
        ),
        (
            "cli-config-systemInstruction-mixed-array.json",
            "team.members[0].systemInstruction[1]: expected a string, found 123",
        ),
        (
            "cli-config-wrong-schema-version.json",
            "schemaVersion: unsupported \"2.0\", expected 1.1 or 1.2",
        ),
    ];
    let files = json_files("peer/invalid");
    assert_eq!(files.len(), cases.len(), "every invalid example has a case");
    for (file, expected) in cases {
        let message = load_err(&fixture(&format!("peer/invalid/{file}")));
        assert!(
            message.starts_with(expected),
            "{file}: got {message:?}, want {expected:?}"
        );
    }
}

#[test]
fn peer_format_is_detected_by_schema_version_or_team_object() {
    assert_eq!(
        detect_format(&json!({"schemaVersion": "1.2"})),
        ConfigFormat::Peer
    );
    assert_eq!(
        detect_format(&json!({"team": {"members": []}})),
        ConfigFormat::Peer
    );
    assert_eq!(
        detect_format(&json!({"name": "t", "members": []})),
        ConfigFormat::Ours
    );
}

#[test]
fn peer_file_without_schema_version_names_it() {
    let message = load_err(r#"{"team": {"name": "t", "members": []}}"#);
    assert_eq!(message, "schemaVersion: missing");
}

#[test]
fn peer_max_rounds_zero_means_unlimited() {
    let text = fixture("peer/valid/cli-config-minimal.json");
    let mut value: serde_json::Value = serde_json::from_str(&text).expect("json");
    value["maxRounds"] = json!(0);
    let team = team_from_value(&value).expect("loads");
    assert_eq!(
        team.settings.max_rounds,
        agent_chatter::config::UNLIMITED_ROUNDS
    );
    assert_eq!(to_peer_config(&team)["maxRounds"], json!(0));
}

#[test]
fn peer_response_time_below_schema_minimum_is_refused() {
    let text = fixture("peer/valid/cli-config-minimal.json");
    let mut value: serde_json::Value = serde_json::from_str(&text).expect("json");
    value["conversation"] = json!({"maxAgentResponseTime": 500});
    let message = team_from_value(&value).map(|_| ()).unwrap_err().to_string();
    assert_eq!(
        message,
        "conversation.maxAgentResponseTime: 500 ms is below the minimum of 1000 ms"
    );
}

#[test]
fn peer_member_type_must_be_human_or_ai() {
    let text = fixture("peer/valid/cli-config-minimal.json");
    let mut value: serde_json::Value = serde_json::from_str(&text).expect("json");
    value["team"]["members"][1]["type"] = json!("robot");
    let message = team_from_value(&value).map(|_| ()).unwrap_err().to_string();
    assert_eq!(
        message,
        "team.members[1].type: expected \"human\" or \"ai\", found \"robot\""
    );
}

/// `back` (read from an exported peer config) with the `baseDir: "."` the export writes for a
/// member of `original` that had none (the schema requires one) taken out again.
fn unwritten_base_dirs(mut back: Team, original: &Team) -> Team {
    for (member, was) in back.members.iter_mut().zip(&original.members) {
        if was.base_dir.is_none() && member.base_dir.as_deref() == Some(".") {
            member.base_dir = None;
        }
    }
    back
}

#[test]
fn exported_peer_config_reads_back_as_the_same_team() {
    for file in [
        "peer/valid/cli-config-full.json",
        "peer/valid/multi-role-demo-config.json",
    ] {
        let team = load_team(&fixture(file)).expect("loads");
        let exported = to_peer_config(&team);
        let again = team_from_value(&exported).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(unwritten_base_dirs(again, &team), team, "{file}");
    }
}

#[test]
fn exported_peer_config_has_the_schema_required_fields() {
    let team = load_team(&fixture("teams/demo.json")).expect("loads");
    let exported = to_peer_config(&team);
    assert_eq!(exported["schemaVersion"], "1.2");
    assert_eq!(exported["team"]["name"], "demo");
    assert_eq!(exported["team"]["displayName"], "Demo team");
    assert!(exported["team"]["description"].is_string());
    assert_eq!(exported["maxRounds"], 20);
    let members = exported["team"]["members"].as_array().expect("members");
    assert_eq!(members.len(), 4);
    // TeamMemberConfig's `required` in tests/fixtures/peer/cli-config-v1.2.schema.json.
    for m in members {
        for key in [
            "displayName",
            "name",
            "role",
            "type",
            "baseDir",
            "systemInstruction",
        ] {
            assert!(m[key].is_string(), "{key} in {m}");
        }
    }
    assert_eq!(members[1]["agentType"], "claude-code");
    assert_eq!(members[2]["windowSize"], 3);
    assert!(members[0].get("agentType").is_none());
}

#[test]
fn our_team_survives_the_peer_format_except_team_settings() {
    let mut team = load_team(&fixture("teams/demo.json")).expect("loads");
    team.settings.max_agent_response_ms = Some(60_000);
    let again = unwritten_base_dirs(
        team_from_value(&to_peer_config(&team)).expect("loads"),
        &team,
    );
    let expected_settings = TeamSettings {
        max_rounds: 20,
        max_agent_response_ms: Some(60_000),
        ..TeamSettings::default()
    };
    assert_eq!(again.settings, expected_settings);
    assert_eq!(again.members, team.members);
    assert_eq!((again.id, again.name), (team.id, team.name));
}

// --- our format ----------------------------------------------------------------------------

#[test]
fn our_demo_team_loads_with_normalised_agent_types() {
    let team = load_team(&fixture("teams/demo.json")).expect("loads");
    assert_eq!(team.id, "demo");
    assert_eq!(team.name, "Demo team");
    let types: Vec<Option<&str>> = team
        .members
        .iter()
        .map(|m| m.agent_type.as_deref())
        .collect();
    assert_eq!(
        types,
        [
            None,
            Some("claude-code"),
            Some("openai-codex"),
            Some("google-gemini")
        ]
    );
    assert_eq!(
        member(&team, "max").system_instruction.as_deref(),
        Some("You are Max, the architect.\nAnswer briefly.")
    );
    let sarah = member(&team, "sarah");
    assert_eq!(sarah.window_size, Some(3));
    assert_eq!(sarah.instruction_file.as_deref(), Some("AGENTS.md"));
    assert_eq!(team.settings.max_rounds, 20);
}

#[test]
fn our_format_defaults_ids_and_display_names_to_the_name() {
    let team = load_team(r#"{"name": "t", "members": [{"name": "kailai", "kind": "human"}]}"#)
        .expect("loads");
    assert_eq!(team.id, "t");
    let m = &team.members[0];
    assert_eq!(
        (m.id.as_str(), m.display_name.as_str()),
        ("kailai", "kailai")
    );
    assert_eq!(team.settings, TeamSettings::default());
    assert_eq!(team.settings.max_rounds, DEFAULT_MAX_ROUNDS);
}

#[test]
fn our_team_serialized_by_serde_loads_back_identically() {
    let team = load_team(&fixture("teams/demo.json")).expect("loads");
    let text = serde_json::to_string(&team).expect("serializes");
    assert_eq!(load_team(&text).expect("loads"), team);
    let via_serde: Team = serde_json::from_str(&text).expect("serde reads it");
    assert_eq!(via_serde, team);
}

#[test]
fn system_instruction_lines_are_joined_blank_dropped_trimmed() {
    let cases: [(&[&str], Option<&str>); 6] = [
        (&["a", "b"], Some("a\nb")),
        (&["a", "", "  ", "b"], Some("a\nb")),
        (&["  indented", "next"], Some("indented\nnext")),
        (&["first", "  kept indent"], Some("first\n  kept indent")),
        (&["", " "], None),
        (&[], None),
    ];
    for (lines, expected) in cases {
        assert_eq!(
            join_instruction_lines(lines.iter().copied()).as_deref(),
            expected,
            "{lines:?}"
        );
    }
}

#[test]
fn system_instruction_as_string_array_or_null_through_serde() {
    let cases = [
        (json!("  one  "), Some("one")),
        (json!(["one", "", "two"]), Some("one\ntwo")),
        (json!(""), None),
        (json!([]), None),
        (json!(null), None),
    ];
    for (value, expected) in cases {
        let m = json!({"id": "a", "name": "a", "displayName": "A", "kind": "ai",
                       "agentType": "claude-code", "systemInstruction": value});
        let member: Member = serde_json::from_value(m).expect("serde reads it");
        assert_eq!(member.system_instruction.as_deref(), expected, "{value}");
        let mut team_json = json!({"name": "t", "members": [{"name": "k", "kind": "human"}]});
        team_json["members"][0]["systemInstruction"] = value.clone();
        let team = team_from_value(&team_json).expect("loads");
        assert_eq!(
            team.members[0].system_instruction.as_deref(),
            expected,
            "{value}"
        );
    }
}

#[test]
fn system_instruction_of_another_type_is_refused() {
    let message =
        load_err(r#"{"members": [{"name": "k", "kind": "human", "systemInstruction": 7}]}"#);
    assert_eq!(
        message,
        "members[0].systemInstruction: expected a string or an array of strings, found 7"
    );
}

// --- validation ----------------------------------------------------------------------------

#[test]
fn bad_team_files_fail_naming_member_and_field() {
    let cases = [
        (
            "team-ai-only.json",
            "members: no human member; a team needs at least one, because the first message must come from a human",
        ),
        (
            "team-duplicate-ids.json",
            "members[2] (maxine): id: duplicate \"max\", already used by members[1] (max)",
        ),
        (
            "team-duplicate-names.json",
            "members[1] (mary_ann): name: \"mary_ann\" is the same as the name of members[0] (Mary Ann)",
        ),
        (
            "team-reserved-system.json",
            "members[1] (System): name: \"system\" is reserved for system notices, choose another",
        ),
        (
            "team-ai-without-agent-type.json",
            "members[2] (max): agentType: missing for an AI member",
        ),
        (
            "team-invalid-json.json",
            "invalid JSON at line 5, column 64: a comma before the closing bracket (JSON allows no trailing comma)",
        ),
        ("team-zero-budget.json", "settings.maxBytes: must be greater than 0"),
    ];
    for (file, expected) in cases {
        let message = load_err(&fixture(&format!("bad/{file}")));
        assert!(
            message.starts_with(expected),
            "{file}: got {message:?}, want {expected:?}"
        );
    }
}

#[test]
fn invalid_json_error_carries_line_and_column() {
    match load_team("{\n  \"name\": \"t\",\n  \"members\": [\n}") {
        Err(ConfigError::Syntax(e)) => assert_eq!((e.line, e.column), (4, 1)),
        other => panic!("expected a syntax error, got {other:?}"),
    }
}

#[test]
fn missing_and_mistyped_member_fields_name_the_path() {
    let cases = [
        (
            r#"{"members": [{"kind": "human"}]}"#,
            "members[0].name: missing",
        ),
        (
            r#"{"members": [{"name": "k"}]}"#,
            "members[0].kind: missing",
        ),
        (
            r#"{"members": [{"name": "k", "kind": 1}]}"#,
            "members[0].kind: expected a string, found 1",
        ),
        (
            r#"{"members": {}}"#,
            "members: expected an array, found an object",
        ),
        (r#"{"name": "t"}"#, "members: missing"),
        (r#"[]"#, "(top level): expected an object, found an array"),
        (
            r#"{"members": [{"name": "k", "kind": "human", "windowSize": -1}]}"#,
            "members[0].windowSize: expected a non-negative integer, found -1",
        ),
        (
            r#"{"members": [{"name": "k", "kind": "human"}], "settings": {"delivery": "fast"}}"#,
            "settings.delivery: expected \"latest\" or \"parent\", found \"fast\"",
        ),
        (
            r#"{"members": [{"name": "k", "kind": "human"}], "settings": {"maxRounds": 0}}"#,
            "settings.maxRounds: must be at least 1",
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(load_err(text), expected, "{text}");
    }
}

#[test]
fn window_size_zero_is_a_valid_setting() {
    let team = load_team(
        r#"{"members": [{"name": "k", "kind": "human"}], "settings": {"windowSize": 0}}"#,
    )
    .expect("loads");
    assert_eq!(team.settings.window_size, 0);
}

#[test]
fn member_with_reserved_id_is_refused() {
    let message =
        load_err(r#"{"members": [{"id": "system", "name": "sys admin", "kind": "human"}]}"#);
    assert_eq!(
        message,
        "members[0] (sys admin): id: \"system\" is reserved for system notices, choose another"
    );
}

#[test]
fn validate_checks_teams_built_in_code() {
    let mut team = load_team(&fixture("teams/demo.json")).expect("loads");
    assert_eq!(team.validate(), Ok(()));
    team.members[1].agent_type = None;
    assert_eq!(
        team.validate().map_err(|e| e.to_string()),
        Err("members[1] (max): agentType: missing for an AI member (e.g. \"claude-code\", \"openai-codex\", \"google-gemini\")".to_string())
    );
}

/// Regression (fuzz target team_config): a team with one member loads in our format, but the
/// peer's cli-config needs two, so exporting it is refused with a reason instead of writing a
/// file no reader accepts.
#[test]
fn a_lone_member_team_is_not_exported_to_the_peer_format() {
    let text = include_str!("fixtures/fuzz/team_config-lone-human.json");
    let team = agent_chatter::config::load_team(text).expect("ours allows a lone human");
    let problem = peer_export_problem(&team).expect("refused");
    assert!(
        problem.starts_with("the peer's cli-config needs at least 2 members and this team has 1"),
        "{problem}"
    );
    let demo = agent_chatter::demo::team();
    assert_eq!(peer_export_problem(&demo), None);
}

/// Editors on Windows save JSON with a byte order mark; every reader of a user's JSON text
/// reads such a file as it reads the same file without one (RFC 8259 §8.1).
#[test]
fn a_leading_byte_order_mark_is_ignored_by_every_text_reader() {
    let bom = |text: &str| format!("\u{feff}{text}");
    let team = fixture("teams/demo.json");
    assert_eq!(load_team(&bom(&team)).unwrap(), load_team(&team).unwrap());

    let scenario = fixture("scenarios/demo.json");
    assert_eq!(
        agent_chatter::scenario::load_scenario(&bom(&scenario)).unwrap(),
        agent_chatter::scenario::load_scenario(&scenario).unwrap()
    );

    let snapshot = fixture("snapshots/ours-v1.json");
    assert_eq!(
        agent_chatter::snapshot::Snapshot::from_json(&bom(&snapshot)).unwrap(),
        agent_chatter::snapshot::Snapshot::from_json(&snapshot).unwrap()
    );

    let mut session = agent_chatter::session::Session::new();
    session
        .apply(&agent_chatter::session::Fact::set_team(
            load_team(&team).unwrap(),
        ))
        .unwrap();
    let file = session.export();
    assert_eq!(
        agent_chatter::session::Session::import(&bom(&file))
            .unwrap()
            .export(),
        file
    );
}

#[test]
fn a_key_of_ours_written_another_way_is_refused_naming_the_key_meant() {
    let member = |extra: serde_json::Value| {
        let mut m = json!({"name": "max", "kind": "ai", "agentType": "codex"});
        m.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        m
    };
    let human = json!({"name": "kailai", "kind": "human"});
    let cases = [
        (
            json!({"name": "t", "members": [human, member(json!({}))], "settings": {"windowsize": 0}}),
            r#"settings.windowsize: not a key here; did you mean "windowSize"?"#,
        ),
        (
            json!({"name": "t", "members": [human, member(json!({"system_instruction": "Be brief."}))]}),
            r#"members[1].system_instruction: not a key here; did you mean "systemInstruction"?"#,
        ),
        (
            json!({"Name": "t", "members": [human, member(json!({}))]}),
            r#"Name: not a key here; did you mean "name"?"#,
        ),
        // Misspelt by one letter: the member would run with default permissions, unsaid.
        (
            json!({"name": "t", "members": [human, member(json!({"permisionMode": "edit"}))]}),
            r#"members[1].permisionMode: not a key here; did you mean "permissionMode"?"#,
        ),
        (
            json!({"name": "t", "members": [human, member(json!({"systemInstructions": "Be brief."}))]}),
            r#"members[1].systemInstructions: not a key here; did you mean "systemInstruction"?"#,
        ),
        (
            json!({"name": "t", "members": [human, member(json!({}))], "setting": {"maxBytes": 9}}),
            r#"setting: not a key here; did you mean "settings"?"#,
        ),
        (
            json!({"name": "t", "members": [human, member(json!({}))], "settings": {"maxCostUds": 1}}),
            r#"settings.maxCostUds: not a key here; did you mean "maxCostUsd"?"#,
        ),
    ];
    for (config, expected) in cases {
        assert!(
            load_err(&config.to_string()).ends_with(expected),
            "{config}: {}",
            load_err(&config.to_string())
        );
    }
    // Keys that are no key of ours stay ignored, as before.
    // A short key of the user's own one letter from ours (`mode`, `model`) is theirs.
    let extra = json!({"name": "t", "members": [human, member(json!({"color": "blue", "mode": "x"}))], "notes": "x"});
    assert!(load_team(&extra.to_string()).is_ok());
}

#[test]
fn the_peers_format_keeps_ignoring_unknown_keys_as_the_peer_does() {
    let peer = json!({"schemaVersion": "1.2", "team": {"name": "t", "members": [
        {"name": "kailai", "type": "human", "displayname": "K"},
        {"name": "max", "type": "ai", "agentType": "claude", "system_instruction": "x"}]}});
    assert!(load_team(&peer.to_string()).is_ok());
}

#[test]
fn run_settings_are_read_with_the_member() {
    let team = load_team(
        r#"{"name": "t", "members": [
        {"name": "kailai", "kind": "human"},
        {"name": "max", "kind": "ai", "agentType": "claude",
         "env": {"ANTHROPIC_LOG": "debug", "_X1": ""}, "additionalArgs": ["--max-turns", "3"],
         "model": "claude-sonnet-4", "permissionMode": "readOnly", "timeoutMs": 60000}],
        "settings": {"maxCostUsd": 2.5}}"#,
    )
    .expect("valid");
    let run = &member(&team, "max").run;
    assert_eq!(
        run.env.get("ANTHROPIC_LOG").map(String::as_str),
        Some("debug")
    );
    assert_eq!(run.additional_args, ["--max-turns", "3"]);
    assert_eq!(run.model.as_deref(), Some("claude-sonnet-4"));
    assert_eq!(
        run.permission_mode,
        Some(agent_chatter::team::PermissionMode::ReadOnly)
    );
    assert_eq!(run.timeout_ms, Some(60_000));
    assert_eq!(team.settings.max_cost_usd.map(|c| c.dollars()), Some(2.5));
    // Written back, read back: the same team.
    let again: Team = serde_json::from_str(&serde_json::to_string(&team).unwrap()).unwrap();
    assert_eq!(again, team);
}

#[test]
fn bad_run_settings_name_the_member_and_the_field() {
    let with = |member: &str, settings: &str| {
        load_err(&format!(
            r#"{{"name": "t", "members": [{{"name": "kailai", "kind": "human"}},
            {{"name": "max", "kind": "ai", "agentType": "claude", {member}}}],
            "settings": {{{settings}}}}}"#
        ))
    };
    let cases = [
        (
            with(r#""permissionMode": "yolo""#, ""),
            r#"members[1].permissionMode: expected "readOnly", "edit" or "full", found "yolo""#,
        ),
        (
            with(r#""env": {"1BAD": "x"}"#, ""),
            r#"members[1].env.1BAD: "1BAD" is not an environment variable name"#,
        ),
        (
            with(r#""env": {"A-B": "x"}"#, ""),
            r#"members[1].env.A-B: "A-B" is not an environment variable name"#,
        ),
        (
            with(r#""env": {"A": 1}"#, ""),
            "members[1].env.A: expected a string, found 1",
        ),
        (
            with(r#""additionalArgs": ["-v", 2]"#, ""),
            "members[1].additionalArgs[1]: expected a string, found 2",
        ),
        (with(r#""model": " ""#, ""), "members[1].model: empty"),
        (
            with(r#""timeoutMs": 0"#, ""),
            "members[1].timeoutMs: must be greater than 0",
        ),
        (
            with(r#""agentType": "claude""#, r#""maxCostUsd": 0"#),
            "settings.maxCostUsd: must be more than 0 dollars, found 0",
        ),
        (
            with(r#""agentType": "claude""#, r#""maxCostUsd": -3"#),
            "settings.maxCostUsd: must be more than 0 dollars, found -3",
        ),
    ];
    for (message, want) in cases {
        assert!(message.starts_with(want), "got {message:?}, want {want:?}");
    }
}

#[test]
fn extra_sections_are_read_with_the_member_and_reach_its_prompt() {
    let text = r#"{"name": "t", "members": [
        {"name": "kailai", "kind": "human"},
        {"name": "max", "kind": "ai", "agentType": "codex", "extraSections": [
            {"name": "plan", "content": "1. parse 2. test", "priority": 2, "compactable": true},
            {"name": "memory", "content": "Kailai prefers small PRs"}]}]}"#;
    let team = load_team(text).expect("valid");
    let max = member(&team, "max");
    assert_eq!(max.extra_sections.len(), 2);
    assert_eq!(
        (
            max.extra_sections[0].priority,
            max.extra_sections[0].compactable
        ),
        (2, true)
    );
    assert_eq!(
        (
            max.extra_sections[1].priority,
            max.extra_sections[1].compactable
        ),
        (0, false)
    );
    // Carried by serde (setTeam facts, session files, scenarios) and read back the same.
    let again: Team = serde_json::from_str(&serde_json::to_string(&team).unwrap()).unwrap();
    assert_eq!(again, team);
    // The peer's format names them too: never silently ignored there either.
    let peer = r#"{"schemaVersion": "1.2", "team": {"name": "t", "description": "", "members": [
        {"name": "kailai", "displayName": "K", "role": "r", "type": "human", "baseDir": ".", "systemInstruction": ""},
        {"name": "max", "displayName": "M", "role": "r", "type": "ai", "agentType": "codex", "baseDir": ".", "systemInstruction": "",
         "extraSections": [{"name": "plan", "content": "x"}]}]}}"#;
    let team = load_team(peer).expect("valid peer config");
    assert_eq!(member(&team, "max").extra_sections[0].name, "plan");
}

#[test]
fn a_bad_extra_section_is_refused_naming_its_path() {
    let with = |sections: &str| {
        load_err(&format!(
            r#"{{"name": "t", "members": [{{"name": "kailai", "kind": "human"}},
            {{"name": "max", "kind": "ai", "agentType": "codex", "extraSections": {sections}}}]}}"#
        ))
    };
    for (sections, want) in [
        (
            r#"[{"name": "plan", "content": "x", "compactible": true}]"#,
            r#"members[1].extraSections[0].compactible: not a key here (expected "name", "content", "priority" or "compactable")"#,
        ),
        (
            r#"[{"content": "x"}]"#,
            "members[1].extraSections[0].name: missing",
        ),
        (
            r#"[{"name": "plan"}]"#,
            "members[1].extraSections[0].content: missing",
        ),
        (
            r#"[{"name": "p", "content": "x", "priority": 1.5}]"#,
            "members[1].extraSections[0].priority: expected a whole number, found 1.5",
        ),
        (
            r#"[{"name": "p", "content": "x"}, {"name": "p", "content": "y"}]"#,
            r#"members[1].extraSections[1].name: duplicate "p""#,
        ),
        (
            r#"{"name": "p"}"#,
            "members[1].extraSections: expected an array",
        ),
    ] {
        let message = with(sections);
        assert!(message.starts_with(want), "got {message:?}, want {want:?}");
    }
}
