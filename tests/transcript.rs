//! Transcripts (docs/architecture.md §13 "files", §14 `export`): who said what to whom, how each
//! run ended, and the exact prompt of every delivery, as Markdown, HTML and JSON.
//!
//! The golden files (tests/fixtures/transcripts/) are regenerated with
//! `UPDATE_EXPECTED=1 cargo test --test transcript`; review the diff.

use std::path::Path;

use agent_chatter::config::load_team;
use agent_chatter::conversation::Action;
use agent_chatter::message::Millis;
use agent_chatter::scenario::load_scenario;
use agent_chatter::session::{Fact, Failure, PreviewOverrides, Session};
use agent_chatter::transcript::{self, escape_html, fence, Format};
use agent_chatter::usage::{Usage, Usd};
use serde_json::Value;

const T0: u64 = 1_763_900_000_000;

fn crew() -> Session {
    let team = load_team(
        r#"{"id": "crew", "name": "Crew", "members": [
        {"id": "kailai", "name": "kailai", "displayName": "Kailai", "kind": "human"},
        {"id": "max", "name": "max", "displayName": "Max", "kind": "ai", "agentType": "claude",
         "systemInstruction": "You are Max."},
        {"id": "sarah", "name": "sarah", "displayName": "Sarah", "kind": "ai", "agentType": "codex"}
    ]}"#,
    )
    .expect("valid team");
    let mut s = Session::new();
    s.apply(&Fact::set_team(team)).expect("team");
    s
}

/// Applies `fact`, then drops the actions it caused (the tests answer by hand).
fn say(s: &mut Session, fact: Fact) {
    s.apply(&fact).expect("the fact fits");
    while s.poll_action().is_some() {}
}

fn usage() -> Usage {
    Usage {
        input_tokens: Some(1200),
        output_tokens: Some(80),
        cached_tokens: Some(1000),
        cost_usd: Usd::new(0.0031),
        duration_ms: Some(5400),
    }
}

/// Kailai asks Max; Max answers (with usage) and passes to Sarah; Sarah fails; Kailai asks
/// Sarah again; Sarah's reply is marked incomplete.
fn conversation() -> Session {
    let mut s = crew();
    say(
        &mut s,
        Fact::human("Plan the parser [NEXT: max]", Millis(T0)),
    );
    say(
        &mut s,
        Fact::replied(
            "max",
            "Plan ready. [NEXT: sarah, kailai]",
            Millis(T0 + 60_000),
        )
        .with_usage(usage()),
    );
    say(
        &mut s,
        Fact::Failed {
            to: "sarah".into(),
            reason: "codex exited with status 2: rate limited".into(),
            at: Millis(T0 + 120_000),
            failure: Some(Failure::Crashed),
            usage: None,
        },
    );
    say(
        &mut s,
        Fact::human("Sarah, again please [NEXT: sarah]", Millis(T0 + 180_000)),
    );
    say(
        &mut s,
        Fact::Replied {
            to: "sarah".into(),
            text: "Half of it".into(),
            at: Millis(T0 + 240_000),
            incomplete: Some("turn limit reached".into()),
            usage: None,
        },
    );
    s
}

#[test]
fn html_escaping_keeps_every_hostile_string_as_text() {
    let cases = [
        (
            "</details><script>alert(1)</script>",
            "&lt;/details&gt;&lt;script&gt;alert(1)&lt;/script&gt;",
        ),
        ("a & b", "a &amp; b"),
        ("&amp;", "&amp;amp;"),
        (r#"" onmouseover="x"#, "&quot; onmouseover=&quot;x"),
        ("it's", "it&#39;s"),
        ("<!-- -->", "&lt;!-- --&gt;"),
        ("plain text, ünïcode ✓", "plain text, ünïcode ✓"),
        ("", ""),
    ];
    for (text, want) in cases {
        assert_eq!(escape_html(text), want, "{text}");
    }
}

#[test]
fn a_fence_is_longer_than_any_backtick_run_in_its_text() {
    let cases = [
        ("plain", "```text\nplain\n```\n"),
        (
            "ends with a newline\n",
            "```text\nends with a newline\n```\n",
        ),
        ("one ` tick", "```text\none ` tick\n```\n"),
        (
            "a block:\n```\ncode\n```",
            "````text\na block:\n```\ncode\n```\n````\n",
        ),
        ("five `````", "``````text\nfive `````\n``````\n"),
        ("", "```text\n```\n"),
    ];
    for (text, want) in cases {
        assert_eq!(fence(text, "text"), want, "{text:?}");
    }
}

#[test]
fn each_message_says_who_said_it_to_whom() {
    let md = transcript::markdown(&conversation(), None);
    let heads: Vec<&str> = md.lines().filter(|l| l.starts_with("## ")).collect();
    assert_eq!(
        heads,
        [
            "## #1 Kailai → Max",
            "## #2 Max → Sarah, Kailai",
            "## #3 system → all",
            "## #4 Kailai → Sarah",
            "## #5 Sarah → all",
        ]
    );
}

#[test]
fn failed_and_incomplete_runs_show_their_reasons_in_every_format() {
    let s = conversation();
    let md = transcript::markdown(&s, None);
    assert!(
        md.contains("**failed**: codex exited with status 2: rate limited"),
        "{md}"
    );
    assert!(md.contains("**incomplete**: turn limit reached"), "{md}");
    let html = transcript::html(&s, None);
    assert!(html.contains("<strong>failed</strong>: codex exited with status 2: rate limited"));
    assert!(html.contains("<strong>incomplete</strong>: turn limit reached"));
    let json: Value = serde_json::from_str(&transcript::json(&s, None)).unwrap();
    let outcomes: Vec<&Value> = json["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["outcome"])
        .collect();
    assert_eq!(
        outcomes,
        [
            &Value::Null,
            &serde_json::json!({"kind": "replied"}),
            &serde_json::json!({"kind": "failed", "reason": "codex exited with status 2: rate limited", "failure": "crashed"}),
            &Value::Null,
            &serde_json::json!({"kind": "incomplete", "reason": "turn limit reached"}),
        ]
    );
}

#[test]
fn a_timed_out_run_reads_timed_out_in_the_text_formats_as_in_the_page_and_chat() {
    // The demo's carol stopped at her timeout.
    let s = demo();
    let md = transcript::markdown(&s, None);
    assert!(md.contains("**timed out**: no reply within 600 s"), "{md}");
    let html = transcript::html(&s, None);
    assert!(html.contains("<strong>timed out</strong>: no reply within 600 s"));
    let json: Value = serde_json::from_str(&transcript::json(&s, None)).unwrap();
    assert_eq!(json["messages"][7]["outcome"]["failure"], "timeout");
}

#[test]
fn a_cancelled_run_reads_cancelled_in_the_text_formats() {
    let mut s = crew();
    say(&mut s, Fact::human("Max, go. [NEXT: max]", Millis(T0)));
    say(
        &mut s,
        Fact::Failed {
            to: "max".into(),
            reason: "cancelled by the user: the agent was stopped".into(),
            at: Millis(T0 + 1_000),
            failure: Some(Failure::Cancelled),
            usage: None,
        },
    );
    let md = transcript::markdown(&s, None);
    assert!(
        md.contains("**cancelled**: cancelled by the user: the agent was stopped"),
        "{md}"
    );
    assert!(!md.contains("**failed**"), "{md}");
}

#[test]
fn a_run_shows_its_usage_and_the_header_the_total() {
    let s = conversation();
    let md = transcript::markdown(&s, None);
    assert!(
        md.contains("\nusage: 1200 in (1000 cached) · 80 out · $0.0031 · 5.4 s\n"),
        "{md}"
    );
    assert!(
        md.contains("- usage: 1200 in (1000 cached) · 80 out · $0.0031 · 5.4 s (3 runs)"),
        "{md}"
    );
    let json: Value = serde_json::from_str(&transcript::json(&s, None)).unwrap();
    assert_eq!(json["messages"][1]["usage"]["inputTokens"], 1200);
    assert_eq!(json["messages"][0]["usage"], Value::Null);
}

#[test]
fn every_delivery_carries_the_exact_prompt_its_recipient_got() {
    let s = conversation();
    let json: Value = serde_json::from_str(&transcript::json(&s, None)).unwrap();
    let mut seen = 0;
    for (at, message) in json["messages"].as_array().unwrap().iter().enumerate() {
        for d in message["deliveries"].as_array().unwrap() {
            let to = d["to"].as_str().unwrap();
            let p = s
                .preview(to, Some(at), &PreviewOverrides::default())
                .unwrap();
            assert_eq!(d["prompt"], p.prompt.as_str());
            assert_eq!(d["bytes"], p.prompt.len());
            assert_eq!(d["systemFlag"].as_str(), p.system_flag.as_deref());
            assert_eq!(d["sha256"], p.sha256_hex());
            seen += 1;
        }
    }
    // max at #1, sarah at #2 (kailai is human), sarah at #4.
    assert_eq!(seen, 3);
    let html = transcript::html(&s, None);
    assert_eq!(html.matches("<details class=\"delivery\"").count(), 3);
    assert_eq!(
        transcript::markdown(&s, None)
            .matches("\nPrompt delivered to ")
            .count(),
        3
    );
}

#[test]
fn a_hostile_message_stays_text_in_the_html_transcript() {
    let mut s = crew();
    let hostile = "</details><script>alert(1)</script><img src=x onerror=alert(2)> [NEXT: max]";
    say(&mut s, Fact::human(hostile, Millis(T0)));
    let html = transcript::html(&s, None);
    assert!(!html.contains("<script"), "{html}");
    assert!(!html.contains("<img"), "{html}");
    assert!(html.contains("&lt;/details&gt;&lt;script&gt;alert(1)&lt;/script&gt;"));
    // The message and max's prompt (which quotes it) are both escaped: one block each.
    assert_eq!(html.matches("</details>").count(), 1);
    assert!(html.contains("default-src 'none'"), "no resource may load");
}

#[test]
fn the_export_time_is_printed_only_when_given() {
    let s = conversation();
    assert!(!transcript::markdown(&s, None).contains("exported"));
    let md = transcript::markdown(&s, Some(Millis(T0)));
    assert!(md.contains("- exported: 2025-11-23 12:13:20 UTC\n"), "{md}");
}

#[test]
fn times_print_in_utc_across_leap_years() {
    let cases = [
        (0, "1970-01-01 00:00:00 UTC"),
        (951_782_400_000, "2000-02-29 00:00:00 UTC"),
        (1_709_251_199_000, "2024-02-29 23:59:59 UTC"),
        (T0, "2025-11-23 12:13:20 UTC"),
    ];
    for (ms, want) in cases {
        assert_eq!(transcript::utc(Millis(ms)), want);
    }
}

#[test]
fn formats_are_named_as_on_the_command_line() {
    for (name, format) in Format::ALL {
        assert_eq!(Format::from_name(name), Some(format));
        assert_eq!(format.extension(), name);
    }
    assert_eq!(Format::from_name("markdown"), Some(Format::Markdown));
    assert_eq!(Format::from_name("pdf"), None);
}

/// The demo scenario (examples/demo-scenario.json) opened as history, then one more round with
/// real deliveries: Kailai asks Max, Max answers with usage and passes to Carol, Carol fails.
fn demo() -> Session {
    let scenario = load_scenario(include_str!("../examples/demo-scenario.json")).expect("demo");
    let mut s = Session::new();
    say(
        &mut s,
        Fact::LoadScenario {
            scenario: Box::new(scenario),
        },
    );
    say(
        &mut s,
        Fact::human("One more pass on the summary, Max. [NEXT: max]", Millis(T0)),
    );
    say(
        &mut s,
        Fact::replied(
            "max",
            "Summary tightened. [NEXT: carol]",
            Millis(T0 + 60_000),
        )
        .with_usage(usage()),
    );
    s.apply(&Fact::Failed {
        to: "carol".into(),
        reason: "no reply within 600 s".into(),
        at: Millis(T0 + 660_000),
        failure: Some(Failure::Timeout),
        usage: None,
    })
    .expect("carol was due");
    assert!(std::iter::from_fn(|| s.poll_action()).all(|a| !matches!(a, Action::Deliver(_))));
    s
}

#[test]
fn the_demo_transcript_matches_the_golden_files() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/transcripts");
    let s = demo();
    let update = std::env::var_os("UPDATE_EXPECTED").is_some();
    for (_, format) in Format::ALL {
        let got = format.render(&s, Some(Millis(T0 + 3_600_000)));
        let path = dir.join(format!("demo.{}", format.extension()));
        if update {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e}; generate it with UPDATE_EXPECTED=1 cargo test --test transcript",
                path.display()
            )
        });
        assert!(
            got == want,
            "{} differs: regenerate with UPDATE_EXPECTED=1 and review the diff",
            path.display()
        );
    }
}

#[test]
fn a_stop_by_the_cost_cap_is_in_every_format() {
    let mut s = crew();
    let mut settings = s.settings().cloned().expect("the team's settings");
    settings.max_cost_usd = Usd::new(0.003);
    say(
        &mut s,
        Fact::SetSettings {
            settings: Box::new(settings),
        },
    );
    say(&mut s, Fact::human("Plan it [NEXT: max]", Millis(T0)));
    // Max's run costs $0.0031, over the $0.003 cap: Sarah's delivery is stopped.
    say(
        &mut s,
        Fact::replied("max", "Planned. [NEXT: sarah]", Millis(T0 + 1)).with_usage(usage()),
    );
    let md = transcript::markdown(&s, None);
    let stop = md
        .lines()
        .find(|l| l.starts_with("**stopped by the cost cap**:"))
        .unwrap_or_else(|| panic!("no stop in {md}"));
    assert!(stop.contains("$0.0031") && stop.contains("sarah"), "{stop}");
    // After Max's reply (#2), before nothing else.
    assert!(md.find("## #2").unwrap() < md.find(stop).unwrap(), "{md}");
    let html = transcript::html(&s, None);
    assert!(
        html.contains("<p class=\"failed cost-stop\"><strong>stopped by the cost cap</strong>: "),
        "{html}"
    );
    let json: Value = serde_json::from_str(&transcript::json(&s, None)).unwrap();
    let stops = &json["messages"][1]["costCapStops"];
    assert!(stops[0].as_str().unwrap().contains("$0.0031"), "{stops}");
    assert_eq!(json["messages"][0].get("costCapStops"), None);
    // Without a cap, no transcript says a word of one.
    assert!(!transcript::markdown(&conversation(), None).contains("cost cap"));
}
