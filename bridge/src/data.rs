//! Where the bridge keeps its data (docs/architecture.md §14e): the session database, and its
//! token beside it, in the platform's data directory (`$XDG_DATA_HOME/agent-chatter/`, else
//! `~/.local/share/agent-chatter/`, on macOS too; Windows' known folder there), never in the
//! directory the bridge happens to be started from. `--db` and `AGENT_CHATTER_DB` choose
//! another file. The store creates the directory 0700 when it makes the database.

use std::path::{Path, PathBuf};

use etcetera::BaseStrategy;

/// The database's file name in the data directory.
const DB_NAME: &str = "sessions.db";

/// Where older versions kept the database by default: the current directory.
const OLD_DEFAULT: &str = "agent-chatter.db";

/// The data directory: `$XDG_DATA_HOME/agent-chatter` or `~/.local/share/agent-chatter`.
pub fn data_dir() -> Result<PathBuf, String> {
    let strategy = etcetera::choose_base_strategy().map_err(|_| {
        "no home directory is known (HOME is not set): give the database with --db FILE or \
         AGENT_CHATTER_DB"
            .to_string()
    })?;
    Ok(strategy.data_dir().join("agent-chatter"))
}

/// The database to use: the one given (`--db` or `AGENT_CHATTER_DB`, which clap has already
/// read), else `sessions.db` in the data directory.
pub fn database(given: Option<PathBuf>) -> Result<PathBuf, String> {
    match given {
        Some(path) => Ok(path),
        None => Ok(data_dir()?.join(DB_NAME)),
    }
}

/// Says on stderr, when a database is found where older versions put it by default (the
/// current directory) and another is used, where it is and the one command that moves it:
/// its sessions are never moved silently.
pub fn name_the_old_default(db: &Path) {
    let old = Path::new(OLD_DEFAULT);
    if !old.is_file() || same_file(old, db) {
        return;
    }
    let here = std::env::current_dir()
        .map(|d| d.join(OLD_DEFAULT))
        .unwrap_or_else(|_| old.to_path_buf());
    let how = if db.exists() {
        format!(
            "{} exists already, so it is not replaced: open the old one with `--db {}`",
            db.display(),
            here.display()
        )
    } else {
        format!(
            "to keep them with the rest, stop every bridge using it and run `mv -n {} {}`, or \
             open it where it is with `--db {}`",
            here.display(),
            db.display(),
            here.display()
        )
    };
    eprintln!(
        "agent-chatter: {} holds sessions kept where older versions put them (the current \
         directory); the database is now {}: {how}",
        here.display(),
        db.display()
    );
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
