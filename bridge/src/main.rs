//! `agent-chatter`: the native bridge (docs/architecture.md §14). See `--help`.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use agent_chatter_bridge::chat::Ending;
use agent_chatter_bridge::{agents, clock, data, files, hub, server, store};
use clap::{Args, Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "agent-chatter",
    version,
    disable_version_flag = true,
    args_conflicts_with_subcommands = true,
    about = "Humans and AI coding agents in one team conversation: the page, the agents, the session log."
)]
struct Cli {
    /// What to do; without one, `serve` starts (with the options below) and the page opens in
    /// the browser.
    #[command(subcommand)]
    command: Option<Commands>,
    #[command(flatten)]
    serve: ServeArgs,
    /// With no command: serve, but do not open the page in the browser (it is never opened
    /// when there is no display, or when CI is set).
    #[arg(long)]
    no_open: bool,
    /// Print debug diagnostics on stderr (`[Debug][Queue] Processing max (ai)`, …), never into
    /// a prompt; the same as AGENT_CHATTER_LOG=debug.
    #[arg(long, global = true)]
    debug: bool,
    /// Print version
    // `-v` as seed 004's help shows it; `-V` (clap's) stays.
    #[arg(short = 'v', visible_short_alias = 'V', long, action = clap::ArgAction::Version)]
    #[allow(dead_code)] // clap prints the version and exits; the field is never read
    version: Option<bool>,
}

#[derive(Subcommand)]
enum Commands {
    /// Serve the page on 127.0.0.1 and run the team's agents for it.
    Serve(ServeArgs),
    /// Say what each agent type and each member of a team would run here, whether it can,
    /// and how to fix what cannot; where the data is kept; whether the port is free. Exits
    /// 1 when anything would fail.
    Doctor {
        /// Team config whose members to check (with the run settings it gives them).
        #[arg(long)]
        team: Option<PathBuf>,
        /// Machine-local agents file (as for `serve`).
        #[arg(long)]
        agents: Option<PathBuf>,
        /// The session database (as for `serve`).
        #[arg(long, env = "AGENT_CHATTER_DB")]
        db: Option<PathBuf>,
        /// The port `serve` would listen on.
        #[arg(long, default_value_t = DEFAULT_PORT)]
        port: u16,
    },
    /// Talk with the team in the terminal (the first message may be piped in).
    #[command(after_help = CHAT_EXAMPLES)]
    Chat {
        /// Team config (ours or the peer's cli-config); not needed with `--resume`, where the
        /// session goes on with its own team.
        #[arg(long, required_unless_present = "resume")]
        team: Option<PathBuf>,
        /// Continue this session from the database.
        #[arg(long, value_parser = session_id)]
        resume: Option<i64>,
        /// The session database (SQLite); by default sessions.db in the data directory
        /// ($XDG_DATA_HOME/agent-chatter, else ~/.local/share/agent-chatter).
        #[arg(long, env = "AGENT_CHATTER_DB")]
        db: Option<PathBuf>,
        /// Machine-local agents file (as for `serve`).
        #[arg(long)]
        agents: Option<PathBuf>,
        /// Let the built-in simulator answer every AI member: no agent CLI runs.
        #[arg(long)]
        simulate: bool,
        /// Do not ring the terminal bell when a human's turn comes or an agent fails.
        #[arg(long)]
        no_bell: bool,
    },
    /// List the sessions in the database (resume one with `serve --session ID` or `chat --resume ID`).
    Sessions {
        /// The session database (SQLite); by default sessions.db in the data directory
        /// ($XDG_DATA_HOME/agent-chatter, else ~/.local/share/agent-chatter).
        #[arg(long, env = "AGENT_CHATTER_DB")]
        db: Option<PathBuf>,
        /// List the messages and replies that match TEXT instead (words, ignoring case and
        /// accents), best first: session, fact number and the words around the match.
        // A query may start with `-` (`- x`, `-foo`): it is text, never a flag.
        #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
        search: Option<String>,
    },
    /// Write a session's transcript: who said what to whom, how each agent run ended and what
    /// it cost, and the exact prompt of every delivery.
    Export {
        /// The session's id, as `sessions` lists it.
        session: String,
        /// Markdown, one self-contained HTML page (each prompt a collapsible block), or JSON.
        #[arg(long, value_parser = ["md", "html", "json"], default_value = "md")]
        format: String,
        /// The session database (SQLite); by default sessions.db in the data directory
        /// ($XDG_DATA_HOME/agent-chatter, else ~/.local/share/agent-chatter).
        #[arg(long, env = "AGENT_CHATTER_DB")]
        db: Option<PathBuf>,
        /// Write it to this file instead of stdout.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Print what an agent printed when its run could not become a message (a reply above
    /// the message limit, a failed run's output), as a failure's reason says; each output's
    /// member and time go to stderr, its bytes to stdout.
    Outputs {
        /// The session's id, as `sessions` lists it.
        session: String,
        /// Only this member's outputs (its id or name).
        #[arg(long)]
        member: Option<String>,
        /// Only the output of the run that ended at this time (ms since the epoch, as each
        /// output's line on stderr says, and the page's "show output" names it).
        #[arg(long)]
        at: Option<i64>,
        /// The session database (SQLite); by default sessions.db in the data directory
        /// ($XDG_DATA_HOME/agent-chatter, else ~/.local/share/agent-chatter).
        #[arg(long, env = "AGENT_CHATTER_DB")]
        db: Option<PathBuf>,
    },
    /// Which agent CLIs are on this machine, and which team members run for real or are
    /// answered by the simulator.
    Agents {
        /// Team config; without it, the demo team.
        #[arg(long)]
        team: Option<PathBuf>,
        /// Machine-local agents file (as for `serve`).
        #[arg(long)]
        agents: Option<PathBuf>,
        /// Let the built-in simulator answer every AI member: no agent CLI runs.
        #[arg(long)]
        simulate: bool,
    },
    /// Print the exact prompt a member receives for a scenario file: the
    /// prompt's bytes on stdout, its system flag (Claude) and sizes on stderr. The same bytes as
    /// the npm package's `preview` and the page for the same file.
    Preview {
        /// The scenario file (`-` reads it from stdin).
        scenario: PathBuf,
        /// Member id or name.
        #[arg(long)]
        member: String,
        /// Print `{prompt, systemFlag, explain}` as JSON instead of the prompt text.
        #[arg(long)]
        json: bool,
        /// Read members' `instructionFile`s (relative to their `baseDir`), as `chat` and
        /// `serve` do. Without it the files are named on stderr but not read, so the bytes
        /// are those of the npm package's `preview` and the page, which read no files.
        #[arg(long)]
        instruction_files: bool,
    },
}

/// What `serve` (and `agent-chatter` alone) runs.
#[derive(Args)]
struct ServeArgs {
    /// Port on 127.0.0.1 (0 = any free port).
    #[arg(long, default_value_t = DEFAULT_PORT)]
    port: u16,
    /// Team config (ours or the peer's cli-config): starts a new session with it. Without
    /// it (and without --session or --new), the session written last is resumed, or, in a
    /// database with none, a new one starts with the demo team.
    #[arg(long)]
    team: Option<PathBuf>,
    /// Resume this session from the database.
    #[arg(long, conflicts_with = "new", value_parser = session_id)]
    session: Option<i64>,
    /// Start a new session (with --team's team, else the demo team) instead of resuming
    /// the one written last.
    #[arg(long)]
    new: bool,
    /// The session database (SQLite); by default sessions.db in the data directory
    /// ($XDG_DATA_HOME/agent-chatter, else ~/.local/share/agent-chatter).
    #[arg(long, env = "AGENT_CHATTER_DB")]
    db: Option<PathBuf>,
    /// Serve the page from this folder (`trunk build --release` in web/ writes web/dist)
    /// instead of the one built into the binary: for developing the page.
    #[arg(long)]
    dist: Option<PathBuf>,
    /// Machine-local agents file: agent type or member id → command (the page cannot change it).
    #[arg(long)]
    agents: Option<PathBuf>,
    /// Let the built-in simulator answer every AI member: no agent CLI runs.
    #[arg(long)]
    simulate: bool,
}

/// A session's id as `--resume` and `--session` take it, refused in the user's words (clap's
/// own would say "invalid digit found in string").
fn session_id(text: &str) -> Result<i64, String> {
    text.trim().parse().map_err(|_| {
        "a session's id is its number, as `agent-chatter sessions` lists them".to_string()
    })
}

/// The port `serve` listens on unless told otherwise.
const DEFAULT_PORT: u16 = 8080;

/// `export`: session `session` of the database `db` as a transcript in `format`, on stdout or
/// in `output`. An unknown session is named, with the ones there are.
fn export(db: &Path, session: &str, format: &str, output: Option<&Path>) -> Result<(), String> {
    use agent_chatter::transcript::Format;
    let format = Format::from_name(format)
        .ok_or_else(|| format!("--format {format}: not a transcript format (md, html or json)"))?;
    let (store, id) = stored_session(db, session)?;
    let facts = store.facts(id).map_err(|e| e.to_string())?;
    let session = agent_chatter::session::Session::replay(facts)
        .map_err(|e| format!("session {id} does not replay: {e}"))?;
    // Each ACP run's tool calls and approvals (docs/architecture.md §14d); a database from before the
    // activity table has none to show.
    let activity = store.activity(id).unwrap_or_default();
    let text = format.render_with_activity(&session, Some(clock::now()), &activity);
    match output {
        Some(path) => write_private(path, text.as_bytes()).map_err(|why| {
            format!(
                "{}: the transcript could not be written: {why}",
                path.display()
            )
        }),
        None => {
            use std::io::Write;
            std::io::stdout()
                .write_all(text.as_bytes())
                .map_err(|e| format!("the transcript could not be written to stdout: {e}"))
        }
    }
}

/// Writes `bytes` to the file at `path`, created owner-only (0600; a transcript holds every
/// prompt), never through a symbolic link (one could point at a file of the user's that it
/// would overwrite) and only over a regular file.
fn write_private(path: &Path, bytes: &[u8]) -> Result<(), String> {
    use std::io::Write;
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .mode(0o600)
        // Not blocking: a FIFO with no reader is refused below, not waited for.
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => {
                "it is a symbolic link, and a transcript is never written through one (name \
                 the file itself)"
                    .to_string()
            }
            Some(libc::ENXIO) => "it is a FIFO; a transcript is written to a regular file".into(),
            Some(libc::EISDIR) => {
                "it is a directory; a transcript is written to a regular file".into()
            }
            _ => files::reason(&e),
        })?;
    let kind = file.metadata().map_err(|e| files::reason(&e))?.file_type();
    if !kind.is_file() {
        let what = if kind.is_fifo() {
            "a FIFO"
        } else {
            "not a regular file"
        };
        return Err(format!(
            "it is {what}; a transcript is written to a regular file"
        ));
    }
    file.set_len(0)
        .and_then(|()| file.write_all(bytes))
        .map_err(|e| files::reason(&e))
}

/// `text` for one line of the terminal: each control character (an escape sequence's start,
/// a line break, a carriage return, a bell) written out as `\u{1b}`, as `chat` writes them, so
/// a session's name or message cannot retitle the window, clear the screen or forge a line.
fn terminal_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// `outputs`: the outputs kept for session `session` of `db` (or only `member`'s, or only the
/// run's that ended `at`), each one's member and time on stderr and its bytes on stdout.
fn outputs(db: &Path, session: &str, member: Option<&str>, at: Option<i64>) -> Result<(), String> {
    use std::io::Write;
    let (store, id) = stored_session(db, session)?;
    let kept = store.outputs(id).map_err(|e| e.to_string())?;
    let team = store
        .facts(id)
        .ok()
        .and_then(|facts| agent_chatter::session::Session::replay(facts).ok())
        .and_then(|s| s.team().cloned());
    // A member named by id, name or display name, as markers name them.
    let wanted = member.map(|name| {
        team.as_ref()
            .and_then(|t| t.find(name))
            .map(|m| m.id.to_string())
            .unwrap_or_else(|| name.to_string())
    });
    let kept: Vec<_> = kept
        .into_iter()
        .filter(|k| wanted.as_ref().is_none_or(|w| &k.member == w))
        .filter(|k| at.is_none_or(|at| k.at_ms == at))
        .collect();
    if kept.is_empty() {
        if let Some(at) = at {
            return Err(format!(
                "session {id} keeps no output{} of a run that ended at {at}: `agent-chatter outputs {id}` lists the kept ones with their times",
                member.map(|m| format!(" of {m}")).unwrap_or_default()
            ));
        }
        eprintln!(
            "session {id} keeps no output{}: only a run whose output could not become a message (a reply above the message limit) keeps one",
            member.map(|m| format!(" of {m}")).unwrap_or_default()
        );
        return Ok(());
    }
    let mut stdout = std::io::stdout().lock();
    for k in kept {
        eprintln!(
            "-- {}, run ended at {} ms since the epoch, {} bytes",
            terminal_line(&k.member),
            k.at_ms,
            k.output.len()
        );
        stdout
            .write_all(&k.output)
            .and_then(|()| stdout.flush())
            .map_err(|e| format!("the output could not be written to stdout: {e}"))?;
    }
    Ok(())
}

/// Session `session` (its id as typed) of the database `db`, opened; an unknown one is named,
/// with the ones there are.
fn stored_session(db: &Path, session: &str) -> Result<(store::Store, i64), String> {
    if !db.is_file() {
        return Err(format!(
            "{}: no session database here (serve and chat create it)",
            db.display()
        ));
    }
    // Only read: nothing is written, and a read-only file is read.
    let store = store::Store::open_read_only(db).map_err(|e| e.to_string())?;
    let ids: Vec<i64> = store
        .list()
        .map_err(|e| e.to_string())?
        .iter()
        .map(|s| s.id)
        .collect();
    let Some(id) = session.trim().parse().ok().filter(|id| ids.contains(id)) else {
        let there = if ids.is_empty() {
            "it has no sessions yet".to_string()
        } else {
            let ids: Vec<String> = ids.iter().map(i64::to_string).collect();
            format!(
                "its sessions are {} (`agent-chatter sessions` lists them)",
                ids.join(", ")
            )
        };
        return Err(format!(
            "session {session}: no such session in {}; {there}",
            db.display()
        ));
    };
    Ok((store, id))
}

/// `chat --help`'s examples, as seed 004's help shows them.
const CHAT_EXAMPLES: &str = "\
Examples:
  # Interactive mode
  agent-chatter chat --team team.json

  # Pipe first message
  echo \"Build authentication system\" | agent-chatter chat --team team.json

  # Multi-human team (use [FROM:xxx])
  echo \"[FROM:kailai] Design new feature [NEXT:max]\" | agent-chatter chat --team team.json

  # Load another team in the chat, then type messages directly
  agent-chatter> /team deploy other-team.json

  # Debug diagnostics on stderr (or AGENT_CHATTER_LOG=debug)
  agent-chatter chat --team team.json --debug";

fn main() -> ExitCode {
    // Large blocks go back to the system when freed (docs/architecture.md §14, "Memory").
    server::large_blocks_from_the_system();
    // The watchdog that stops agents should this bridge be killed (agents::reaper), started
    // by this binary itself; not a user's command.
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == agents::reaper::COMMAND)
    {
        agents::reaper::reap();
        return ExitCode::SUCCESS;
    }
    agents::reaper::enable();
    let cli = Cli::parse();
    agent_chatter_bridge::debug::init(cli.debug);
    match run(cli) {
        Ok(Ending::Done) => ExitCode::SUCCESS,
        Ok(Ending::AgentFailed) => ExitCode::from(EXIT_AGENT_FAILED),
        Err(message) => {
            eprintln!("agent-chatter: {message}");
            ExitCode::FAILURE
        }
    }
}

/// `chat`'s exit status when the conversation ended on an agent's failure (its last fact):
/// a script piping a message in learns that the team did not answer.
const EXIT_AGENT_FAILED: u8 = 3;

fn run(cli: Cli) -> Result<Ending, String> {
    let Some(command) = cli.command else {
        return serve(cli.serve, !cli.no_open);
    };
    match command {
        Commands::Preview {
            scenario,
            member,
            json,
            instruction_files,
        } => preview(&scenario, &member, json, instruction_files).map(|()| Ending::Done),
        Commands::Chat {
            team,
            resume,
            db,
            agents,
            simulate,
            no_bell,
        } => chat(team, resume, db, agents, simulate, no_bell),
        Commands::Export {
            session,
            format,
            db,
            output,
        } => export(&data::database(db)?, &session, &format, output.as_deref())
            .map(|()| Ending::Done),
        Commands::Outputs {
            session,
            member,
            at,
            db,
        } => outputs(&data::database(db)?, &session, member.as_deref(), at).map(|()| Ending::Done),
        Commands::Sessions { db, search } => sessions(db, search),
        Commands::Agents {
            team,
            agents,
            simulate,
        } => agents_here(team, agents, simulate),
        Commands::Serve(args) => serve(args, false),
        Commands::Doctor {
            team,
            agents,
            db,
            port,
        } => doctor(team, agents, db, port),
    }
}

/// `chat`: the terminal conversation, on a new session with the team file's team or on the
/// one resumed.
fn chat(
    team: Option<PathBuf>,
    resume: Option<i64>,
    db: Option<PathBuf>,
    agents: Option<PathBuf>,
    simulate: bool,
    no_bell: bool,
) -> Result<Ending, String> {
    let team = match (team, resume) {
        (Some(path), Some(id)) => {
            eprintln!(
                "agent-chatter: warning: --team {} is not used: session {id} goes on with \
                 its own team (`/team deploy FILE` changes it)",
                path.display()
            );
            None
        }
        (team, _) => team,
    };
    // Resuming, the team comes from the session (the demo team only fills the slot),
    // and its run settings from the team file it remembers.
    let (team, machine) = read_team(team)?;
    let agents = read_agents(agents)?;
    if resume.is_none() {
        agents::check_team(&team, &agents, simulate)?;
    }
    let db = data::database(db)?;
    data::name_the_old_default(&db);
    let store = store::Store::open(&db).map_err(|e| e.to_string())?;
    let fresh = resume.is_none();
    until_stopped(async move {
        if fresh {
            check_acp_settings(&team, &agents, &machine, simulate).await?;
        }
        let hub = hub::Hub::start(store, resume, team, agents, simulate, machine)
            .map_err(|e| e.to_string())?;
        say_who_cannot_run(&hub, simulate).await;
        agent_chatter_bridge::chat::run(hub, !no_bell).await
    })
}

/// `sessions [--search TEXT]`: the stored sessions (or the facts matching TEXT), read only.
fn sessions(db: Option<PathBuf>, search: Option<String>) -> Result<Ending, String> {
    let db = data::database(db)?;
    if !db.is_file() {
        return Err(format!(
            "{}: no session database here (serve and chat create it)",
            db.display()
        ));
    }
    // Only read: nothing is written, and a read-only file is read.
    let store = store::Store::open_read_only(&db).map_err(|e| e.to_string())?;
    if let Some(query) = search {
        for hit in store.search(&query).map_err(|e| e.to_string())? {
            let snippet: String = hit
                .snippet
                .iter()
                .map(|p| match p.hit {
                    true => format!("«{}»", p.text),
                    false => p.text.clone(),
                })
                .collect();
            let snippet = snippet.split_whitespace().collect::<Vec<_>>().join(" ");
            println!(
                "{}  {}  #{}  {}",
                hit.session,
                terminal_line(&hit.name),
                hit.seq,
                terminal_line(&snippet)
            );
        }
        return Ok(Ending::Done);
    }
    for s in store.list().map_err(|e| e.to_string())? {
        // What its agent runs cost (docs/architecture.md §14c), from its outcome facts.
        let mut spend = agent_chatter::usage::Spend::default();
        for fact in store.facts(s.id).unwrap_or_default() {
            use agent_chatter::session::{Fact, Failure};
            match fact {
                Fact::Replied { usage, .. } => spend.add_run(usage.as_deref(), false),
                Fact::Failed { usage, failure, .. } => {
                    spend.add_run(usage.as_deref(), failure == Some(Failure::Interrupted))
                }
                _ => {}
            }
        }
        let cost = if spend.runs == 0 {
            String::new()
        } else {
            format!("  {}", spend.summary())
        };
        let when = |ms| store.local_time(ms).unwrap_or_default();
        println!(
            "{}  {}  {} facts  created {}  updated {}{cost}",
            s.id,
            terminal_line(&s.name),
            s.facts,
            when(s.created_at),
            when(s.updated_at)
        );
        if let Some(first) = &s.first_message {
            println!("    {}", terminal_line(first));
        }
    }
    Ok(Ending::Done)
}

/// `agents`: which CLI answers each AI member here, or the simulator, or why none can.
fn agents_here(
    team: Option<PathBuf>,
    agents: Option<PathBuf>,
    simulate: bool,
) -> Result<Ending, String> {
    let (team, _) = read_team(team)?;
    let file = read_agents(agents)?;
    for m in agents::members(&team, &file, simulate) {
        let command =
            m.command
                .as_ref()
                .map_or("(no command for this agent type)".to_string(), |c| {
                    std::iter::once(&c.command)
                        .chain(&c.args)
                        .map(|word| shell_word(word))
                        .collect::<Vec<_>>()
                        .join(" ")
                });
        match &m.answerer {
            agents::Answerer::Cli(path) => println!(
                "{}  {}  runs: {command}  [{}; {}]",
                m.member,
                m.agent_type,
                path.display(),
                agents::version(path)
            ),
            agents::Answerer::Simulator if m.command.is_none() => {
                println!("{}  {}  simulated (chosen)", m.member, m.agent_type)
            }
            agents::Answerer::Simulator => println!(
                "{}  {}  simulated ({command}: not installed; the demo team)",
                m.member, m.agent_type
            ),
            agents::Answerer::Nobody(why) => {
                println!("{}  {}  cannot run: {why}", m.member, m.agent_type)
            }
        }
    }
    Ok(Ending::Done)
}

/// `serve`: the page and the agents on 127.0.0.1 until stopped; `open`: the page is opened in
/// the browser once the port is bound (`agent-chatter` alone).
fn serve(args: ServeArgs, open: bool) -> Result<Ending, String> {
    let ServeArgs {
        port,
        team,
        session,
        new,
        db,
        dist,
        agents,
        simulate,
    } = args;
    let team_file = team.clone();
    // A session resumed goes on with its own team, and its run settings come from the
    // team file it remembers (docs/architecture.md §14c): --team is not read then.
    let team = match (session, team) {
        (Some(id), Some(path)) => {
            eprintln!(
                "agent-chatter: warning: --team {} is not used: session {id} goes on \
                 with its own team, its members' run settings read again from the team \
                 file it was deployed from",
                path.display()
            );
            None
        }
        (_, team) => team,
    };
    let (team, machine) = read_team(team)?;
    let agents = read_agents(agents)?;
    let page = match &dist {
        Some(dir) => server::Page::open(dir)?,
        None => server::Page::embedded()?,
    };
    let db = data::database(db)?;
    data::name_the_old_default(&db);
    let store = store::Store::open(&db).map_err(|e| e.to_string())?;
    // Without a team or a session to open, the session written last goes on
    // (docs/architecture.md §14).
    let latest = match (session, &team_file, new) {
        (None, None, false) => store.latest().map_err(|e| e.to_string())?,
        _ => None,
    };
    let session = session.or(latest);
    let fresh = session.is_none();
    if fresh {
        agents::check_team(&team, &agents, simulate)?;
    }
    if let Some(id) = latest {
        say_resumed(&store, id);
    }
    let token = agent_chatter_bridge::token::for_database(&db)?;
    until_stopped(async move {
        // The port first: when it is taken, no session is created for nothing.
        let bound = server::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port))).await?;
        if fresh {
            check_acp_settings(&team, &agents, &machine, simulate).await?;
        }
        let hub =
            hub::Hub::start(store, session, team, agents, simulate, machine).map_err(|e| {
                match latest {
                    Some(_) => format!("{e} (`serve --new` starts a new session)"),
                    None => e.to_string(),
                }
            })?;
        say_who_cannot_run(&hub, simulate).await;
        hub.resume();
        if open {
            let url = format!("http://127.0.0.1:{}/#token={token}", bound.port()?);
            agent_chatter_bridge::browser::open(&url, &db);
        }
        server::serve(bound, |port| server::AppState { hub, token, port }, page)
            .await
            .map(|()| Ending::Done)
    })
}

/// `doctor`: the checkup printed on stdout, its problems last, each with its fix; an error (exit
/// 1) when there is any.
fn doctor(
    team: Option<PathBuf>,
    agents: Option<PathBuf>,
    db: Option<PathBuf>,
    port: u16,
) -> Result<Ending, String> {
    let file = read_agents(agents)?;
    let team = match &team {
        Some(path) => Some((agents::machine::MachineSettings::read(path)?, path.clone())),
        None => None,
    };
    let db = data::database(db)?;
    let checked = team
        .as_ref()
        .map(|((team, machine), path)| (team, machine, path.as_path()));
    let mut up = agent_chatter_bridge::doctor::checkup(checked, &file, &db, port);
    // The ACP members' modes and models, as `serve` checks them at start: each agent asked in
    // a session of its own, no prompt sent.
    if let Some(((team, machine), _)) = &team {
        let asked = until_stopped(async {
            Ok(agents::check_acp_settings(team, &file, machine, false).await)
        })?;
        match asked {
            Ok(unasked) => up.lines.extend(unasked),
            Err(refused) => up.problems.push(format!(
                "{refused}: set one the agent offers in the team file, or leave it out"
            )),
        }
    }
    for line in &up.lines {
        println!("{line}");
    }
    if up.problems.is_empty() {
        if team.is_some() {
            println!("no problems: every member can run");
        } else {
            println!("no problems found (no team checked: `--team FILE` checks its members)");
        }
        return Ok(Ending::Done);
    }
    println!("problems ({}):", up.problems.len());
    for problem in &up.problems {
        println!("  {problem}");
    }
    Err(format!(
        "{} problem{} found (listed above, each with its fix)",
        up.problems.len(),
        if up.problems.len() == 1 { "" } else { "s" }
    ))
}

/// Says on stderr which session `serve` resumed by default, and how to start a new one.
fn say_resumed(store: &store::Store, id: i64) {
    let listed = store.list().unwrap_or_default();
    let Some(s) = listed.iter().find(|s| s.id == id) else {
        return;
    };
    eprintln!(
        "agent-chatter: resuming session #{id} {:?}, {} fact{}; --new starts a new one",
        s.name,
        s.facts,
        if s.facts == 1 { "" } else { "s" }
    );
}

/// Says at start, on stderr, which members cannot run here and why (each delivery to them will
/// fail with the same words), or that the simulator answers everyone.
/// [`agents::check_acp_settings`], its warnings said on stderr.
async fn check_acp_settings(
    team: &agent_chatter::team::Team,
    agents: &agents::AgentsFile,
    machine: &agents::machine::MachineSettings,
    simulate: bool,
) -> Result<(), String> {
    for warning in agents::check_acp_settings(team, agents, machine, simulate).await? {
        eprintln!("agent-chatter: {warning}");
    }
    Ok(())
}

async fn say_who_cannot_run(hub: &hub::Hub, simulate: bool) {
    if simulate {
        eprintln!(
            "agent-chatter: --simulate: the built-in simulator answers every AI member; no agent CLI runs"
        );
    }
    for report in hub.agents().await.unwrap_or_default() {
        if let Some(why) = report.problem {
            eprintln!("agent-chatter: cannot run {why}");
        }
    }
    let stand_ins = hub.stand_ins().await;
    if !stand_ins.is_empty() {
        eprintln!(
            "agent-chatter: the demo team: the built-in simulator stands in for {} (CLI not \
             installed here); a simulated reply does not run a real agent, a message of yours does",
            stand_ins.join(", ")
        );
    }
    let uncapped = hub.uncapped().await;
    if !uncapped.is_empty() {
        eprintln!(
            "agent-chatter: the team's cost cap (maxCostUsd) counts reported costs only, and the \
             CLIs of {} report none: their runs are not counted against it",
            uncapped.join(", ")
        );
    }
}

/// `word` as a reader would retype it: quoted when empty or when it holds spaces or quotes
/// (Gemini's `-p ""` would otherwise show as a double space). Display only: no shell runs it.
fn shell_word(word: &str) -> String {
    if !word.is_empty() && !word.contains(|c: char| c.is_whitespace() || "\"'\\$`".contains(c)) {
        word.to_string()
    } else {
        format!("{word:?}")
    }
}

/// Runs `work` on a new runtime until it ends or the process is told to stop (Ctrl-C, SIGTERM,
/// SIGHUP). Either way the runtime then drops every task left, so an agent still running is
/// killed with its whole process group (`agents::run`) instead of living on, orphaned; its
/// run is recorded as interrupted when the session is resumed (docs/architecture.md §14c).
fn until_stopped<T>(
    work: impl std::future::Future<Output = Result<T, String>>,
) -> Result<T, String> {
    let runtime =
        tokio::runtime::Runtime::new().map_err(|e| format!("cannot start the runtime: {e}"))?;
    let outcome = runtime.block_on(async {
        tokio::select! {
            outcome = work => outcome,
            signal = stop_signal() => Err(format!("stopped by {signal}; any agent still running was stopped too")),
        }
    });
    // Not `drop`: that would wait for a blocking read of the terminal that may never end.
    runtime.shutdown_timeout(std::time::Duration::from_millis(250));
    // Every hub handle is gone with the runtime's tasks: each actor closes its database.
    hub::wait_for_actors(std::time::Duration::from_secs(2));
    outcome
}

/// Resolves when the process receives SIGINT, SIGTERM or SIGHUP, naming it.
async fn stop_signal() -> &'static str {
    use tokio::signal::unix::{signal, SignalKind};
    let listen = |kind| async move {
        match signal(kind) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        () = listen(SignalKind::interrupt()) => "Ctrl-C (SIGINT)",
        () = listen(SignalKind::terminate()) => "SIGTERM",
        () = listen(SignalKind::hangup()) => "SIGHUP",
    }
}

/// The team of the file at `path` (the demo team without one) and the machine settings it
/// gives its members (docs/architecture.md §14c).
fn read_team(
    path: Option<PathBuf>,
) -> Result<(agent_chatter::team::Team, agents::machine::MachineSettings), String> {
    match path {
        Some(path) => agents::machine::MachineSettings::read(&path),
        None => Ok((
            agent_chatter::demo::team(),
            agents::machine::MachineSettings::none("the embedded demo team"),
        )),
    }
}

fn read_agents(path: Option<PathBuf>) -> Result<agents::AgentsFile, String> {
    match path {
        Some(path) => agents::AgentsFile::load(&path),
        None => Ok(agents::AgentsFile::default()),
    }
}

fn preview(path: &Path, member: &str, json: bool, instruction_files: bool) -> Result<(), String> {
    let text = if path.as_os_str() == "-" {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
            .map_err(|e| format!("cannot read the scenario from stdin: {}", files::reason(&e)))?;
        text
    } else {
        files::read_text(path, "scenario")?
    };
    let mut scenario = agent_chatter::scenario::load_scenario(&text)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if instruction_files {
        let warnings = files::read_instruction_files(&mut scenario.team, &files::parent_dir(path))
            .map_err(|e| format!("{}: {e}", path.display()))?;
        files::warn(path, &warnings);
    } else {
        for note in files::unread_instruction_files(&scenario.team) {
            eprintln!("agent-chatter: note: {}: {note}", path.display());
        }
    }
    let prompt = agent_chatter::scenario::preview(&scenario, member)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if json {
        let value = serde_json::json!({
            "prompt": prompt.prompt,
            "systemFlag": prompt.system_flag,
            "explain": prompt.explain,
        });
        println!("{value}");
    } else {
        // stdout carries the exact bytes the agent reads on stdin, so it can be piped or
        // diffed; what else it gets (Claude's system flag) and the budget go to stderr.
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        out.write_all(prompt.prompt.as_bytes())
            .and_then(|()| out.flush())
            .map_err(|e| format!("cannot write the prompt: {e}"))?;
        eprint!("{}", preview_summary(member, &prompt));
    }
    Ok(())
}

/// What `preview` prints on stderr beside the prompt: the system flag, when there is one, and
/// a line with the sizes against the budget.
fn preview_summary(member: &str, prompt: &agent_chatter::context::Prompt) -> String {
    let explain = &prompt.explain;
    let mut summary = String::new();
    if !prompt.prompt.is_empty() && !prompt.prompt.ends_with('\n') {
        summary.push('\n');
    }
    if let Some(flag) = &prompt.system_flag {
        summary.push_str(&format!(
            "-- system flag (--append-system-prompt), {} B --\n{flag}\n",
            flag.len()
        ));
    }
    let status = match explain.status {
        agent_chatter::explain::BudgetStatus::Ok => "ok",
        agent_chatter::explain::BudgetStatus::Warning => "warning",
        agent_chatter::explain::BudgetStatus::Critical => "critical",
    };
    let current = match explain.current {
        Some(_) => "",
        None => "; no message yet, so this is the skeleton the first delivery starts from",
    };
    summary.push_str(&format!(
        "-- {member}: prompt (stdin) {} B, {} of {} B in all, {status}{current}; --json gives the explain --\n",
        prompt.prompt.len(),
        explain.total_bytes,
        explain.max_bytes,
    ));
    summary
}
