//! Opening the page in the user's browser, for `agent-chatter` alone (docs/architecture.md
//! §14e). The URL carries the token, and a program's arguments can be read by every user of
//! the machine (`/proc/PID/cmdline`), so the browser is never given it: it is given a small
//! page, owner-only (0600) beside the database, that sends it on to the URL (as Jupyter does).
//! Never opened when CI is set or there is no display; the URL is printed either way.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The redirect page's name, beside the database.
const REDIRECT: &str = "open-agent-chatter.html";

/// Opens `url` in the browser through a redirect page beside the database `db`, or says on
/// stderr why it is not opened.
pub fn open(url: &str, db: &Path) {
    if let Some(why) = why_not() {
        eprintln!("agent-chatter: not opening a browser ({why}): open the URL above");
        return;
    }
    let page = crate::files::parent_dir(db).join(REDIRECT);
    let opened = write_redirect(&page, url)
        .and_then(|()| open::that_detached(&page).map_err(|e| crate::files::reason(&e)));
    if let Err(why) = opened {
        eprintln!("agent-chatter: the browser could not be opened ({why}): open the URL above");
    }
}

/// Why no browser is opened here, if one is not: CI, or no display to show it on.
fn why_not() -> Option<&'static str> {
    if std::env::var_os("CI").is_some() {
        return Some("CI is set");
    }
    let has_display = |name| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    if cfg!(any(target_os = "macos", target_os = "windows")) {
        return None;
    }
    (!has_display("DISPLAY") && !has_display("WAYLAND_DISPLAY")).then_some("no display")
}

/// Writes the page at `path` (0600, never through a link) that sends the browser to `url`.
fn write_redirect(path: &Path, url: &str) -> Result<(), String> {
    // The URL is ours (an address, a port and a hex token): nothing in it needs escaping.
    let html = format!(
        "<!doctype html><meta charset=\"utf-8\"><title>agent-chatter</title>\
         <meta http-equiv=\"refresh\" content=\"0;url={url}\">\
         <p><a href=\"{url}\">Open agent-chatter</a></p>\n"
    );
    let _ = std::fs::remove_file(path);
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .and_then(|mut file| file.write_all(html.as_bytes()))
        .map_err(|e| format!("{}: {}", path.display(), crate::files::reason(&e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_redirect_page_is_the_owners_alone_and_never_written_through_a_link() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let page = dir.path().join(REDIRECT);
        write_redirect(&page, "http://127.0.0.1:1/#token=ab").unwrap();
        let mode = std::fs::metadata(&page).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert!(std::fs::read_to_string(&page)
            .unwrap()
            .contains("url=http://127.0.0.1:1/#token=ab"));
        // A link planted in its place is removed, never followed.
        let target = dir.path().join("target");
        std::fs::write(&target, "theirs").unwrap();
        std::fs::remove_file(&page).unwrap();
        std::os::unix::fs::symlink(&target, &page).unwrap();
        write_redirect(&page, "http://127.0.0.1:1/#token=cd").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "theirs");
    }
}
