//! `agent-chatter chat`: the terminal conversation of docs/architecture.md §19 (seed 004). Lines
//! typed (or piped) are human messages; agents answer through the same hub as the page (facts
//! committed to SQLite, real CLIs or the simulator), their output streamed under a spinner. Piped
//! input ends when stdin does and the conversation has gone quiet.

use std::io::IsTerminal;
use std::path::Path;
use std::time::Duration;

use agent_chatter::conversation::Action;
use agent_chatter::conversation::Status;
use agent_chatter::session::{Fact, Session};
use indicatif::{ProgressBar, ProgressStyle};
use std::sync::Arc;

use agent_chatter::protocol::Event;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::broadcast;

mod approvals;
mod said;

use crate::agents::machine::MachineSettings;
use crate::clock;
use crate::hub::{self, Hub, Published, Said};
use approvals::Answer;
use said::{cost_report, name_of, said_of_fact, Lines, Prior};

/// A line on stdout as the terminal shows it (see [`terminal_safe`]); a closed stdout
/// (`chat | head -1`) is not an error worth a panic: the line is dropped.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), "{}", terminal_safe(&format!($($arg)*)));
    }};
}

/// [`say!`] on stderr.
macro_rules! tell {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), "{}", terminal_safe(&format!($($arg)*)));
    }};
}

/// Text for the terminal: control characters other than line breaks and tabs (escape
/// sequences, carriage returns, bells) are written out as `\u{1b}`, so what an agent says
/// cannot clear the screen, retitle the window, hide text or overwrite a speaker's name.
fn terminal_safe(text: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.contains(unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if unsafe_char(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// docs/architecture.md §19 (seed 004)'s `/help`.
pub(crate) const HELP: &str = "\
Available commands:
  /team deploy <config.json> - Load team and enter conversation mode
    (Type messages directly after loading team)
  /team list - List loaded team members
  /team leave <name> - The member leaves the team from now on (their messages stay theirs)
  /cost - What the agents' runs cost so far, per member
  /cancel - Stop the agent that is running
  /retry [name] - Run a failed agent's delivery again (the last one that failed)
  /allow - Allow the tool call an agent asks about, once (the oldest question open)
  /allow always - Allow it, and let the agent stop asking for such calls
  /deny - Refuse the tool call an agent asks about
  /exit - Exit conversation mode
  /help - Show this help

Message markers:
  [FROM:name] - Specify human sender (multi-human teams)
  [NEXT:name] - Route message to specific member
  [TEAM_TASK:description] - Set team-wide task context
  [DONE] - Mark conversation complete";

/// What one input line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Line {
    Message(String),
    /// `/start <msg>`: the deprecated alias, with the seed's warning.
    Start(String),
    /// `/team deploy <file>`; an empty file name asks for the usage.
    Deploy(String),
    List,
    /// `/team leave <name>`: the member leaves the team from now on; empty asks for the usage.
    Leave(String),
    Cost,
    Cancel,
    /// `/retry [name]`: run a failed agent's delivery again; empty: the last that failed.
    Retry(String),
    /// `/allow`, `/allow always`, `/deny`: an answer to the open approval.
    Answer(Answer),
    Exit,
    Help,
    Empty,
    Unknown(String),
}

/// Reads one input line.
pub(crate) fn parse_line(line: &str) -> Line {
    let line = line.trim_end_matches(['\r', '\n']);
    let trimmed = line.trim();
    if trimmed.is_empty() {
        return Line::Empty;
    }
    let Some(command) = trimmed.strip_prefix('/') else {
        return Line::Message(line.to_string());
    };
    let (word, rest) = command
        .split_once(char::is_whitespace)
        .unwrap_or((command, ""));
    let rest = rest.trim();
    match word {
        "help" => Line::Help,
        "exit" | "quit" => Line::Exit,
        "cancel" => Line::Cancel,
        "cost" => Line::Cost,
        "retry" => Line::Retry(rest.to_string()),
        "allow" if rest.is_empty() => Line::Answer(Answer::Allow),
        "allow" if rest == "always" => Line::Answer(Answer::AllowAlways),
        "deny" if rest.is_empty() => Line::Answer(Answer::Deny),
        "start" => Line::Start(rest.to_string()),
        "team" => match rest.split_once(char::is_whitespace).unwrap_or((rest, "")) {
            ("list", _) => Line::List,
            ("leave", name) => Line::Leave(name.trim().to_string()),
            ("deploy", file) => Line::Deploy(file.trim().to_string()),
            _ => Line::Unknown(trimmed.to_string()),
        },
        _ => Line::Unknown(trimmed.to_string()),
    }
}

/// What the chat does after a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    Continue,
    Exit,
}

/// Does what one line of input says (a command or a message); `/exit` ends the chat.
async fn handle(hub: &Hub, line: Line) -> Flow {
    match line {
        Line::Empty => {}
        Line::Help => say!("{HELP}"),
        Line::Exit => {
            let running = hub
                .query(|s, id| (s.conversation().in_flight().map(|f| f.to.clone()), id))
                .await;
            if let Ok((Some(to), id)) = running {
                if hub.stopping("the chat was exited while it ran").await {
                    tell!(
                        "Stopping {to}: `--resume {id}` records its run as interrupted, and \
                         /retry runs it again"
                    );
                } else {
                    tell!("Stopping {to}: its delivery is made again on `--resume {id}`");
                }
            }
            return Flow::Exit;
        }
        Line::Cancel => {
            let running = hub
                .query(|s, _| s.conversation().in_flight().map(|f| f.to.clone()))
                .await
                .ok()
                .flatten();
            match running {
                Some(to) => match hub.cancel(&to).await {
                    // The next command is read once the run's outcome is recorded, so it
                    // never meets the cancelled run still in flight.
                    Ok(()) => until_not_in_flight(hub, &to).await,
                    Err(e) => error(&e.to_string()),
                },
                None => error("No agent is running"),
            }
        }
        Line::Retry(name) => retry(hub, &name).await,
        Line::Answer(answer) => match approvals::answer(hub, answer).await {
            Ok(line) => say!("{line}"),
            Err(e) => error(&e),
        },
        Line::Cost => match hub.query(|s, _| cost_report(s)).await {
            Ok(Some(report)) => say!("{report}"),
            Ok(None) => error(NO_TEAM),
            Err(e) => error(&e.to_string()),
        },
        Line::List => match hub.query(|s, _| s.team().cloned()).await.ok().flatten() {
            Some(team) => {
                say!("Team \"{}\":", team.name);
                for m in &team.members {
                    let kind = m.agent_type.as_deref().unwrap_or("human");
                    say!("  {} ({}) - {kind}", m.display_name, m.id);
                }
            }
            None => error(NO_TEAM),
        },
        Line::Leave(name) if name.is_empty() => error("Usage: /team leave <name>"),
        Line::Leave(name) => leave(hub, &name).await,
        Line::Deploy(file) if file.is_empty() => error("Usage: /team deploy <config.json>"),
        Line::Deploy(file) => match MachineSettings::read(Path::new(&file)) {
            Ok((team, machine)) => {
                let name = team.name.clone();
                match hub.deploy(team, machine).await {
                    Ok(()) => {
                        say!("✓ Team \"{name}\" loaded");
                        say!("Type your first message to begin conversation...");
                    }
                    Err(e) => error(&e.to_string()),
                }
            }
            Err(e) => error(&e),
        },
        Line::Start(message) => {
            tell!("⚠ WARNING: /start command is deprecated and will be removed in v0.3.0");
            tell!("  → Just type your message directly (no /start needed)");
            if message.is_empty() {
                tell!("Usage: Type your message directly");
            } else {
                send(hub, message).await;
            }
        }
        Line::Message(message) => send(hub, message).await,
        Line::Unknown(command) => error(&format!(
            "Unknown command: {command}\nType /help for the commands"
        )),
    }
    Flow::Continue
}

/// Waits until `to`'s delivery is no longer in flight (its cancelled run's outcome recorded),
/// for at most 10 s: a killed agent's outcome comes within moments.
async fn until_not_in_flight(hub: &Hub, to: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while tokio::time::Instant::now() < deadline {
        let still = hub
            .query({
                let to = to.to_string();
                move |s, _| s.conversation().in_flight().is_some_and(|f| f.to == to)
            })
            .await
            .unwrap_or(false);
        if !still {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// An error as docs/architecture.md §19 (seed 004)'s catalogue prints it: plain text after
/// `Error: `, the lines after the first as they are (no emoji, no indent: some terminals show
/// neither well).
fn error(message: &str) {
    tell!("Error: {message}");
}

/// How a chat ended, for its exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Done,
    /// The conversation's last fact is an agent's failure: the team did not answer.
    AgentFailed,
}

/// Runs the chat until `/exit`, or the end of piped input once nothing is running. `bell`:
/// ring the terminal's bell when a human's turn comes or an agent fails (docs/architecture.md
/// §14c), in a terminal only.
pub async fn run(hub: Hub, bell: bool) -> Result<Ending, String> {
    let stopped = |e: hub::HubError| e.to_string();
    let interactive = std::io::stdin().is_terminal();
    // Subscribed before any input is read, so the printer sees every fact from the first.
    let subscription = subscribe(&hub).await.map_err(stopped)?;
    let (printed, mut printed_rx) = tokio::sync::watch::channel(0usize);
    let bell = bell && std::io::stderr().is_terminal();
    let printer = tokio::spawn(print_events(
        hub.clone(),
        subscription,
        printed,
        move |said: &[Said]| show(said, bell),
    ));
    let banner = hub
        .query(|session, id| {
            session.team().map(|team| {
                format!(
                    "✓ Team \"{}\" loaded (session {id})\nType your first message to begin conversation...",
                    team.name,
                )
            })
        })
        .await
        .map_err(stopped)?;
    // At once in a terminal; for piped input, once there is input (empty input is refused
    // with nothing announced, as the seed's CLI does).
    let mut banner = banner;
    if interactive {
        if let Some(b) = banner.take() {
            say!("{b}");
        }
    }
    hub.resume();
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let mut said_anything = false;
    loop {
        if interactive {
            let mut out = tokio::io::stdout();
            let _ = out.write_all(b"agent-chatter> ").await;
            let _ = out.flush().await;
        }
        let Ok(Some(line)) = lines.next_line().await else {
            break;
        };
        let line = parse_line(&line);
        said_anything |= !matches!(line, Line::Empty);
        if said_anything {
            if let Some(b) = banner.take() {
                say!("{b}");
            }
        }
        if handle(&hub, line).await == Flow::Exit {
            printer.abort();
            return Ok(Ending::Done);
        }
    }
    // Piped input with nothing in it, for a conversation with no message yet:
    // docs/architecture.md §19 (seed 004)'s CLI refuses it rather than exit as if something had
    // happened.
    let no_message = || async {
        hub.query(|s, _| s.messages().is_empty())
            .await
            .unwrap_or(false)
    };
    if !interactive && !said_anything && no_message().await {
        hub.discard_if_unused().await;
        error("First message cannot be empty");
        printer.abort();
        std::process::exit(1);
    }
    // End of input: let the agents finish what they were asked.
    loop {
        let status = hub.query(|s, _| s.conversation().status()).await;
        if status.map_or(true, |s| s != Status::Running) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Let the printer show every fact (it may be behind a terminal that reads slowly), within
    // a bound for a terminal that does not read at all.
    let (held, failed) = hub
        .query(|s, _| {
            let facts = s.facts();
            (
                facts.len(),
                matches!(facts.last(), Some(Fact::Failed { .. })),
            )
        })
        .await
        .unwrap_or((0, false));
    let _ = tokio::time::timeout(
        Duration::from_secs(10),
        printed_rx.wait_for(|&printed| printed >= held),
    )
    .await;
    printer.abort();
    Ok(if failed {
        Ending::AgentFailed
    } else {
        Ending::Done
    })
}

async fn send(hub: &Hub, text: String) {
    let unknown = unknown_addressees(hub, &text).await;
    let fact = Fact::Human {
        text: text.into(),
        sender: None,
        at: clock::now(),
    };
    if let Err(e) = hub.apply(fact).await {
        return error(&refusal(&e));
    }
    for hint in unknown {
        tell!("{hint}");
    }
}

/// For each `[NEXT]` name in `text` that is no member: a note naming it and the member it
/// most likely meant, as the page's composer warns (a misspelt name reaches no one).
async fn unknown_addressees(hub: &Hub, text: &str) -> Vec<String> {
    let text = text.to_string();
    hub.query(move |s, _| {
        let Some(team) = s.team() else {
            return Vec::new();
        };
        team.unknown_addressees(&text)
            .into_iter()
            .map(|(name, meant)| match meant {
                Some(m) => format!(
                    "Note: \"{name}\" is no member, so [NEXT: {name}] reached no one; did you mean {} ([NEXT: {}])?",
                    m.display_name, m.name
                ),
                None => format!(
                    "Note: \"{name}\" is no member, so [NEXT: {name}] reached no one. Members: {}",
                    member_ids(team)
                ),
            })
            .collect()
    })
    .await
    .unwrap_or_default()
}

/// `/retry [name]`: a `retry` fact for `name` (any id, name or display name), or, without one,
/// for the member whose run failed last; the core refuses it, in words, when there is
/// nothing to run again.
async fn retry(hub: &Hub, name: &str) {
    let name = name.to_string();
    let found = hub
        .query(move |s, _| -> Result<String, String> {
            let team = s.team().ok_or_else(|| NO_TEAM.to_string())?;
            if name.is_empty() {
                return s
                    .runs()
                    .iter()
                    .rev()
                    .find(|r| r.failed.is_some())
                    .map(|r| r.to.clone())
                    .ok_or_else(|| "No agent has failed: there is nothing to retry".to_string());
            }
            member_named(team, &name).map(|m| m.id.clone())
        })
        .await;
    let to = match found {
        Ok(Ok(to)) => to,
        Ok(Err(message)) => return error(&message),
        Err(e) => return error(&e.to_string()),
    };
    if let Err(e) = hub
        .apply(Fact::Retry {
            to,
            at: clock::now(),
        })
        .await
    {
        error(&refusal(&e));
    }
}

/// `/team leave <name>`: the member (by name or id) leaves the team of the open session from
/// now on, as the page's "remove from now on" does: a `memberLeft` fact; their messages stay
/// theirs. Refused, naming why, for a member the team does not have or one whose run is out.
async fn leave(hub: &Hub, name: &str) {
    let name = name.to_string();
    let found = hub
        .query(move |s, session| -> Result<(i64, String, String), String> {
            let team = s.team().ok_or_else(|| NO_TEAM.to_string())?;
            member_named(team, &name).map(|m| (session, m.id.clone(), m.display_name.clone()))
        })
        .await;
    let (session, id, shown) = match found {
        Ok(Ok(found)) => found,
        Ok(Err(message)) => return error(&message),
        Err(e) => return error(&e.to_string()),
    };
    match hub.leave_team(session, id).await {
        Ok(()) => say!("✓ {shown} left the team from now on: their messages stay theirs"),
        Err(e) => error(&refusal(&e)),
    }
}

/// The member `name` (by name or id) of `team`, or the catalogue's "not found" naming the
/// members there are (what `/retry` and `/team leave` say alike).
fn member_named<'t>(
    team: &'t agent_chatter::team::Team,
    name: &str,
) -> Result<&'t agent_chatter::team::Member, String> {
    team.find(name)
        .ok_or_else(|| format!("Member '{name}' not found.\nMembers: {}", member_ids(team)))
}

/// The team's member ids, as the chat lists them: `kailai, max, sarah`.
fn member_ids(team: &agent_chatter::team::Team) -> String {
    let ids: Vec<&str> = team.members.iter().map(|m| m.id.as_str()).collect();
    ids.join(", ")
}

/// seed 004's catalogue text for a message before any team.
const NO_TEAM: &str = "No team loaded. Use /team deploy <config> first";

/// Why a message was refused, in the chat's words: a message before any team says how to
/// load one here (the core's text speaks of the API's `setTeam`).
fn refusal(e: &hub::HubError) -> String {
    use agent_chatter::conversation::InputError;
    use agent_chatter::session::SessionError;
    match e {
        hub::HubError::Refused(SessionError::NoTeam | SessionError::Input(InputError::NoTeam)) => {
            NO_TEAM.to_string()
        }
        e => e.to_string(),
    }
}

/// Prints `said`; the bell only when `bell`.
fn show(said: &[Said], bell: bool) {
    for line in said {
        match line {
            Said::Out(line) => say!("{line}"),
            Said::Err(line) => tell!("{line}"),
            // BEL on stderr: the one control character written on purpose.
            Said::Bell if bell => {
                use std::io::Write as _;
                let _ = std::io::stderr().write_all(b"\x07");
            }
            Said::Bell => {}
        }
    }
}

/// The hub's events from now on, each fact with what to print of it, and how many facts the
/// log had then (printed already, or before this chat).
type Subscription = (broadcast::Receiver<Arc<Published>>, usize);

async fn subscribe(hub: &Hub) -> Result<Subscription, hub::HubError> {
    let (events, pending, facts) = hub.report(Lines).await?;
    show(&pending, false);
    Ok((events, facts))
}

/// The display name of member `id` in the hub's team, or `id`.
async fn name(hub: &Hub, id: &str) -> String {
    let id = id.to_string();
    hub.query(move |session, _| name_of(&id, session))
        .await
        .unwrap_or_default()
}

/// The spinner shown while `name` works, with the figure the page's inspector shows: the
/// bytes of prompt and system part together (the name as every line shows it, see
/// `terminal_safe`).
fn working_spinner(name: &str, bytes: usize) -> ProgressBar {
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.enable_steady_tick(Duration::from_millis(100));
    bar.set_message(
        terminal_safe(&format!(
            "{name} is working… ({bytes} bytes sent: prompt and system part)"
        ))
        .into_owned(),
    );
    bar
}

/// Prints what happens: agents' replies and failures, streamed output under a spinner, and
/// what the conversation says back — notices (a name that matched nobody, a limit hit), whose
/// turn it is, a `[DONE]`. The hub says what to print of each fact as it applies it
/// ([`Hub::report`]), so it prints in order after the fact that caused it; `out` prints it
/// ([`show`]). `printed` follows how many facts of the log have been printed.
async fn print_events(
    hub: Hub,
    (mut events, mut seen): Subscription,
    printed: tokio::sync::watch::Sender<usize>,
    mut out: impl FnMut(&[Said]),
) {
    printed.send_replace(seen);
    let mut spinner: Option<ProgressBar> = None;
    let mut shown = approvals::Shown::default();
    // Activity lines print above the spinner, which goes on.
    fn above(spinner: &Option<ProgressBar>, said: Vec<Said>, out: &mut dyn FnMut(&[Said])) {
        match spinner {
            _ if said.is_empty() => {}
            Some(bar) => bar.suspend(|| out(&said)),
            None => out(&said),
        }
    }
    loop {
        let published = match events.recv().await {
            Ok(published) => published,
            // Behind (a long stream of output): the events missed are gone, so the facts are
            // taken from the hub and printed as if they had come.
            Err(broadcast::error::RecvError::Lagged(_)) => {
                if let Some(bar) = spinner.take() {
                    bar.finish_and_clear();
                }
                let Some((said, facts)) = catch_up(&hub, seen).await else {
                    break;
                };
                out(&said);
                seen = facts;
                printed.send_replace(seen);
                continue;
            }
            Err(broadcast::error::RecvError::Closed) => break,
        };
        match published.event() {
            Event::Delivering { to, bytes, .. } => {
                shown.new_run();
                spinner = Some(working_spinner(&name(&hub, to).await, *bytes));
            }
            Event::Output { delta, .. } => {
                if let Some(bar) = &spinner {
                    let last = delta.lines().last().unwrap_or("").trim();
                    if !last.is_empty() {
                        bar.set_message(terminal_safe(last).chars().take(70).collect::<String>());
                    }
                }
            }
            Event::Fact { seq, .. } => {
                if let Some(bar) = spinner.take() {
                    bar.finish_and_clear();
                }
                if *seq as usize <= seen {
                    // Printed already, when catching up after falling behind.
                    continue;
                }
                out(published.said());
                seen = *seq as usize;
            }
            Event::Session { .. } => {
                // The hub reloaded the session from the database (another writer): what it
                // holds now is where printing goes on from.
                match hub.query(|s, _| s.facts().len()).await {
                    Ok(facts) => seen = facts,
                    Err(_) => break,
                }
            }
            Event::Retrying {
                to,
                attempt,
                max,
                reason,
            } => {
                let of = max.map_or(String::new(), |m| format!("/{m}"));
                let line = format!(
                    "{} is retrying ({attempt}{of}): {reason}",
                    name(&hub, to).await
                );
                // On a terminal the spinner says it; piped, where no spinner shows, a line.
                match &spinner {
                    Some(bar) if !bar.is_hidden() => {
                        bar.set_message(terminal_safe(&line).into_owned())
                    }
                    _ => tell!("{line}"),
                }
            }
            Event::Error { message } => error(message),
            Event::Sessions { .. }
            | Event::Agents { .. }
            | Event::SearchResults { .. }
            | Event::RunDetails(_) => {}
            Event::Activity { to, item, .. } => {
                let said = shown.activity(to, &name(&hub, to).await, item);
                above(&spinner, said, &mut out);
            }
            Event::Approval { to, request, .. } => {
                let said = shown.approval(&name(&hub, to).await, request);
                above(&spinner, said, &mut out);
            }
            Event::ApprovalSettled {
                to,
                request,
                option,
                by,
            } => {
                let said = shown.settled(&name(&hub, to).await, request, option.as_deref(), by);
                above(&spinner, said, &mut out);
            }
        }
        printed.send_replace(seen);
    }
}

/// What to print of the facts after the first `seen` of the hub's log, missed by a printer
/// that fell behind: they are applied again, to a session replayed from the facts before
/// them (for this only, and dropped after), and the log's length.
async fn catch_up(hub: &Hub, seen: usize) -> Option<(Vec<Said>, usize)> {
    let log = hub.query(|s, _| s.facts().to_vec()).await.ok()?;
    let (before, missed) = log.split_at(seen.min(log.len()));
    let mut session = Session::replay(before.to_vec()).ok()?;
    while session.poll_action().is_some() {}
    let mut said = Vec::new();
    for fact in missed {
        let prior = Prior::of(&session);
        if session.apply(fact).is_err() {
            break;
        }
        let actions: Vec<Action> = std::iter::from_fn(|| session.poll_action()).collect();
        said.extend(said_of_fact(&prior, fact, &session, &actions));
    }
    Some((said, log.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two humans taking turns: every message is printed as `→ name: text`.
    fn human(i: usize) -> Fact {
        let (from, to) = if i % 2 == 1 {
            ("kailai", "bob")
        } else {
            ("bob", "kailai")
        };
        Fact::Human {
            text: format!("[FROM: {from}] message {i} [NEXT: {to}]").into(),
            sender: None,
            at: clock::now(),
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_printer_that_fell_behind_prints_every_message_once_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::store::Store::open(&dir.path().join("s.db")).unwrap();
        let team = agent_chatter::config::load_team(
            r#"{"name": "pair", "members": [
                {"name": "kailai", "kind": "human"}, {"name": "bob", "kind": "human"}]}"#,
        )
        .unwrap();
        let agents = crate::agents::AgentsFile::default();
        let hub = Hub::start(
            store,
            None,
            team,
            agents,
            false,
            MachineSettings::none("test"),
        )
        .unwrap();
        let subscription = subscribe(&hub).await.unwrap();
        let before = subscription.1;
        // More facts than the hub keeps events for, while the printer does not read: its
        // first read finds it behind (`Lagged`), and it catches up from the log.
        let behind = hub::EVENT_BUFFER + 44;
        for i in 1..=behind {
            hub.apply(human(i)).await.unwrap();
        }
        let lines = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (printed, mut printed_rx) = tokio::sync::watch::channel(0usize);
        let printer = tokio::spawn(print_events(hub.clone(), subscription, printed, {
            let lines = Arc::clone(&lines);
            move |said: &[Said]| lines.lock().unwrap().extend_from_slice(said)
        }));
        printed_rx
            .wait_for(|&n| n >= before + behind)
            .await
            .unwrap();
        // Then it follows the events again, from where the log left it.
        let total = behind + 5;
        for i in behind + 1..=total {
            hub.apply(human(i)).await.unwrap();
        }
        printed_rx.wait_for(|&n| n >= before + total).await.unwrap();
        printer.abort();
        let want: Vec<Said> = (1..=total)
            .flat_map(|i| {
                let (from, to) = if i % 2 == 1 {
                    ("kailai", "bob")
                } else {
                    ("bob", "kailai")
                };
                [
                    Said::Out(format!("→ {from}: message {i}")),
                    Said::Out(format!("Waiting for {to}")),
                ]
            })
            .collect();
        let got = lines.lock().unwrap().clone();
        assert_eq!(got.len(), want.len(), "each message once, none lost");
        assert_eq!(got, want);
    }

    #[test]
    fn a_message_before_any_team_is_refused_with_the_seed_catalogue_text() {
        use agent_chatter::conversation::InputError;
        use agent_chatter::session::SessionError;
        let cases = [
            (SessionError::Input(InputError::NoTeam), NO_TEAM.to_string()),
            (SessionError::NoTeam, NO_TEAM.to_string()),
            (
                SessionError::EmptyMessage,
                SessionError::EmptyMessage.to_string(),
            ),
        ];
        for (refused, want) in cases {
            assert_eq!(
                refusal(&hub::HubError::Refused(refused.clone())),
                want,
                "{refused:?}"
            );
        }
        assert_eq!(NO_TEAM, "No team loaded. Use /team deploy <config> first");
        // The core's own text stays the API's (documented on `InputError::NoTeam`).
        assert_eq!(
            InputError::NoTeam.to_string(),
            "No team loaded. Set a team before sending messages"
        );
    }

    #[test]
    fn lines_read_as_the_seed_says() {
        let cases = [
            ("[NEXT:max] hi", Line::Message("[NEXT:max] hi".into())),
            ("  ", Line::Empty),
            ("/help", Line::Help),
            ("/exit", Line::Exit),
            ("/cancel", Line::Cancel),
            ("/cost", Line::Cost),
            ("/retry", Line::Retry(String::new())),
            ("/retry Max", Line::Retry("Max".into())),
            ("/allow", Line::Answer(Answer::Allow)),
            ("/allow always", Line::Answer(Answer::AllowAlways)),
            ("/deny", Line::Answer(Answer::Deny)),
            ("/allow maybe", Line::Unknown("/allow maybe".into())),
            ("/team list", Line::List),
            ("/team leave Max", Line::Leave("Max".into())),
            ("/team leave", Line::Leave(String::new())),
            (
                "/team deploy my team.json",
                Line::Deploy("my team.json".into()),
            ),
            ("/team deploy", Line::Deploy(String::new())),
            ("/team", Line::Unknown("/team".into())),
            (
                "/start Design it [NEXT:max]",
                Line::Start("Design it [NEXT:max]".into()),
            ),
            ("/dance", Line::Unknown("/dance".into())),
        ];
        for (line, want) in cases {
            assert_eq!(parse_line(line), want, "{line:?}");
        }
    }
}
