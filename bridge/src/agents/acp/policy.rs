//! What a member over ACP may do without asking, and in which of its agent's modes it runs —
//! both from files on this machine only (docs/architecture.md §14c, §14d).

use std::time::Duration;

use agent_chatter::activity::{ApprovalRequest, OptionKind, ToolKind};
use agent_chatter::team::PermissionMode;
use serde::Deserialize;

/// The default wait for a person to answer an approval: 10 minutes.
pub(crate) const DEFAULT_APPROVAL_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// Which tool calls are answered yes without asking (`approve` in the agents file).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Approve {
    /// Every request is put to a person.
    #[default]
    Ask,
    /// Reading, searching and fetching are allowed; the rest is asked.
    Reads,
    /// Also editing, deleting and moving files; commands and the rest are asked.
    Edits,
    /// Everything is allowed.
    All,
}

impl Approve {
    /// The rule's name as the agents file spells it, for the record of a decision.
    pub fn name(self) -> &'static str {
        match self {
            Approve::Ask => "approve: ask",
            Approve::Reads => "approve: reads",
            Approve::Edits => "approve: edits",
            Approve::All => "approve: all",
        }
    }

    /// Whether a tool call of `kind` is allowed without asking.
    pub fn allows(self, kind: ToolKind) -> bool {
        let read = matches!(kind, ToolKind::Read | ToolKind::Search | ToolKind::Fetch);
        let edit = matches!(kind, ToolKind::Edit | ToolKind::Delete | ToolKind::Move);
        match self {
            Approve::Ask => false,
            Approve::Reads => read,
            Approve::Edits => read || edit,
            Approve::All => true,
        }
    }
}

/// The option a rule answers `request` with: allow once (else allow always).
pub(crate) fn allow_option(request: &ApprovalRequest) -> Option<String> {
    request
        .first_of(&[OptionKind::AllowOnce, OptionKind::AllowAlways])
        .map(|o| o.id.clone())
}

/// The option a timeout or a withdrawn question answers with: reject once (else always).
pub(crate) fn reject_option(request: &ApprovalRequest) -> Option<String> {
    request
        .first_of(&[OptionKind::RejectOnce, OptionKind::RejectAlways])
        .map(|o| o.id.clone())
}

/// The mode ids that stand for our permission mode in the agents we know
/// (docs/acp-adapters.md: Claude's adapter `plan`, `acceptEdits`, `bypassPermissions`;
/// Gemini `plan`, `autoEdit`, `yolo`; Codex's adapter `read-only`, `workspace-write`,
/// `agent-full-access`); the first the agent offers is used.
fn mode_candidates(mode: PermissionMode) -> &'static [&'static str] {
    match mode {
        PermissionMode::ReadOnly => &["plan", "read-only", "readOnly", "read_only"],
        PermissionMode::Edit => &[
            "acceptEdits",
            "autoEdit",
            "workspace-write",
            "auto_edit",
            "edit",
        ],
        PermissionMode::Full => &[
            "bypassPermissions",
            "yolo",
            "agent-full-access",
            "full-access",
            "danger-full-access",
            "full",
        ],
    }
}

/// The mode in which the agent asks before a risky step, chosen when the member sets no
/// permission mode: `default` (Claude's "Manual", Gemini's default). Claude's adapter starts
/// in `auto`, where a classifier allows steps and no one is asked.
pub(crate) const ASKING_MODE: &str = "default";

/// The agent's mode id for `mode` among the `advertised` ones, or why there is none.
pub(crate) fn mode_id(mode: PermissionMode, advertised: &[String]) -> Result<String, String> {
    mode_candidates(mode)
        .iter()
        .find(|c| advertised.iter().any(|a| a == *c))
        .map(|c| c.to_string())
        .ok_or_else(|| {
            format!(
                "permissionMode {:?}: the agent offers no such mode (its modes: {})",
                mode.name(),
                if advertised.is_empty() {
                    "none".to_string()
                } else {
                    advertised.join(", ")
                }
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_policy_allows_the_kinds_the_design_gives_it() {
        use ToolKind::*;
        let table: [(Approve, &[ToolKind], &[ToolKind]); 4] = [
            (Approve::Ask, &[], &[Read, Edit, Execute, Other]),
            (
                Approve::Reads,
                &[Read, Search, Fetch],
                &[Edit, Delete, Move, Execute, Other],
            ),
            (
                Approve::Edits,
                &[Read, Search, Fetch, Edit, Delete, Move],
                &[Execute, Think, Other],
            ),
            (Approve::All, &[Read, Edit, Execute, Other, SwitchMode], &[]),
        ];
        for (policy, allowed, asked) in table {
            for kind in allowed {
                assert!(policy.allows(*kind), "{policy:?} {kind:?}");
            }
            for kind in asked {
                assert!(!policy.allows(*kind), "{policy:?} {kind:?}");
            }
        }
    }

    #[test]
    fn a_permission_mode_becomes_the_first_advertised_mode_or_an_error_naming_the_modes() {
        let claude: Vec<String> = ["default", "acceptEdits", "plan", "bypassPermissions"]
            .map(String::from)
            .to_vec();
        let gemini: Vec<String> = ["default", "autoEdit", "yolo"].map(String::from).to_vec();
        assert_eq!(
            mode_id(PermissionMode::Edit, &claude).unwrap(),
            "acceptEdits"
        );
        assert_eq!(mode_id(PermissionMode::Full, &gemini).unwrap(), "yolo");
        let err = mode_id(PermissionMode::ReadOnly, &gemini).unwrap_err();
        assert_eq!(
            err,
            "permissionMode \"readOnly\": the agent offers no such mode (its modes: default, \
             autoEdit, yolo)"
        );
    }
}
