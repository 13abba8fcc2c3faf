//! `cargo xtask`: the project's commands (docs/architecture.md §3, §15).
//!
//! - `setup` — install or check the pinned tools (see [`setup`]).
//! - `test`  — every check CI runs, in order, stopping at the first failure.
//! - `clis`  — install or check the real agent CLIs and ACP adapters (see [`clis`]).
//! - `bench` — criterion benches (+ the npm package's Node bench) into `target/bench-report.md`.
//! - `dist`  — build the npm package into `pkg/`.
//! - `run`   — build the page and the bridge (release) and start `agent-chatter serve`.
//! - `prompts` — print the exact prompt each agent of the demo scenario receives.
//!
//! Plain std plus `serde_json` (already in the workspace): xtask must build in seconds on a
//! fresh machine, before any of the tools it installs exist.

mod bench;
mod clis;
mod consumers;
mod cycles;
mod dist;
mod fuzz;
mod install;
mod proc;
mod prompts;
mod run;
mod setup;
mod steps;
mod testing;
mod web;

use std::process::ExitCode;

use proc::Ctx;

const USAGE: &str = "\
usage: cargo xtask <command> [options]

commands:
  setup            install/check the pinned tools (wasm32 target, wasm-bindgen-cli, npm dev
                   tools, Trunk, Chromium)
  test             fmt, clippy, cargo test, the bridge with the real agent CLIs (installed
                   from npm into target/agent-clis), wasm32 build and tests, npm package
                   tests, the web page built by Trunk and its e2e suite in Chromium
  clis             install/check the real agent CLIs and their ACP adapters (npm, pinned, in
                   target/agent-clis) and print the AGENT_CHATTER_REAL_CLIS to set
  bench [--quick]  criterion benches + Node bench of the npm package -> target/bench-report.md
  dist             build the npm package into pkg/
  run [--port N]   build the page and the bridge (release) and start `agent-chatter serve`
                   with the demo team on 127.0.0.1:8080
  page             build the web page (web/dist), which the bridge embeds: needed before
                   a plain `cargo build` of the bridge
  install [--root DIR]
                   build the page and install `agent-chatter` with it inside (cargo install)
  prompts [ARGS..] print each AI member's prompt for the demo scenario
                   (ARGS go to the preview example: [SCENARIO.json] [MEMBER])
  fuzz [--seconds N] [TARGET]
                   run the cargo-fuzz targets of fuzz/ (default 60 s each)
  help             this text
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match dispatch(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("\nxtask: error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn dispatch(args: &[String]) -> Result<(), String> {
    let (command, rest) = match args.split_first() {
        Some((command, rest)) => (command.as_str(), rest),
        None => {
            print!("{USAGE}");
            return Err("no command given".to_string());
        }
    };
    let ctx = Ctx::new()?;
    match command {
        "setup" => {
            no_extra_args(command, rest)?;
            setup::setup(&ctx)
        }
        "test" => {
            no_extra_args(command, rest)?;
            testing::test(&ctx)
        }
        "clis" => {
            no_extra_args(command, rest)?;
            eprintln!("clis: {}", clis::ensure(&ctx)?);
            println!("{}={}", clis::ENV, clis::bin_dir(&ctx).display());
            Ok(())
        }
        "bench" => {
            let quick = parse_bench_args(rest)?;
            setup::setup(&ctx)?;
            bench::bench(&ctx, quick)
        }
        "dist" => {
            no_extra_args(command, rest)?;
            setup::setup(&ctx)?;
            dist::dist(&ctx).map(|_| ())
        }
        "run" => {
            setup::setup(&ctx)?;
            run::run(&ctx, rest)
        }
        "page" => {
            no_extra_args(command, rest)?;
            setup::setup(&ctx)?;
            web::build(&ctx)
        }
        "install" => {
            let root = install::parse_args(rest)?;
            setup::setup(&ctx)?;
            install::install(&ctx, root.as_deref()).map(|_| ())
        }
        "prompts" => prompts::prompts(&ctx, rest),
        "fuzz" => {
            let (seconds, target) = fuzz::parse_args(rest)?;
            setup::setup(&ctx)?;
            fuzz::fuzz(&ctx, seconds, target.as_deref())
        }
        "help" | "-h" | "--help" => {
            print!("{USAGE}");
            Ok(())
        }
        other => {
            print!("{USAGE}");
            Err(format!("unknown command `{other}`"))
        }
    }
}

fn no_extra_args(command: &str, rest: &[String]) -> Result<(), String> {
    match rest.first() {
        None => Ok(()),
        Some(arg) => Err(format!(
            "`cargo xtask {command}` takes no arguments (got `{arg}`)"
        )),
    }
}

/// `bench` accepts only `--quick`.
fn parse_bench_args(rest: &[String]) -> Result<bool, String> {
    let mut quick = false;
    for arg in rest {
        match arg.as_str() {
            "--quick" => quick = true,
            other => {
                return Err(format!(
                    "unknown option `{other}` for `cargo xtask bench` (known: --quick)"
                ))
            }
        }
    }
    Ok(quick)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn bench_accepts_quick_and_nothing_else() {
        assert_eq!(parse_bench_args(&strings(&[])), Ok(false));
        assert_eq!(parse_bench_args(&strings(&["--quick"])), Ok(true));
        assert!(parse_bench_args(&strings(&["--slow"])).is_err());
    }

    #[test]
    fn commands_without_options_reject_arguments() {
        assert!(no_extra_args("test", &[]).is_ok());
        let err = no_extra_args("test", &strings(&["--nocapture"])).unwrap_err();
        assert!(err.contains("--nocapture"), "{err}");
    }
}
