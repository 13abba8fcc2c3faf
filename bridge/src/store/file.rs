//! The database file (docs/architecture.md §14): checked before SQLite opens it (plain files,
//! its owner's alone, writable), connected with our schema, and watched while open: deleted or
//! replaced, it is written back from the open connection and the store goes on with it.

use std::fs::OpenOptions;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, MAIN_DB};

use super::lease::Holder;
use super::schema::{self, APPLICATION_ID, SCHEMA, SCHEMA_VERSION};
use super::{Db, Store, StoreError};
use crate::clock;

/// How often an idle bridge checks that its database file is still there.
const WATCH_EVERY: Duration = Duration::from_secs(1);

impl Store {
    /// Opens (or creates) the database at `path`. A file that is not ours is refused untouched;
    /// so is one SQLite could not write (read-only, immutable, in a directory that cannot be
    /// written), and a symbolic link. A new file is created 0600, and its directory, when it
    /// is missing, 0700.
    ///
    /// While the store is open, its file is checked before each write and every second: a file
    /// deleted (or replaced) meanwhile is written back from the open connection, at its path
    /// (or beside it, `PATH.recovered-MS`, when another file now stands there), and the store
    /// goes on with the new file, saying so on stderr. Otherwise every fact committed since
    /// the deletion would vanish with the unlinked file when the bridge stops.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        prepare(path)?;
        let conn = connect(path)?;
        let file = identity(path).map_err(|why| StoreError::Unusable {
            path: path.to_path_buf(),
            why,
        })?;
        let db = Arc::new(Mutex::new(Db {
            conn,
            path: path.to_path_buf(),
            file,
            lost: None,
            me: Holder::new(),
            renewed: std::time::Instant::now(),
        }));
        watch(Arc::downgrade(&db));
        Ok(Store { db })
    }

    /// Opens the database at `path` to read it only (`export`, `sessions`, `outputs`). Refused
    /// as [`Store::open`] refuses them: a symbolic link (the file or its `-wal`, `-shm` or
    /// `-journal` file), a file that is not ours or not a database, one written by a newer
    /// version; and one from before the session library, which only a bridge brings up to date.
    /// Nothing is written: no schema, no lease, no watch of the file, so a read-only file (0444)
    /// is read as well. While no bridge has it open (no `-wal` file beside it, so every fact is
    /// in the file itself) it is read as immutable, and SQLite creates no `-wal` or `-shm` file
    /// either; should a bridge start writing meanwhile, this store sees the file as it was.
    pub fn open_read_only(path: &Path) -> Result<Store, StoreError> {
        let unusable = |why: String| StoreError::Unusable {
            path: path.to_path_buf(),
            why,
        };
        let open_err = |source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        };
        let mut in_use = false;
        for (_, suffix, _, meta) in plain_files(path).map_err(unusable)? {
            match meta {
                Some(_) => in_use |= suffix == "-wal",
                None if suffix.is_empty() => return Err(unusable("no such file".to_string())),
                None => {}
            }
        }
        let file = identity(path).map_err(unusable)?;
        // A URI, for its parameters: the path with every byte but the plainest escaped.
        use std::os::unix::ffi::OsStrExt;
        let mut uri = String::from("file:");
        for &b in path.as_os_str().as_bytes() {
            if b.is_ascii_alphanumeric() || b"/._-~".contains(&b) {
                uri.push(char::from(b));
            } else {
                uri.push_str(&format!("%{b:02X}"));
            }
        }
        uri.push_str(if in_use {
            "?mode=ro"
        } else {
            "?mode=ro&immutable=1"
        });
        let conn = Connection::open_with_flags(
            &uri,
            OpenFlags::SQLITE_OPEN_READ_ONLY
                | OpenFlags::SQLITE_OPEN_URI
                | OpenFlags::SQLITE_OPEN_NOFOLLOW
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(open_err)?;
        let app_id: i64 = conn
            .query_row("PRAGMA application_id", [], |r| r.get(0))
            .map_err(open_err)?;
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(open_err)?;
        if app_id != APPLICATION_ID {
            return Err(StoreError::Foreign {
                path: path.to_path_buf(),
                found: app_id,
            });
        }
        if version > SCHEMA_VERSION {
            return Err(StoreError::Newer {
                path: path.to_path_buf(),
                found: version,
            });
        }
        let library: i64 = conn
            .query_row(
                "SELECT (SELECT count(*) FROM pragma_table_info('sessions') WHERE name = 'name')
                      + (SELECT count(*) FROM sqlite_master WHERE name = 'fact_text')",
                [],
                |r| r.get(0),
            )
            .map_err(open_err)?;
        if library < 2 {
            return Err(unusable(
                "it was written by an older agent-chatter; `serve` or `chat` brings it up to \
                 date when it opens it, and it can then be read here"
                    .into(),
            ));
        }
        Ok(Store {
            db: Arc::new(Mutex::new(Db {
                conn,
                path: path.to_path_buf(),
                file,
                lost: None,
                me: Holder::new(),
                renewed: std::time::Instant::now(),
            })),
        })
    }
}

/// `path` with `suffix` appended to its file name (`s.db` → `s.db-wal`).
pub(super) fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(suffix);
    PathBuf::from(name)
}

/// The files SQLite keeps beside a database.
const COMPANIONS: [&str; 3] = ["-wal", "-shm", "-journal"];

/// The database at `path` and the files SQLite keeps beside it, as they stand: each one's
/// path, suffix, name in messages and metadata (`None`: it does not exist). A symbolic link or
/// anything but a regular file is refused: SQLite would follow it, or misread it.
#[allow(clippy::type_complexity)]
fn plain_files(
    path: &Path,
) -> Result<Vec<(PathBuf, &'static str, String, Option<std::fs::Metadata>)>, String> {
    let mut files = Vec::new();
    for (file, suffix) in
        std::iter::once((path.to_path_buf(), "")).chain(COMPANIONS.map(|s| (beside(path, s), s)))
    {
        let what = if suffix.is_empty() {
            "it".to_string()
        } else {
            format!("its {suffix} file {}", file.display())
        };
        let meta = match std::fs::symlink_metadata(&file) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(format!(
                    "{what} is a symbolic link; the session database and its -wal and -shm files \
                     must be plain files (give the link's target as --db)"
                ))
            }
            Ok(meta) if !meta.is_file() => return Err(format!("{what} is not a regular file")),
            Ok(meta) => Some(meta),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(crate::files::reason(&e)),
        };
        files.push((file, suffix, what, meta));
    }
    Ok(files)
}

/// Checks, before SQLite touches anything, that the database at `path` and the files SQLite
/// keeps beside it are plain files this process can write, and creates the database (0600,
/// its directory 0700 when missing) if it does not exist. SQLite itself would follow a
/// symbolic link, silently open an unwritable file read-only, and die of SIGBUS on a `-shm`
/// it cannot extend (an immutable one).
fn prepare(path: &Path) -> Result<(), StoreError> {
    let unusable = |why: String| StoreError::Unusable {
        path: path.to_path_buf(),
        why,
    };
    let mut missing_companion = false;
    for (file, suffix, what, meta) in plain_files(path).map_err(unusable)? {
        match meta {
            // Asked, not opened: closing a descriptor of a file would drop every SQLite lock
            // this process holds on it.
            Some(meta) => {
                owned_by_me_alone(&file, &what, &meta).map_err(unusable)?;
                access(&file, libc::W_OK).map_err(|e| {
                    unusable(format!(
                        "{what} cannot be written ({}); the bridge writes every fact there",
                        not_writable(&e)
                    ))
                })?
            }
            None => missing_companion |= suffix == "-wal" || suffix == "-shm",
        }
    }
    let dir = crate::files::parent_dir(path);
    if !path.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .map_err(|e| {
                unusable(format!(
                    "cannot create its directory {}: {}",
                    dir.display(),
                    crate::files::reason(&e)
                ))
            })?;
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
            .map_err(|e| unusable(format!("cannot be created: {}", not_writable(&e))))?;
    }
    if missing_companion && access(&dir, libc::W_OK | libc::X_OK).is_err() {
        return Err(unusable(format!(
            "its directory {} cannot be written, and SQLite keeps its -wal and -shm files there",
            dir.display()
        )));
    }
    Ok(())
}

/// Checks that `file` (the database or a file SQLite keeps beside it, `what` in messages) is
/// its owner's alone, like the token: it is trusted as this user's (its teams say which files
/// are read again on resume), so one another user owns or can write is refused, saying why
/// and what to do; one others can only read is made 0600, with a line saying so.
fn owned_by_me_alone(file: &Path, what: &str, meta: &std::fs::Metadata) -> Result<(), String> {
    // SAFETY: geteuid cannot fail.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        return Err(format!(
            "{what} belongs to another user (uid {}), who can read and change your sessions: \
             choose a database of your own with --db (a new file is made owner-only)",
            meta.uid()
        ));
    }
    let mode = meta.mode() & 0o777;
    if mode & 0o022 != 0 {
        return Err(format!(
            "{what} can be changed by other users (mode {mode:04o}), so your sessions may have \
             been changed by someone else: if no one else could have written it, run `chmod 600 \
             {}` and start again; otherwise choose another --db",
            file.display()
        ));
    }
    if mode & 0o077 != 0 {
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o600)).map_err(|e| {
            format!(
                "{what} is readable by other users (mode {mode:04o}) and cannot be made 0600: {}",
                crate::files::reason(&e)
            )
        })?;
        eprintln!(
            "agent-chatter: {}: was readable by other users (mode {mode:04o}); made 0600 (owner only)",
            file.display()
        );
    }
    Ok(())
}

/// Why a file cannot be opened for writing, in the user's words.
fn not_writable(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::EACCES) => "permission denied: it is read-only for this user".into(),
        Some(libc::EPERM) => "operation not permitted: it is immutable or append-only".into(),
        Some(libc::EROFS) => "the file system is read-only".into(),
        _ => crate::files::reason(e),
    }
}

/// Whether this process may access `path` as `mode` says (`access(2)`: it answers for the
/// real user, and says no to an immutable file or a read-only file system, root included).
fn access(path: &Path, mode: libc::c_int) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    // SAFETY: access only reads the NUL-terminated path.
    if unsafe { libc::access(path.as_ptr(), mode) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The SQLite connection on the database at `path`, which [`prepare`] has checked or made:
/// our schema on a new file, our marks checked on an old one.
fn connect(path: &Path) -> Result<Connection, StoreError> {
    let open_err = |source| StoreError::Open {
        path: path.to_path_buf(),
        source,
    };
    let conn = Connection::open_with_flags(
        path,
        // The file exists (prepare made it): SQLite creates none but its -wal and -shm.
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_NOFOLLOW
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(open_err)?;
    // Reading the header is the first access: a non-database file fails here, unchanged.
    let app_id: i64 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .map_err(open_err)?;
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(open_err)?;
    // SQLite opens a file it may not write read-only, without a word: say it now, not at
    // the first fact.
    if conn.is_readonly(MAIN_DB).unwrap_or(false) {
        return Err(StoreError::Unusable {
            path: path.to_path_buf(),
            why: "SQLite can only read it (read-only file or file system)".into(),
        });
    }
    let tables: i64 = conn
        .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
        .map_err(open_err)?;
    if app_id == 0 && tables == 0 {
        // A new file: ours from now on.
        conn.execute_batch(&format!(
                "PRAGMA journal_mode=WAL; BEGIN; {SCHEMA} PRAGMA application_id={APPLICATION_ID}; PRAGMA user_version={SCHEMA_VERSION}; COMMIT;"
            ))
            .map_err(open_err)?;
    } else if app_id != APPLICATION_ID {
        return Err(StoreError::Foreign {
            path: path.to_path_buf(),
            found: app_id,
        });
    } else if version > SCHEMA_VERSION {
        return Err(StoreError::Newer {
            path: path.to_path_buf(),
            found: version,
        });
    } else {
        // Setting the version it has is a write: one that cannot be made fails here.
        conn.execute_batch(&format!(
            "PRAGMA journal_mode=WAL; PRAGMA user_version={version};"
        ))
        .map_err(open_err)?;
    }
    // Each append is durable before the bridge acts on it. The page cache stays small:
    // the bridge only appends and reads a log back at start, so a big cache buys nothing
    // and would show as memory growing with the session.
    conn.execute_batch("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON; PRAGMA cache_size=-256;")
        .map_err(open_err)?;
    schema::bring_up_to_date(&conn, path).map_err(open_err)?;
    Ok(conn)
}

/// The device and inode of the file at `path` (not following a link).
fn identity(path: &Path) -> Result<(u64, u64), String> {
    std::fs::symlink_metadata(path)
        .map(|m| (m.dev(), m.ino()))
        .map_err(|e| crate::files::reason(&e))
}

/// Checks every [`WATCH_EVERY`] that the database file is still there (see [`Db::check`]),
/// until the store is dropped.
fn watch(db: Weak<Mutex<Db>>) {
    let spawned = std::thread::Builder::new()
        .name("agent-chatter-db-watch".into())
        .spawn(move || loop {
            std::thread::sleep(WATCH_EVERY);
            let Some(db) = db.upgrade() else { return };
            let mut db = db.lock().unwrap_or_else(|e| e.into_inner());
            if db.check().is_err() {
                return;
            }
            db.renew();
        });
    if let Err(e) = spawned {
        eprintln!("agent-chatter: warning: the database is checked only when written: {e}");
    }
}

impl Db {
    /// `Ok` when the connection's file is still the one at its path. When it was deleted or
    /// replaced, what the connection holds is written to a new file, at the path (or beside
    /// it when another file stands there), and the store goes on with that file.
    pub(super) fn check(&mut self) -> Result<(), StoreError> {
        if let Some(why) = &self.lost {
            return Err(StoreError::Lost {
                path: self.path.clone(),
                why: why.clone(),
            });
        }
        let now = identity(&self.path).ok();
        if now == Some(self.file) {
            return Ok(());
        }
        let (happened, target) = match now {
            None => ("deleted (or moved away)", self.path.clone()),
            Some(_) => (
                "replaced by another file",
                beside(&self.path, &format!(".recovered-{}", clock::now().0)),
            ),
        };
        let was = self.path.clone();
        match self.rewrite(&target) {
            Ok(placed) => {
                eprintln!(
                    "agent-chatter: warning: the session database {} was {happened} while in use; \
                     its sessions were written back to {}, which the bridge goes on with",
                    was.display(),
                    placed.display()
                );
                Ok(())
            }
            Err(why) => {
                eprintln!(
                    "agent-chatter: error: the session database {} was {happened} while in use, \
                     and its sessions could not be written back to {}: {why}; no fact can be \
                     kept now: stop the bridge",
                    was.display(),
                    target.display()
                );
                self.lost = Some(why.clone());
                Err(StoreError::Lost { path: was, why })
            }
        }
    }

    /// Copies the open database into a new file at `target` (or, should another file stand
    /// there by then, beside it) and reopens the store on it. The copy is made under another
    /// name and linked into place whole.
    fn rewrite(&mut self, target: &Path) -> Result<PathBuf, String> {
        let copy = beside(target, &format!(".rewriting-{}", std::process::id()));
        let name = copy
            .to_str()
            .ok_or_else(|| format!("{} is not a UTF-8 path", copy.display()))?;
        let _ = std::fs::remove_file(&copy);
        // Owner-only, as a new database is (VACUUM INTO takes an empty file).
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&copy)
            .map_err(|e| format!("{}: {}", copy.display(), crate::files::reason(&e)))?;
        if let Err(e) = self.conn.execute("VACUUM INTO ?1", [name]) {
            let _ = std::fs::remove_file(&copy);
            return Err(e.to_string());
        }
        // Closed before the copy is opened: closing removes the -wal and -shm files by name,
        // which would by then be the copy's.
        let unlinked = std::mem::replace(
            &mut self.conn,
            Connection::open_in_memory().map_err(|e| e.to_string())?,
        );
        if let Err((_, e)) = unlinked.close() {
            return Err(format!("{e} (a copy is in {})", copy.display()));
        }
        // A link never replaces a file: if one appeared at `target` meanwhile, it stays.
        let placed = if std::fs::hard_link(&copy, target).is_ok() {
            let _ = std::fs::remove_file(&copy);
            target.to_path_buf()
        } else {
            let aside = beside(target, &format!(".recovered-{}", clock::now().0));
            std::fs::rename(&copy, &aside).map_err(|e| {
                format!(
                    "{} (a copy is in {})",
                    crate::files::reason(&e),
                    copy.display()
                )
            })?;
            aside
        };
        self.conn = connect(&placed).map_err(|e| e.to_string())?;
        self.file = identity(&placed)?;
        self.path = placed.clone();
        Ok(placed)
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    use std::path::Path;

    use rusqlite::Connection;

    use super::*;
    use crate::store::testing::team;

    fn mode_of(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().mode() & 0o777
    }

    #[test]
    fn a_database_or_companion_others_can_write_is_refused_and_left_alone() {
        for suffix in ["", "-wal", "-shm"] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("s.db");
            drop(Store::open(&path).unwrap());
            let file = beside(&path, suffix);
            std::fs::write(&file, b"").ok();
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
            let err = Store::open(&path).err().expect("refused").to_string();
            assert!(
                err.contains("can be changed by other users (mode 0666)"),
                "{suffix}: {err}"
            );
            assert!(err.contains("chmod 600"), "{err}");
            assert_eq!(mode_of(&file), 0o666, "left as it was");
        }
    }

    #[test]
    fn an_empty_database_another_user_created_is_refused() {
        // SAFETY: geteuid cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: only root can make a file another user's (CI runs as root)");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        std::fs::write(&path, b"").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::os::unix::fs::chown(&path, Some(65534), Some(65534)).unwrap();
        let err = Store::open(&path).err().expect("refused").to_string();
        assert!(err.contains("belongs to another user (uid 65534)"), "{err}");
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            0,
            "nothing written"
        );
    }

    #[test]
    fn an_old_database_others_can_read_is_made_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let id = {
            let mut store = Store::open(&path).unwrap();
            store.create_session("A", 1, &team()).unwrap()
        };
        for suffix in ["", "-wal", "-shm"] {
            let file = beside(&path, suffix);
            if file.exists() {
                std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
            }
        }
        let store = Store::open(&path).unwrap();
        assert_eq!(mode_of(&path), 0o600);
        for suffix in ["-wal", "-shm"] {
            let file = beside(&path, suffix);
            if file.exists() {
                assert_eq!(mode_of(&file), 0o600, "{suffix}");
            }
        }
        assert_eq!(store.facts(id).unwrap().len(), 1, "its facts are kept");
    }

    #[test]
    fn a_foreign_database_is_refused_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("other.db");
        {
            let conn = Connection::open(&path).unwrap();
            conn.execute_batch("CREATE TABLE notes (x TEXT); INSERT INTO notes VALUES ('mine');")
                .unwrap();
        }
        let before = std::fs::read(&path).unwrap();
        let err = Store::open(&path).err().unwrap().to_string();
        assert!(
            err.contains("not an agent-chatter session database"),
            "{err}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }

    #[test]
    fn a_file_that_is_not_a_database_is_refused_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.txt");
        std::fs::write(&path, "these are my notes, not a database at all, and long enough to have a header ....................................................................................").unwrap();
        let before = std::fs::read(&path).unwrap();
        let err = Store::open(&path).err().unwrap().to_string();
        assert!(
            err.contains("cannot be used as a session database"),
            "{err}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }
}
