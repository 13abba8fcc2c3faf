//! What `serve` says on stderr at start, before its address (docs/architecture.md §14c): which
//! members cannot run here and why, in the words each delivery to them fails with.

mod support;

use serde_json::json;
use support::{team, Bridge};

#[test]
fn serve_names_at_start_each_member_that_cannot_run_and_what_to_do() {
    let mut crew = team(None);
    crew["members"][2] = json!({"name": "sarah", "kind": "ai", "agentType": "openai-codex"});
    let bridge = Bridge::start_logged(Bridge::new_dir(&crew, "claude-stream.sh"), None, &[]);
    let said = bridge.stderr();
    assert!(
        said.contains(
            "agent-chatter: cannot run sarah: agent-chatter-test-no-such-codex is not installed \
             (not on PATH); install it, set its command in the agents file, or start with \
             --simulate"
        ),
        "{said}"
    );
    assert!(!said.contains("cannot run max"), "{said}");
}
