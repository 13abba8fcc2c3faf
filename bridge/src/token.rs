//! The bridge's token, one per session database (docs/architecture.md §14): kept beside the
//! database as `DB.token` and used by every launch on it, so a page's URL (`#token=…`) still
//! connects after the bridge restarts. Only its owner may read it: a new one is created 0600,
//! and one that is a symbolic link, not this user's, or open to others is refused, saying how
//! to fix it (it may have been read, so it is not silently reused).

use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Where the token of the database at `db` is kept.
pub fn path_for(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_os_string();
    name.push(".token");
    PathBuf::from(name)
}

/// The token of the database at `db`: the one kept beside it, or a new one, kept there from
/// now on.
pub fn for_database(db: &Path) -> Result<String, String> {
    let path = path_for(db);
    // Twice at most: when another bridge creates the file between our look and our link, its
    // token is read the second time.
    for _ in 0..2 {
        match read(&path)? {
            Some(token) => return Ok(token),
            None => {
                if let Some(token) = create(&path)? {
                    return Ok(token);
                }
            }
        }
    }
    Err(format!(
        "{}: appeared and disappeared while being read; start again",
        path.display()
    ))
}

/// The token at `path`, `None` when there is no file, or why it cannot be used.
fn read(path: &Path) -> Result<Option<String>, String> {
    let shown = path.display();
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{shown}: {}", crate::files::reason(&e))),
    };
    if meta.file_type().is_symlink() {
        return Err(format!(
            "{shown}: the bridge's token is a symbolic link; it must be a plain file that only \
             you can read: remove the link (the next start makes a new token)"
        ));
    }
    if !meta.is_file() {
        return Err(format!(
            "{shown}: the bridge's token is not a regular file: remove it (the next start makes a new token)"
        ));
    }
    // SAFETY: geteuid cannot fail.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        return Err(format!(
            "{shown}: the bridge's token belongs to another user (uid {}), who could use your \
             sessions: remove it (the next start makes a new token)",
            meta.uid()
        ));
    }
    let mode = meta.mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(format!(
            "{shown}: the bridge's token can be read or changed by other users (mode {mode:04o}), \
             so anyone on this machine may have it and reach your sessions: remove it (the next \
             start makes a new token; open pages then need the new URL) or, if no one else could \
             have read it, run `chmod 600 {shown}`"
        ));
    }
    let mut text = String::new();
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .and_then(|file| file.take(1024).read_to_string(&mut text))
        .map_err(|e| format!("{shown}: {}", crate::files::reason(&e)))?;
    let token = text.trim();
    if token.len() != 64 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!(
            "{shown}: not a bridge token (64 hexadecimal digits): remove it (the next start makes a new token)"
        ));
    }
    Ok(Some(token.to_ascii_lowercase()))
}

/// Writes a new token at `path` (0600), whole: written under another name and linked into
/// place, so no reader sees half a token. `None` when a file appeared at `path` meanwhile.
fn create(path: &Path) -> Result<Option<String>, String> {
    let token = crate::guard::new_token()?;
    let mut name = path.as_os_str().to_os_string();
    name.push(format!(".new-{}", std::process::id()));
    let draft = PathBuf::from(name);
    let _ = std::fs::remove_file(&draft);
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&draft)
        .and_then(|mut file| {
            file.write_all(format!("{token}\n").as_bytes())?;
            file.sync_all()
        });
    if let Err(e) = written {
        let _ = std::fs::remove_file(&draft);
        return Err(format!(
            "{}: the bridge's token cannot be kept here: {}",
            path.display(),
            crate::files::reason(&e)
        ));
    }
    let linked = std::fs::hard_link(&draft, path);
    let _ = std::fs::remove_file(&draft);
    match linked {
        Ok(()) => Ok(Some(token)),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(None),
        Err(e) => Err(format!(
            "{}: the bridge's token cannot be kept here: {}",
            path.display(),
            crate::files::reason(&e)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_database_keeps_one_token_readable_by_its_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("s.db");
        let first = for_database(&db).unwrap();
        assert_eq!(first.len(), 64);
        let meta = std::fs::metadata(path_for(&db)).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert_eq!(for_database(&db).unwrap(), first);
        // Another database, another token.
        assert_ne!(for_database(&dir.path().join("t.db")).unwrap(), first);
    }

    #[test]
    fn a_token_others_can_read_is_refused_saying_how_to_fix_it() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("s.db");
        for_database(&db).unwrap();
        let path = path_for(&db);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = for_database(&db).unwrap_err();
        assert!(
            err.contains("can be read or changed by other users (mode 0644)")
                && err.contains(&format!("chmod 600 {}", path.display())),
            "{err}"
        );
    }

    #[test]
    fn a_token_that_is_a_link_or_not_a_token_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("s.db");
        let elsewhere = dir.path().join("elsewhere");
        std::fs::write(&elsewhere, "x").unwrap();
        std::os::unix::fs::symlink(&elsewhere, path_for(&db)).unwrap();
        assert!(for_database(&db)
            .unwrap_err()
            .contains("is a symbolic link"));
        std::fs::remove_file(path_for(&db)).unwrap();
        std::fs::write(path_for(&db), "garbage\n").unwrap();
        std::fs::set_permissions(path_for(&db), std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(for_database(&db)
            .unwrap_err()
            .contains("not a bridge token (64 hexadecimal digits)"));
    }
}
