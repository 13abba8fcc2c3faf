//! Prints the exact prompt each AI member of a scenario receives (docs/architecture.md §11b), with
//! the Claude system flag and a short explain. `cargo xtask prompts` runs this example.
//!
//! ```text
//! cargo run --example preview -- [SCENARIO.json] [MEMBER]
//! ```
//!
//! Without a file it uses the embedded demo team (`examples/demo-scenario.json`); without a
//! member it previews every AI member, in team order.

use std::process::ExitCode;

use agent_chatter::context::Prompt;
use agent_chatter::explain::{Explain, Fate};
use agent_chatter::scenario::{self, Scenario};

const DEMO: &str = include_str!("demo-scenario.json");

const USAGE: &str = "usage: preview [SCENARIO.json] [MEMBER]
  SCENARIO.json  a scenario file (see the README); default: the embedded demo team
  MEMBER         a member id or name; default: every AI member";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("preview: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &[String]) -> Result<(), String> {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return Ok(());
    }
    let (file, member) = match args {
        [] => (None, None),
        [one] if one.ends_with(".json") => (Some(one.as_str()), None),
        [one] => (None, Some(one.as_str())),
        [file, member] => (Some(file.as_str()), Some(member.as_str())),
        _ => return Err(format!("too many arguments\n{USAGE}")),
    };
    let (source, text) = match file {
        Some(path) => (
            path.to_string(),
            std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?,
        ),
        None => ("the demo scenario".to_string(), DEMO.to_string()),
    };
    let scenario = scenario::load_scenario(&text).map_err(|e| format!("{source}: {e}"))?;

    let members: Vec<String> = match member {
        Some(m) => vec![m.to_string()],
        None => scenario
            .team
            .members
            .iter()
            .filter(|m| m.is_ai())
            .map(|m| m.id.clone())
            .collect(),
    };
    if members.is_empty() {
        return Err(format!("{source}: the team has no AI member to preview"));
    }
    // Build every prompt first, so an unknown member fails before anything is printed.
    let prompts = members
        .iter()
        .map(|m| scenario::preview(&scenario, m).map(|p| (m, p)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{source}: {e}"))?;
    println!(
        "Scenario: {} ({} messages; the last one is the current message)",
        scenario.team.name,
        scenario.messages.len()
    );
    for (member, prompt) in &prompts {
        print_prompt(&scenario, member, prompt);
    }
    Ok(())
}

fn print_prompt(scenario: &Scenario, member: &str, prompt: &Prompt) {
    let explain = &prompt.explain;
    let agent = scenario
        .team
        .find(member)
        .and_then(|m| m.agent_type.clone())
        .unwrap_or_else(|| "human".to_string());
    println!(
        "\n==== {} ({agent}): {} of {} bytes ({:?}), window {} ====",
        explain.recipient, explain.total_bytes, explain.max_bytes, explain.status, explain.window
    );
    // The core reads no files (docs/architecture.md §11); say so rather than show a prompt without
    // it.
    if let Some(m) = scenario.team.find(member) {
        if let (Some(file), None) = (&m.instruction_file, &m.instruction_file_text) {
            println!(
                "(instructionFile {file:?} is not read by this example; `agent-chatter preview` reads it)"
            );
        }
    }
    match &prompt.system_flag {
        Some(flag) => println!("---- system flag (--append-system-prompt) ----\n{flag}"),
        None => println!("---- system flag: none ----"),
    }
    println!("---- prompt ----\n{}", prompt.prompt);
    println!("---- explain ----\n{}", explain_lines(explain));
}

/// Section sizes, each message's fate and any cut, one line each.
fn explain_lines(explain: &Explain) -> String {
    let sections: Vec<String> = explain
        .sections
        .iter()
        .map(|s| {
            let flag = if s.in_system_flag {
                ", in the flag"
            } else {
                ""
            };
            format!("{} {} B{flag}", s.name, s.bytes)
        })
        .collect();
    let fates: Vec<String> = explain
        .messages
        .iter()
        .map(|m| format!("#{} {}", m.index + 1, fate_label(m.fate)))
        .collect();
    let mut lines = vec![
        format!("sections: {}", sections.join(", ")),
        format!("messages: {}", fates.join(", ")),
    ];
    if explain.outside_window > 0 {
        lines.push(format!(
            "{} older messages outside the window",
            explain.outside_window
        ));
    }
    for cut in &explain.truncations {
        lines.push(format!(
            "cut {}: {} -> {} bytes",
            cut.section, cut.from_bytes, cut.to_bytes
        ));
    }
    lines.join("\n")
}

fn fate_label(fate: Fate) -> String {
    match fate {
        Fate::Included => "in context".to_string(),
        Fate::OutsideWindow => "outside the window".to_string(),
        Fate::Deduplicated { reason } => format!("deduplicated ({reason:?})"),
        Fate::TrimmedForBudget => "trimmed for the budget".to_string(),
        Fate::Current => "current message".to_string(),
        Fate::Pinned => "pinned".to_string(),
        Fate::ParentContext => "parent context".to_string(),
        Fate::Related => "related answer".to_string(),
        Fate::Withheld => "withheld (a cancelled run)".to_string(),
    }
}
