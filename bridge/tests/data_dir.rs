//! Installed, not cloned (docs/architecture.md §14e, issue #42.3-4): the database lives in the
//! platform's data directory, never in the directory the bridge starts from; `--db` and
//! `AGENT_CHATTER_DB` choose another; a database where older versions put it is named, never
//! moved; `agent-chatter` alone serves. Real processes with an empty HOME.

mod support;

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use support::bin;

/// `agent-chatter ARGS` run from `cwd` with HOME = `home` and no XDG or database variables
/// but `env`; returns the process once it printed its URL, and what it said on stderr so far
/// (kept in `cwd/stderr.log`).
fn start(cwd: &Path, home: &Path, args: &[&str], env: &[(&str, &Path)]) -> (Child, String) {
    let log = cwd.join("stderr.log");
    let mut cmd = Command::new(bin());
    cmd.current_dir(cwd)
        .args(args)
        .env("HOME", home)
        .env_remove("XDG_DATA_HOME")
        .env_remove("AGENT_CHATTER_DB")
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("CI")
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap());
    for (name, value) in env {
        cmd.env(name, value);
    }
    let mut child = cmd.spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let stderr = std::fs::read_to_string(&log).unwrap();
    assert!(
        line.starts_with("http://127.0.0.1:"),
        "{line:?}; stderr: {stderr}"
    );
    (child, stderr)
}

fn stop(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

struct Places {
    _root: tempfile::TempDir,
    home: PathBuf,
    cwd: PathBuf,
}

fn places() -> Places {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    let cwd = root.path().join("work");
    std::fs::create_dir(&home).unwrap();
    std::fs::create_dir(&cwd).unwrap();
    Places {
        home,
        cwd,
        _root: root,
    }
}

const SERVE: [&str; 4] = ["serve", "--port", "0", "--simulate"];

#[test]
fn by_default_the_database_is_in_the_data_directory_made_owner_only() {
    let p = places();
    let (child, _) = start(&p.cwd, &p.home, &SERVE, &[]);
    stop(child);
    let data = p.home.join(".local/share/agent-chatter");
    assert!(data.join("sessions.db").is_file());
    assert_eq!(mode(&data), 0o700);
    assert_eq!(mode(&data.join("sessions.db")), 0o600);
    assert!(
        !p.cwd.join("agent-chatter.db").exists(),
        "nothing in the current directory"
    );
}

#[test]
fn xdg_data_home_and_agent_chatter_db_choose_where_it_is() {
    let p = places();
    let xdg = p.home.join("xdg");
    let (child, _) = start(&p.cwd, &p.home, &SERVE, &[("XDG_DATA_HOME", &xdg)]);
    stop(child);
    assert!(xdg.join("agent-chatter/sessions.db").is_file());

    let chosen = p.home.join("elsewhere/mine.db");
    let (child, _) = start(&p.cwd, &p.home, &SERVE, &[("AGENT_CHATTER_DB", &chosen)]);
    stop(child);
    assert!(chosen.is_file());
    assert!(!p
        .home
        .join(".local/share/agent-chatter/sessions.db")
        .exists());
}

#[test]
fn a_database_where_older_versions_put_it_is_named_with_the_command_that_moves_it() {
    let p = places();
    let old = p.cwd.join("agent-chatter.db");
    let (child, _) = start(
        &p.cwd,
        &p.home,
        &[
            "serve",
            "--port",
            "0",
            "--simulate",
            "--db",
            "agent-chatter.db",
        ],
        &[],
    );
    stop(child);
    let before = std::fs::read(&old).unwrap();
    let (child, stderr) = start(&p.cwd, &p.home, &SERVE, &[]);
    stop(child);
    let data = p.home.join(".local/share/agent-chatter/sessions.db");
    assert!(stderr.contains(&old.display().to_string()), "{stderr}");
    assert!(
        stderr.contains(&format!("mv -n {} {}", old.display(), data.display()))
            || stderr.contains("exists already"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(&old).unwrap(),
        before,
        "never moved or changed"
    );
}

/// With a display, `agent-chatter` alone opens the page: the browser (here a stand-in
/// `xdg-open` first on PATH, recording what it was given) is given the owner-only redirect
/// page beside the database, never the URL with its token (any user can read a program's
/// arguments).
#[test]
fn agent_chatter_alone_opens_the_page_through_an_owner_only_redirect() {
    let p = places();
    let bin_dir = p.cwd.join("bin");
    std::fs::create_dir(&bin_dir).unwrap();
    let record = p.cwd.join("opened.txt");
    let opener = bin_dir.join("xdg-open");
    std::fs::write(
        &opener,
        format!(
            "#!/bin/sh\nprintf '%s' \"$1\" > {}.tmp && mv {0}.tmp {0}\n",
            record.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&opener, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap());
    let (child, stderr) = start(
        &p.cwd,
        &p.home,
        &["--port", "0", "--simulate"],
        &[("PATH", Path::new(&path)), ("DISPLAY", Path::new(":99"))],
    );
    // The opener runs detached: its record appears when it has run.
    let given = (0..200)
        .find_map(|_| {
            std::fs::read_to_string(&record).ok().or_else(|| {
                std::thread::sleep(std::time::Duration::from_millis(50));
                None
            })
        })
        .unwrap_or_else(|| panic!("the browser was never opened; stderr: {stderr}"));
    stop(child);
    let page = p
        .home
        .join(".local/share/agent-chatter/open-agent-chatter.html");
    assert_eq!(Path::new(&given), page, "given the redirect page");
    assert!(
        !given.contains("token"),
        "the token is in no argument: {given}"
    );
    assert_eq!(mode(&page), 0o600);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("url=http://127.0.0.1:"), "{html}");
    assert!(html.contains("/#token="), "{html}");
    assert!(!stderr.contains("browser"), "{stderr}");
}

#[test]
fn agent_chatter_alone_serves_and_says_why_it_opens_no_browser_here() {
    let p = places();
    let (child, stderr) = start(&p.cwd, &p.home, &["--port", "0", "--simulate"], &[]);
    stop(child);
    assert!(
        stderr.contains("not opening a browser (no display)"),
        "{stderr}"
    );
    let (child, stderr) = start(
        &p.cwd,
        &p.home,
        &["--port", "0", "--simulate", "--no-open"],
        &[],
    );
    stop(child);
    assert!(!stderr.contains("browser"), "{stderr}");
}
