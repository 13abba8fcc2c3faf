//! Time travel and what-if (docs/architecture.md §6b): [`Session::preview`] gives the prompt,
//! system flag and explain a member would get with any message as its `[MESSAGE]`, changing
//! nothing. For a message the member was delivered, it rebuilds that delivery (its parent, the
//! store and team task as they were, the settings it was built with); [`PreviewOverrides`]
//! apply on top.

use serde::Serialize;

use super::{DeliveryRecord, PreviewError, Session};
use crate::context::{self, AsOf, BuildSettings, Prompt, Recipient, Target};
use crate::team::{Member, Team, TeamSettings};

/// What-if settings for one preview; `None` keeps the setting in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(optional_fields))]
pub struct PreviewOverrides {
    pub window_size: Option<usize>,
    pub max_bytes: Option<usize>,
    pub pin_first: Option<bool>,
    pub max_tokens: Option<usize>,
}

impl PreviewOverrides {
    /// Puts the overrides in force; a zero budget is refused (naming the field), as the
    /// team's settings refuse it, rather than quietly becoming 1.
    fn apply(&self, settings: &mut BuildSettings) -> Result<(), PreviewError> {
        if self.max_bytes == Some(0) {
            return Err(PreviewError::ZeroBudget { field: "maxBytes" });
        }
        if self.max_tokens == Some(0) {
            return Err(PreviewError::ZeroBudget { field: "maxTokens" });
        }
        if let Some(w) = self.window_size {
            settings.window = w;
        }
        if let Some(b) = self.max_bytes {
            settings.max_bytes = b;
        }
        if let Some(p) = self.pin_first {
            settings.pin_first = p;
        }
        if let Some(t) = self.max_tokens {
            settings.max_tokens = Some(t);
        }
        Ok(())
    }

    /// True when no setting is overridden.
    pub fn is_empty(&self) -> bool {
        *self == PreviewOverrides::default()
    }
}

/// Previews, and the deliveries they rebuild.
impl Session {
    /// The prompt, system flag and explain `member` (id or name) would get with message `at`
    /// (0-based position; the last one when `None`) as its `[MESSAGE]`, with the settings in
    /// force (for a message `member` was delivered: the ones that delivery was built with),
    /// `overrides` on top. Changes nothing. With no message yet it is the skeleton the first
    /// delivery starts from. Cost: O(window + bytes emitted), whatever the history's length.
    pub fn preview(
        &self,
        member: &str,
        at: Option<usize>,
        overrides: &PreviewOverrides,
    ) -> Result<Prompt, PreviewError> {
        let team = self.team().ok_or(PreviewError::NoTeam)?;
        let member = find_member(team, member)?;
        let recipient = Recipient::from_member(member);
        let store = self.store();
        let len = store.len();
        let at = match at {
            Some(at) if at < len => at,
            Some(at) => return Err(PreviewError::NoSuchMessage { at, len }),
            None if len == 0 => {
                let mut settings = BuildSettings::for_member(team, member);
                overrides.apply(&mut settings)?;
                return Ok(context::build_skeleton(
                    &recipient,
                    &settings,
                    store.team_task(),
                ));
            }
            None => len - 1,
        };
        let delivered = self.delivery(&member.id, at);
        // A delivered prompt is rebuilt with the settings it was built with (what-if
        // overrides apply on top); any other point, with the settings in force now.
        let (parent, seen, mut settings) = match delivered {
            Some(d) => (d.parent, d.seen, d.settings.clone()),
            None => (None, at + 1, BuildSettings::for_member(team, member)),
        };
        overrides.apply(&mut settings)?;
        let messages = store.messages();
        let target = Target {
            current: messages[at].id.clone(),
            parent: parent.map(|p| messages[p].id.clone()),
        };
        let as_of = AsOf {
            len: seen,
            team_task: self.team_task_after(seen),
        };
        Ok(context::build_as_of(
            store, &recipient, &target, &settings, as_of,
        )?)
    }

    /// Whether `member` (id) was delivered a prompt whose `[MESSAGE]` is message `at`: a
    /// preview there is what the agent got, not only what it would get.
    pub fn was_delivered(&self, member: &str, at: usize) -> bool {
        self.delivery(member, at).is_some()
    }

    /// The members (ids) delivered a prompt whose `[MESSAGE]` is message `at`, in the order
    /// they were delivered, each once (a transcript lists what each of them got).
    pub fn delivered_at(&self, at: usize) -> Vec<&str> {
        let mut members: Vec<&str> = Vec::new();
        for d in self.deliveries.get(&at).into_iter().flatten() {
            if !members.contains(&d.to.as_str()) {
                members.push(&d.to);
            }
        }
        members
    }

    /// The newest delivery to `member` whose `[MESSAGE]` is message `at`.
    pub(super) fn delivery(&self, member: &str, at: usize) -> Option<&DeliveryRecord> {
        self.deliveries
            .get(&at)?
            .iter()
            .rev()
            .find(|d| d.to == member)
    }

    /// The team's settings as they were for the prompt `member` was delivered with message
    /// `at` as its `[MESSAGE]` (the settings in force now, with that delivery's window, budgets,
    /// pin-first, policy and compaction), so a scenario cut at `at` opens that prompt again;
    /// `None` when there was no such delivery. The window goes to the team's setting only
    /// when the member has no window of its own.
    pub fn settings_delivered(&self, member: &str, at: usize) -> Option<TeamSettings> {
        let team = self.team()?;
        let used = &self.delivery(member, at)?.settings;
        let mut settings = team.settings.clone();
        if team.member(member).is_some_and(|m| m.window_size.is_none()) {
            settings.window_size = used.window;
        }
        settings.pin_first = used.pin_first;
        settings.max_bytes = used.max_bytes;
        settings.delivery = used.delivery;
        settings.compaction = used.compaction;
        settings.token_estimator = used.tokens;
        settings.max_tokens = used.max_tokens;
        Some(settings)
    }
}

fn find_member<'t>(team: &'t Team, name: &str) -> Result<&'t Member, PreviewError> {
    team.find_or_explain(name)
        .map_err(PreviewError::UnknownMember)
}
