//! Routing markers resolved against the team: `[NEXT]` addressees to members and intents,
//! `[DROP]` names to members; what matched nobody is kept for the notices.

use crate::markers::DropTargets;
use crate::message::{Intent, MemberId};
use crate::team::Team;

/// `[NEXT]` addressees resolved against the team.
pub(super) struct ResolvedNext {
    /// (member, intent) pairs to queue, in order (a member may appear with several intents).
    pub(super) targets: Vec<(MemberId, Intent)>,
    /// Distinct member ids, in order (the message's `routing.resolved`).
    pub(super) ids: Vec<MemberId>,
    /// Their names, for the `to` of context lines.
    pub(super) names: Vec<String>,
    /// Names that matched nobody.
    pub(super) unresolved: Vec<String>,
    /// The sender, if it addressed itself.
    pub(super) self_addressed: Option<MemberId>,
    /// Every name as written (for the "ignored after DONE" notice).
    pub(super) all_names: Vec<String>,
}

pub(super) fn resolve_next(
    team: Option<&Team>,
    sender: &str,
    next: &[crate::message::Addressee],
) -> ResolvedNext {
    let mut out = ResolvedNext {
        targets: Vec::new(),
        ids: Vec::new(),
        names: Vec::new(),
        unresolved: Vec::new(),
        self_addressed: None,
        all_names: next.iter().map(|a| a.name.clone()).collect(),
    };
    for addressee in next {
        let Some(member) = team.and_then(|t| t.find(&addressee.name)) else {
            out.unresolved.push(addressee.name.clone());
            continue;
        };
        if member.id == sender {
            out.self_addressed = Some(member.id.clone());
            continue;
        }
        if !out.ids.contains(&member.id) {
            out.ids.push(member.id.clone());
            out.names.push(member.name.clone());
        }
        out.targets.push((member.id.clone(), addressee.intent));
    }
    out
}

/// `[DROP]` resolved against the team: `targets: None` means ALL.
pub(super) struct ResolvedDrop {
    pub(super) targets: Option<Vec<MemberId>>,
    pub(super) unresolved: Vec<String>,
}

pub(super) fn resolve_drop(team: Option<&Team>, drop: &DropTargets) -> ResolvedDrop {
    match drop {
        DropTargets::All => ResolvedDrop {
            targets: None,
            unresolved: Vec::new(),
        },
        DropTargets::Members(names) => {
            let mut targets = Vec::new();
            let mut unresolved = Vec::new();
            for name in names {
                match team.and_then(|t| t.find(name)) {
                    Some(m) => targets.push(m.id.clone()),
                    None => unresolved.push(name.clone()),
                }
            }
            ResolvedDrop {
                targets: Some(targets),
                unresolved,
            }
        }
    }
}
