//! `cargo xtask prompts`: prints the exact prompt every AI member of the demo scenario
//! receives (the core's `examples/preview.rs`). Arguments go to the example:
//! `[SCENARIO.json] [MEMBER]`.

use crate::proc::{self, Ctx};

pub fn prompts(ctx: &Ctx, args: &[String]) -> Result<(), String> {
    // A scenario path is relative to where the user typed the command, not the root.
    let here =
        std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    proc::run(
        ctx.cargo(&[
            "run",
            "--quiet",
            "-p",
            "agent-chatter",
            "--example",
            "preview",
            "--",
        ])
        .current_dir(here)
        .args(args),
    )
}
