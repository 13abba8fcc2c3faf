//! `cargo xtask run`: the page and the bridge built in release mode, and `agent-chatter serve`
//! started on them.

use crate::proc::{self, Ctx};
use crate::web::{bridge_bin, build, wasm_size};

/// Port `cargo xtask run` serves on unless `--port` says otherwise.
const DEFAULT_PORT: u16 = 8080;

/// `cargo xtask run [--port N]`: builds the page and the bridge in release mode and starts
/// `agent-chatter serve --simulate` with the demo team on 127.0.0.1 (sessions in
/// `target/agent-chatter/sessions.db`): the built-in simulator answers every AI member, so the
/// demo never runs a real (paid) agent; `agent-chatter serve --team FILE` runs real ones.
pub fn run(ctx: &Ctx, args: &[String]) -> Result<(), String> {
    let port = match args {
        [] => DEFAULT_PORT,
        [flag, port] if flag == "--port" => port
            .parse()
            .map_err(|_| format!("--port {port}: not a port number (1-65535)"))?,
        _ => {
            return Err(format!(
                "run: unexpected arguments {args:?}; usage: cargo xtask run [--port N]"
            ))
        }
    };
    build(ctx)?;
    match wasm_size(ctx) {
        Ok(size) => eprintln!("run: page wasm: {size}"),
        Err(e) => eprintln!("run: {e}"),
    }
    // The page is built into the binary (docs/architecture.md §14e): no --dist.
    proc::run(&mut ctx.cargo(&["build", "--release", "-p", "agent-chatter-bridge"]))?;
    let data = ctx.target_dir().join("agent-chatter");
    std::fs::create_dir_all(&data).map_err(|e| format!("cannot create {}: {e}", data.display()))?;
    eprintln!("\nrun: open the URL below (it carries the database's token, the same after a restart); Ctrl+C stops\n");
    proc::run(
        ctx.cmd(bridge_bin(ctx, "release"))
            .args(["serve", "--simulate", "--port", &port.to_string()])
            .arg("--db")
            .arg(data.join("sessions.db")),
    )
}
