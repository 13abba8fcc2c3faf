//! Transcripts (docs/architecture.md §13 "files", §14 `export`): a session as people read it —
//! who said what to whom (`#3 Max → Sarah, Kailai`), how each agent run ended and what it cost,
//! where the cost cap stopped deliveries and who left the team (in the page's notice's words),
//! and the exact prompt each recipient was delivered with that message as its `[MESSAGE]`
//! (what [`Session::preview`] gives for a delivery). Three formats, rendered here once for the
//! CLI and the page: Markdown, one self-contained HTML document (inline CSS, no scripts, no
//! external resources, every text escaped) and JSON (`agent-chatter-transcript/1`, shape in
//! [`json`]).
//!
//! Deterministic: the core reads no clock, so the export time is an argument (left out when
//! `None`); message times are the ones the facts carry, printed in UTC.

use serde_json::{json, Value};

use crate::activity::{Activity, Decision, RunActivity, ToolCall};
use crate::context::Prompt;
use crate::message::{Message, Millis};
use crate::session::{PreviewOverrides, Run, Session};
use crate::team::Team;

/// The `format` of a JSON transcript.
pub const TRANSCRIPT_FORMAT: &str = "agent-chatter-transcript/1";

/// A transcript format, by its name on the command line (`md`, `html`, `json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Markdown,
    Html,
    Json,
}

impl Format {
    /// Every format with its name, in the order help texts list them.
    pub const ALL: [(&'static str, Format); 3] = [
        ("md", Format::Markdown),
        ("html", Format::Html),
        ("json", Format::Json),
    ];

    /// The format named `name` (`md`, `markdown`, `html`, `json`).
    pub fn from_name(name: &str) -> Option<Format> {
        match name {
            "markdown" => Some(Format::Markdown),
            _ => Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, f)| *f),
        }
    }

    /// The file extension (`md`, `html`, `json`).
    pub fn extension(self) -> &'static str {
        match self {
            Format::Markdown => "md",
            Format::Html => "html",
            Format::Json => "json",
        }
    }

    /// The media type of a file in this format.
    pub fn media_type(self) -> &'static str {
        match self {
            Format::Markdown => "text/markdown;charset=utf-8",
            Format::Html => "text/html;charset=utf-8",
            Format::Json => "application/json",
        }
    }

    /// `session` in this format, stamped `exported` when given.
    pub fn render(self, session: &Session, exported: Option<Millis>) -> String {
        self.render_with_activity(session, exported, &[])
    }

    /// [`Self::render`], with each agent run's activity (its tool calls and approval
    /// decisions, docs/architecture.md §14d) shown after the message the run ended in. `activity` is what
    /// the host kept of each run, keyed by the message it was delivered and its recipient.
    pub fn render_with_activity(
        self,
        session: &Session,
        exported: Option<Millis>,
        activity: &[RunActivity],
    ) -> String {
        match self {
            Format::Markdown => markdown_with_activity(session, exported, activity),
            Format::Html => html_with_activity(session, exported, activity),
            Format::Json => json_with_activity(session, exported, activity),
        }
    }
}

/// One message with what it caused: the run that ended in it and the prompts it was delivered in.
struct Entry<'s> {
    /// 1-based, as the page numbers messages.
    number: usize,
    message: &'s Message,
    /// `Kailai`, and `Sarah, Kailai` (display names; `all` for everyone).
    from: &'s str,
    to: String,
    run: Option<&'s Run>,
    deliveries: Vec<Delivered>,
    /// What the run that ended in this message did (tool calls, approvals), when kept.
    activity: Option<&'s RunActivity>,
    /// The team's cost cap stopped the deliveries after this message: each stop in words.
    cost_stops: Vec<String>,
    /// The members who left the team after this message, before the next: each in words.
    left: Vec<&'s str>,
}

/// What the conversation said that its messages alone do not show, each at its place: where
/// the team's cost cap (`maxCostUsd`) stopped deliveries and which members left the team
/// (`memberLeft`), in the words the page shows ([`Session::describe`]).
#[derive(Default)]
struct Notes {
    /// (the position of the last message before the stop, the notice in words).
    cost_stops: Vec<(usize, String)>,
    /// Each member who left, in the order they left.
    left: Vec<Left>,
}

/// A member who left the team, at its place in the conversation.
struct Left {
    member: String,
    name: String,
    /// How many messages were stored when they left (0: before the first).
    after: usize,
    /// "Max left the team at #5: their messages stay theirs; …", the page's notice.
    words: String,
}

/// The [`Notes`] of `session`. They are the conversation's notices, not facts, so the
/// session's facts are applied again in order to find them; only when some team or settings
/// of the session set a cap or a member left (no replay otherwise).
fn notes(session: &Session) -> Notes {
    use crate::conversation::{Action, Notice};
    use crate::session::Fact;
    let noted = session.facts().iter().any(|f| match f {
        Fact::SetTeam { team, settings } => settings
            .as_ref()
            .map_or(team.settings.max_cost_usd, |s| s.max_cost_usd)
            .is_some(),
        Fact::SetSettings { settings } => settings.max_cost_usd.is_some(),
        Fact::LoadScenario { .. } | Fact::MemberLeft { .. } => true,
        _ => false,
    });
    let mut notes = Notes::default();
    if !noted {
        return notes;
    }
    let mut again = Session::new();
    for fact in session.facts() {
        // A scenario replaces the history: who left before it left messages no longer shown.
        if matches!(fact, Fact::LoadScenario { .. }) {
            notes.left.clear();
        }
        if again.apply(fact).is_err() {
            break;
        }
        while let Some(action) = again.poll_action() {
            let Action::Notice(notice) = action else {
                continue;
            };
            match &notice {
                Notice::CostLimitReached { .. } => {
                    if let Some(last) = again.messages().len().checked_sub(1) {
                        notes.cost_stops.push((last, again.describe(&notice)));
                    }
                }
                Notice::MemberLeft {
                    member,
                    name,
                    after,
                    ..
                } => notes.left.push(Left {
                    member: member.clone(),
                    name: name.clone(),
                    after: *after,
                    words: again.describe(&notice),
                }),
                _ => {}
            }
        }
    }
    notes
}

/// The words of the members who left before the first message (a place no entry has).
fn left_before_first(notes: &Notes) -> impl Iterator<Item = &str> {
    notes
        .left
        .iter()
        .filter(|l| l.after == 0)
        .map(|l| l.words.as_str())
}

/// The prompt one recipient was delivered (rebuilt by the session, so the bytes it got).
struct Delivered {
    id: String,
    name: String,
    prompt: Result<Prompt, String>,
}

fn display_name(team: Option<&Team>, id: &str) -> String {
    team.and_then(|t| t.member(id))
        .map_or_else(|| id.to_string(), |m| m.display_name.clone())
}

/// The position of the message each run's activity belongs after: the one the run ended in
/// (its reply or failure's notice), which is the first run of its recipient after the message
/// it was delivered. Activity whose run is not in the session (before a team change) has none.
fn ended_in(session: &Session, run: &RunActivity) -> Option<usize> {
    let delivered = session
        .messages()
        .iter()
        .position(|m| m.id.0 == run.message)?;
    session
        .runs()
        .iter()
        .find(|r| r.to == run.to && r.message > delivered)
        .map(|r| r.message)
}

fn entries<'s>(
    session: &'s Session,
    activity: &'s [RunActivity],
    notes: &'s Notes,
) -> Vec<Entry<'s>> {
    let team = session.team();
    let placed: Vec<(usize, &RunActivity)> = activity
        .iter()
        .filter_map(|a| Some((ended_in(session, a)?, a)))
        .collect();
    session
        .messages()
        .iter()
        .enumerate()
        .map(|(at, message)| {
            let routing = &message.routing;
            let to = if routing.resolved.is_empty() {
                "all".to_string()
            } else {
                let names = routing.resolved.iter().enumerate().map(|(i, id)| {
                    team.and_then(|t| t.member(id)).map_or_else(
                        || routing.resolved_names.get(i).unwrap_or(id).clone(),
                        |m| m.display_name.clone(),
                    )
                });
                names.collect::<Vec<_>>().join(", ")
            };
            let deliveries = session
                .delivered_at(at)
                .into_iter()
                .map(|id| Delivered {
                    id: id.to_string(),
                    name: display_name(team, id),
                    prompt: session
                        .preview(id, Some(at), &PreviewOverrides::default())
                        .map_err(|e| e.to_string()),
                })
                .collect();
            Entry {
                number: at + 1,
                message,
                from: &message.speaker.display_name,
                to,
                run: session.run_at(at),
                deliveries,
                activity: placed.iter().find(|(m, _)| *m == at).map(|(_, a)| *a),
                cost_stops: notes
                    .cost_stops
                    .iter()
                    .filter(|(after, _)| *after == at)
                    .map(|(_, words)| words.clone())
                    .collect(),
                left: notes
                    .left
                    .iter()
                    .filter(|l| l.after == at + 1)
                    .map(|l| l.words.as_str())
                    .collect(),
            }
        })
        .collect()
}

/// How a run ended, when not plainly: (its word, [`Run::outcome`]: `incomplete`, `failed`,
/// `cancelled` or `timed out`; the reason).
fn outcome(run: Option<&Run>) -> Option<(&'static str, &str)> {
    let run = run?;
    let reason = run.failed.as_deref().or(run.incomplete.as_deref())?;
    Some((run.outcome(), reason))
}

/// `2025-11-23 12:13:20 UTC` (the proleptic Gregorian calendar; no clock is read).
pub fn utc(at: Millis) -> String {
    let secs = at.0 / 1000;
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    let s = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        s / 3600,
        s % 3600 / 60,
        s % 60
    )
}

/// Days since 1970-01-01 as (year, month, day) (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// The header lines both text formats show: (label, value); `text` is applied to each text
/// that comes from a member, a team or a file (names, agent types, the team task).
fn header(
    session: &Session,
    exported: Option<Millis>,
    text: impl Fn(&str) -> String,
) -> Vec<(&'static str, String)> {
    let mut lines = Vec::new();
    if let Some(team) = session.team() {
        let members = team.members.iter().map(|m| match &m.agent_type {
            Some(agent) if m.is_ai() => {
                format!("{} (AI, {})", text(&m.display_name), text(agent))
            }
            _ => format!("{} (human)", text(&m.display_name)),
        });
        lines.push(("members", members.collect::<Vec<_>>().join(", ")));
        let s = &team.settings;
        let pin = if s.pin_first { "on" } else { "off" };
        lines.push((
            "settings",
            format!(
                "window {} · budget {} B · pin-first {pin}",
                s.window_size, s.max_bytes
            ),
        ));
    }
    if let Some(task) = session.store().team_task() {
        lines.push(("team task", text(task)));
    }
    let spend = session.usage(None);
    if spend.runs > 0 {
        let mut runs = crate::usage::runs_word(spend.runs);
        if spend.unpriced > 0 {
            runs.push_str(&format!(", the cost of {} not known", spend.unpriced));
        }
        lines.push(("usage", format!("{} ({runs})", spend.figures())));
    }
    if let Some(at) = exported {
        lines.push(("exported", utc(at)));
    }
    lines
}

fn title(session: &Session) -> String {
    match session.team() {
        Some(team) => format!("Transcript: {}", team.name),
        None => "Transcript".to_string(),
    }
}

/// `683 B · sha256 ab12…` for a delivered prompt.
fn prompt_facts(prompt: &Prompt) -> String {
    format!("{} B · sha256 {}", prompt.prompt.len(), prompt.sha256_hex())
}

// ---------------------------------------------------------------------------- Markdown

/// A fenced code block holding `text` exactly: the fence is longer than any run of backticks
/// in it (at least three), so no line of the text can close it.
pub fn fence(text: &str, info: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat((longest + 1).max(3));
    let newline = if text.ends_with('\n') || text.is_empty() {
        ""
    } else {
        "\n"
    };
    format!("{fence}{info}\n{text}{newline}{fence}\n")
}

/// `text` as Markdown inline text that reads as itself, on the line it is put in: each
/// character Markdown gives a meaning within a line (emphasis, code, links, raw HTML,
/// entities, math, a heading's closing `#`s) is escaped with a backslash, and line breaks and
/// the other control characters are written out (`\n`, `\r`, `\u{1b}`). So no text from an
/// agent, a member, a team or a file can start a line of its own, and no line can read as a
/// heading, a list, a fence or HTML.
pub fn markdown_inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '&' | '!' | '#' | '~' | '|' | '$' => {
                out.push('\\');
                out.push(c);
            }
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push(c),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// A text that may hold line breaks (a failure's reason, the agent's own error), after
/// `lead` (`**failed**:`): on the same line, escaped, when it is one line; fenced below it
/// otherwise, so each of its lines is kept and none reads as Markdown.
fn markdown_said(lead: &str, text: &str) -> String {
    if text.contains(['\n', '\r']) {
        format!("{lead}\n\n{}", fence(text, "text"))
    } else {
        format!("{lead} {}\n", markdown_inline(text))
    }
}

/// The session as Markdown: a header, then each message under `## #n From → To` with its text
/// (fenced, as stored), its outcome and usage, and each delivered prompt fenced. Every other
/// text from an agent, a member, a team or a file is escaped ([`markdown_inline`]) or fenced.
pub fn markdown(session: &Session, exported: Option<Millis>) -> String {
    markdown_with_activity(session, exported, &[])
}

/// [`markdown`], each run's activity listed after the message it ended in
/// ([`Format::render_with_activity`]).
pub fn markdown_with_activity(
    session: &Session,
    exported: Option<Millis>,
    activity: &[RunActivity],
) -> String {
    let title = match session.team() {
        Some(team) => format!("Transcript: {}", markdown_inline(&team.name)),
        None => "Transcript".to_string(),
    };
    let mut out = format!("# {title}\n\n");
    for (label, value) in header(session, exported, markdown_inline) {
        out += &format!("- {label}: {value}\n");
    }
    let notes = notes(session);
    for words in left_before_first(&notes) {
        out += &format!("\n*{}*\n", markdown_inline(words));
    }
    for e in entries(session, activity, &notes) {
        out += &format!(
            "\n## #{} {} → {}\n\n",
            e.number,
            markdown_inline(e.from),
            markdown_inline(&e.to)
        );
        if e.message.at.0 > 0 {
            out += &format!("{}\n\n", utc(e.message.at));
        }
        out += &fence(&e.message.content, "text");
        if let Some((kind, reason)) = outcome(e.run) {
            out += "\n";
            out += &markdown_said(&format!("**{kind}**:"), reason);
        }
        if let Some(usage) = e.run.and_then(|r| r.usage.as_ref()) {
            out += &format!("\nusage: {}\n", usage.summary());
        }
        for stop in &e.cost_stops {
            out += "\n";
            out += &markdown_said("**stopped by the cost cap**:", stop);
        }
        if let Some(lines) = e.activity.map(activity_lines).filter(|l| !l.is_empty()) {
            out += "\nActivity:\n\n";
            for line in lines {
                out += &format!("- {}\n", line.render(markdown_inline));
            }
        }
        for d in &e.deliveries {
            let name = markdown_inline(&d.name);
            match &d.prompt {
                Ok(p) => {
                    out += &format!("\nPrompt delivered to {name} ({}):\n\n", prompt_facts(p));
                    out += &fence(&p.prompt, "text");
                    if let Some(flag) = &p.system_flag {
                        out += &format!("\nSystem flag delivered to {name}:\n\n");
                        out += &fence(flag, "text");
                    }
                }
                Err(why) => {
                    out += "\n";
                    out += &markdown_said(
                        &format!("Prompt delivered to {name}: cannot be rebuilt:"),
                        why,
                    );
                }
            }
        }
        for words in &e.left {
            out += &format!("\n*{}*\n", markdown_inline(words));
        }
    }
    out
}

// -------------------------------------------------------------------------------- HTML

/// `text` safe inside HTML text and quoted attribute values: `& < > " '` become entities, so
/// whatever a message holds (`</details><script>`) stays text.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f}\
h2{font-size:1.05rem;margin:1.6rem 0 .3rem}time,.meta,.usage{color:#555;font-size:.9em}\
pre{white-space:pre-wrap;word-break:break-word;background:#f4f4f6;padding:.6rem;border-radius:4px;margin:.3rem 0}\
.failed{color:#a00}.incomplete{color:#8a5a00}details{margin:.3rem 0}summary{cursor:pointer}";

/// The session as one HTML document: no script, no external resource (its Content-Security-Policy
/// allows none), each delivered prompt in a collapsible `<details>` block.
pub fn html(session: &Session, exported: Option<Millis>) -> String {
    html_with_activity(session, exported, &[])
}

/// [`html`], each run's activity listed after the message it ended in
/// ([`Format::render_with_activity`]).
pub fn html_with_activity(
    session: &Session,
    exported: Option<Millis>,
    activity: &[RunActivity],
) -> String {
    let title = escape_html(&title(session));
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n\
         <title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{title}</h1>\n<ul class=\"meta\">\n"
    );
    for (label, value) in header(session, exported, str::to_string) {
        out += &format!("<li>{label}: {}</li>\n", escape_html(&value));
    }
    out += "</ul>\n";
    let notes = notes(session);
    for words in left_before_first(&notes) {
        out += &format!("<p class=\"member-left\">{}</p>\n", escape_html(words));
    }
    for e in entries(session, activity, &notes) {
        out += &format!(
            "<article class=\"message\" id=\"m{n}\">\n<h2>#{n} {} → {}</h2>\n",
            escape_html(e.from),
            escape_html(&e.to),
            n = e.number
        );
        if e.message.at.0 > 0 {
            out += &format!("<time>{}</time>\n", utc(e.message.at));
        }
        out += &format!(
            "<pre class=\"text\">{}</pre>\n",
            escape_html(&e.message.content)
        );
        if let Some((word, reason)) = outcome(e.run) {
            let class = if word == "incomplete" { word } else { "failed" };
            out += &format!(
                "<p class=\"{class}\"><strong>{word}</strong>: {}</p>\n",
                escape_html(reason)
            );
        }
        if let Some(usage) = e.run.and_then(|r| r.usage.as_ref()) {
            out += &format!(
                "<p class=\"usage\">usage: {}</p>\n",
                escape_html(&usage.summary())
            );
        }
        for stop in &e.cost_stops {
            out += &format!(
                "<p class=\"failed cost-stop\"><strong>stopped by the cost cap</strong>: {}</p>\n",
                escape_html(stop)
            );
        }
        if let Some(lines) = e.activity.map(activity_lines).filter(|l| !l.is_empty()) {
            out += "<ul class=\"activity\">\n";
            for line in lines {
                out += &format!(
                    "<li class=\"{}\">{}</li>\n",
                    line.class,
                    line.render(escape_html)
                );
            }
            out += "</ul>\n";
        }
        for d in &e.deliveries {
            let name = escape_html(&d.name);
            match &d.prompt {
                Ok(p) => {
                    out += &format!(
                        "<details class=\"delivery\" data-to=\"{}\">\n<summary>prompt delivered to {name} ({})</summary>\n<pre>{}</pre>\n",
                        escape_html(&d.id),
                        prompt_facts(p),
                        escape_html(&p.prompt)
                    );
                    if let Some(flag) = &p.system_flag {
                        out += &format!("<p>system flag:</p>\n<pre>{}</pre>\n", escape_html(flag));
                    }
                    out += "</details>\n";
                }
                Err(why) => {
                    out += &format!(
                        "<p>prompt delivered to {name}: cannot be rebuilt ({})</p>\n",
                        escape_html(why)
                    )
                }
            }
        }
        out += "</article>\n";
        for words in &e.left {
            out += &format!("<p class=\"member-left\">{}</p>\n", escape_html(words));
        }
    }
    out + "</body>\n</html>\n"
}

// -------------------------------------------------------------------------------- JSON

/// The session as JSON (pretty-printed):
///
/// ```text
/// {"format": "agent-chatter-transcript/1", "exportedAt": ms | null,
///  "team": <the team, ours>, "settings": <the settings in force>, "teamTask": "…" | null,
///  "usage": <what every run cost> | null,
///  "messages": [{"number": 1, "from": "kailai", "fromName": "Kailai", "fromKind": "human",
///    "to": ["max"] /* member ids; [] = everyone */, "toNames": "Max",
///    "text": "<raw, markers in>", "at": ms,
///    "outcome": null | {"kind": "replied" | "incomplete" | "failed", "reason"?: "…",
///      "failure"?: "timeout" | "cancelled" | … /* a failure's kind, when stated */},
///    "usage": <that run's usage> | null,
///    "deliveries": [{"to": "max", "toName": "Max", "prompt": "<exact bytes>", "bytes": 683 /* the prompt's */,
///      "systemFlag": "…" | null, "sha256": "<hex of prompt, NUL, flag>"}]}]}
/// ```
///
/// With `"membersLeft"` when a member left the team (`memberLeft`), in the order they left:
/// `[{"member": "max", "name": "Max", "after": 5 /* messages stored then */, "notice": "Max
/// left the team at #5: …" /* the page's words */}]`.
///
/// `outcome` is `null` for a message no agent run ended in (a human's, a history loaded from
/// a scenario). A prompt that cannot be rebuilt has `"error"` in place of its fields.
pub fn json(session: &Session, exported: Option<Millis>) -> String {
    json_with_activity(session, exported, &[])
}

/// [`json`], with `"activity"`: each run's activity, keyed by the message it was delivered
/// (`"message": "msg-3"`) and its recipient (`"member": "max"`), with the number of the
/// message it ended in (`"endedIn"`, `null` when that run is not in the session) and its items
/// as the host kept them (`{"type": "toolCall" | "decision" | "plan" | "thought" | "context",
/// …}`, src/activity.rs). Left out when no run has any.
pub fn json_with_activity(
    session: &Session,
    exported: Option<Millis>,
    activity: &[RunActivity],
) -> String {
    let team = session.team();
    let spend = session.usage(None);
    let notes = notes(session);
    let messages: Vec<Value> = entries(session, activity, &notes)
        .iter()
        .map(|e| {
            let outcome = e.run.map(|run| match (&run.failed, &run.incomplete) {
                (Some(reason), _) => match run.failure {
                    Some(failure) => {
                        json!({"kind": "failed", "reason": reason, "failure": failure})
                    }
                    None => json!({"kind": "failed", "reason": reason}),
                },
                (None, Some(reason)) => json!({"kind": "incomplete", "reason": reason}),
                (None, None) => json!({"kind": "replied"}),
            });
            let deliveries: Vec<Value> = e
                .deliveries
                .iter()
                .map(|d| match &d.prompt {
                    Ok(p) => json!({
                        "to": d.id, "toName": d.name, "prompt": p.prompt,
                        "bytes": p.prompt.len(), "systemFlag": p.system_flag,
                        "sha256": p.sha256_hex(),
                    }),
                    Err(why) => json!({"to": d.id, "toName": d.name, "error": why}),
                })
                .collect();
            let speaker = &e.message.speaker;
            let mut message = json!({
                "number": e.number,
                "from": speaker.id, "fromName": speaker.display_name, "fromKind": speaker.kind,
                "to": e.message.routing.resolved, "toNames": e.to,
                "text": e.message.content, "at": e.message.at,
                "outcome": outcome,
                "usage": e.run.and_then(|r| r.usage),
                "deliveries": deliveries,
            });
            // Only where the cap stopped deliveries: other transcripts read as before.
            if !e.cost_stops.is_empty() {
                message["costCapStops"] = json!(e.cost_stops);
            }
            message
        })
        .collect();
    let mut value = json!({
        "format": TRANSCRIPT_FORMAT,
        "exportedAt": exported,
        "team": team,
        "settings": team.map(|t| &t.settings),
        "teamTask": session.store().team_task(),
        "usage": (spend.runs > 0).then_some(spend.usage),
        "messages": messages,
    });
    if !notes.left.is_empty() {
        let left: Vec<Value> = notes
            .left
            .iter()
            .map(|l| json!({"member": l.member, "name": l.name, "after": l.after, "notice": l.words}))
            .collect();
        value["membersLeft"] = Value::Array(left);
    }
    if !activity.is_empty() {
        let runs: Vec<Value> = activity
            .iter()
            .map(|a| {
                json!({
                    "message": a.message, "member": a.to,
                    "endedIn": ended_in(session, a).map(|at| at + 1),
                    "items": a.items,
                })
            })
            .collect();
        value["activity"] = Value::Array(runs);
    }
    let mut text =
        serde_json::to_string_pretty(&crate::json::sorted_keys(value)).unwrap_or_default();
    text.push('\n');
    text
}

// ---------------------------------------------------------------------------- Activity

/// One line of a run's activity in the text formats: pieces of text from the agent (escaped
/// by the format) between fixed words.
struct ActivityLine {
    /// `tool` or `decision` (the HTML class).
    class: &'static str,
    parts: Vec<Part>,
}

enum Part {
    /// Words of ours.
    Fixed(String),
    /// Text from the agent or the host (a title, a file, an option's name).
    Said(String),
}

impl ActivityLine {
    fn render(&self, text: impl Fn(&str) -> String) -> String {
        self.parts
            .iter()
            .map(|p| match p {
                Part::Fixed(s) => s.clone(),
                Part::Said(s) => text(s),
            })
            .collect()
    }
}

/// A tool call's description: `Write hello.txt (edit, done; files: a, b; +3 −1)`.
fn tool_parts(call: &ToolCall, with_status: bool, parts: &mut Vec<Part>) {
    parts.push(Part::Said(call.title.clone()));
    let mut facts = call.kind.label().to_string();
    if with_status {
        facts += &format!(", {}", call.status.label());
    }
    parts.push(Part::Fixed(format!(" ({facts}")));
    if !call.files.is_empty() {
        parts.push(Part::Fixed("; files: ".into()));
        parts.push(Part::Said(call.files.join(", ")));
    }
    if let Some(d) = call.diff {
        parts.push(Part::Fixed(format!("; +{} −{}", d.added, d.removed)));
    }
    parts.push(Part::Fixed(")".into()));
}

fn decision_line(d: &Decision) -> ActivityLine {
    let mut parts = vec![Part::Fixed("approval: ".into())];
    tool_parts(&d.tool_call, false, &mut parts);
    parts.push(Part::Fixed(" → ".into()));
    match &d.option {
        Some(option) => parts.push(Part::Said(option.name.clone())),
        None => parts.push(Part::Fixed("withdrawn".into())),
    }
    parts.push(Part::Fixed(", by ".into()));
    parts.push(Part::Said(d.by.describe()));
    if d.at.0 > 0 {
        parts.push(Part::Fixed(format!(", {}", utc(d.at))));
    }
    ActivityLine {
        class: "decision",
        parts,
    }
}

/// The lines a run's activity shows in the text formats: each tool call (title, kind, status,
/// files, diff size) and each approval decision (tool call, option, who or which rule, when),
/// in the order they came. Plans, thoughts and context fills stay in the JSON.
fn activity_lines(run: &RunActivity) -> Vec<ActivityLine> {
    run.items
        .iter()
        .filter_map(|item| match item {
            Activity::ToolCall(call) => {
                let mut parts = vec![Part::Fixed("tool: ".into())];
                tool_parts(call, true, &mut parts);
                Some(ActivityLine {
                    class: "tool",
                    parts,
                })
            }
            Activity::Decision(d) => Some(decision_line(d)),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::markdown_inline;

    #[test]
    fn activity_lines_escape_what_the_agent_said_in_each_format() {
        use super::{activity_lines, escape_html};
        use crate::activity::*;
        let call = ToolCall {
            id: "t".into(),
            title: "</li><script>x</script>".into(),
            kind: ToolKind::Execute,
            status: ToolStatus::Failed,
            files: vec!["a<b>.txt".into()],
            diff: Some(DiffSize {
                added: 3,
                removed: 1,
            }),
        };
        let run = RunActivity {
            message: "msg-1".into(),
            to: "max".into(),
            items: vec![
                Activity::ToolCall(call.clone()),
                Activity::Thought { text: "hm".into() },
                Activity::Decision(Decision {
                    request: "max-1".into(),
                    tool_call: call,
                    option: Some(ApprovalOption {
                        id: "no".into(),
                        name: "<b>Reject</b>".into(),
                        kind: OptionKind::RejectOnce,
                    }),
                    by: DecidedBy::Rule {
                        rule: "approve: reads".into(),
                    },
                    at: crate::message::Millis(1_000),
                }),
            ],
        };
        let lines = activity_lines(&run);
        assert_eq!(lines.len(), 2, "thoughts stay in the JSON");
        assert_eq!(
            lines[0].render(escape_html),
            "tool: &lt;/li&gt;&lt;script&gt;x&lt;/script&gt; (command, failed; files: a&lt;b&gt;.txt; +3 −1)"
        );
        assert_eq!(
            lines[1].render(escape_html),
            "approval: &lt;/li&gt;&lt;script&gt;x&lt;/script&gt; (command; files: a&lt;b&gt;.txt; +3 −1) \
             → &lt;b&gt;Reject&lt;/b&gt;, by the rule approve: reads, 1970-01-01 00:00:01 UTC"
        );
        let md = lines[1].render(markdown_inline);
        assert!(
            md.contains(r"\<script\>") && !md.contains("<script>"),
            "{md}"
        );
    }

    #[test]
    fn inline_text_reads_as_itself_on_one_line() {
        let cases = [
            ("plain words: 600 s (code 1)", "plain words: 600 s (code 1)"),
            ("relay\n## #5 forged", r"relay\n\#\# \#5 forged"),
            ("a\r\n- item", r"a\r\n- item"),
            (
                "<script>alert(1)</script>",
                r"\<script\>alert(1)\</script\>",
            ),
            (
                "&amp; *b* _i_ `c` [l](u) ![i](u)",
                r"\&amp; \*b\* \_i\_ \`c\` \[l\](u) \!\[i\](u)",
            ),
            (r"a \ b | c ~~d~~ $x$", r"a \\ b \| c \~\~d\~\~ \$x\$"),
            ("title \u{1b}]0;x\u{7}", r"title \u{1b}\]0;x\u{7}"),
            ("tab\tkept, ünïcode ✓", "tab\tkept, ünïcode ✓"),
        ];
        for (text, want) in cases {
            assert_eq!(markdown_inline(text), want, "{text:?}");
        }
    }
}
