//! What the conversation asks its host to do (docs/architecture.md §2, §6): drained one at a time
//! with [`Conversation::poll_action`](super::Conversation::poll_action). Each variant says what the
//! host MUST do next.

use serde::{Deserialize, Serialize};

use crate::context::Prompt;
use crate::explain::BudgetStatus;
use crate::message::Intent;
use crate::message::{MemberId, MessageId};
use crate::usage::Usd;

/// One output of the state machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Action {
    /// Run agent `to` with `prompt` (and `prompt.system_flag`, if any). The host MUST then
    /// report the outcome exactly once, with `handle_agent_replied(to, text)` or
    /// `handle_agent_failed(to, reason)`; no other delivery is emitted until it does.
    Deliver(Box<Delivery>),
    /// The queue waits for this human. The host SHOULD prompt them; their next input without
    /// `[FROM]` is attributed to them. Any human may still speak (`[FROM: x]` buzzes in).
    AwaitHuman { member: MemberId },
    /// `[DONE]`: the conversation is complete for now; nothing more is delivered until a human
    /// speaks (which reopens it). An agent still running MAY be cancelled: if its reply arrives
    /// anyway it is stored but not routed.
    Finished,
    /// Something the user should see (a limit hit, a name that matched nobody). Informational:
    /// the host SHOULD show it and MUST NOT treat it as fatal.
    Notice(Notice),
}

/// A delivery to run now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Delivery {
    /// The agent to run.
    pub to: MemberId,
    /// The message the prompt shows as `[MESSAGE]`.
    pub message: MessageId,
    /// The message that addressed `to` (its reply will be stored with this parent).
    pub parent: Option<MessageId>,
    pub intent: Intent,
    /// Exactly what the agent receives, built from the store at emission time, with its explain.
    pub prompt: Prompt,
}

/// Informational events. None of them stops the conversation except `RoundLimitReached`,
/// which ends the current AI run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Notice {
    /// The team task was longer than 5 KiB and was cut at a character boundary.
    TeamTaskTruncated { from: usize, to: usize },
    /// `[NEXT]` names in `message` that match no member (skipped; any others were routed).
    UnresolvedAddressees {
        message: MessageId,
        names: Vec<String>,
    },
    /// `[DROP]` names in `message` that match no member.
    UnresolvedDropTargets {
        message: MessageId,
        names: Vec<String>,
    },
    /// `member` addressed itself in `message`; a member never answers itself, so it was skipped.
    SelfAddressed {
        message: MessageId,
        member: MemberId,
    },
    /// `[DROP]` in `message` removed these pending deliveries.
    Dropped {
        message: MessageId,
        removed: Vec<MemberId>,
    },
    /// `message` carried `[DONE]`, so its `[NEXT]` addressees were not routed.
    NextIgnoredAfterDone {
        message: MessageId,
        names: Vec<String>,
    },
    /// A reply arrived after `[DONE]` (the agent was already running); it is stored, not routed.
    NotRoutedAfterDone { message: MessageId },
    /// An AI wrote `[FROM]`, which only humans may use; the reply stays attributed to `member`.
    FromIgnored {
        message: MessageId,
        member: MemberId,
    },
    /// The queue already holds its limit of pending deliveries; this one was refused.
    QueueFull {
        to: MemberId,
        parent: MessageId,
        limit: usize,
    },
    /// `parent` already has its limit of pending deliveries; this one was queued as P3.
    Demoted {
        to: MemberId,
        parent: MessageId,
        from: Intent,
        limit: usize,
    },
    /// An identical (parent, target, intent) delivery is already pending; not queued twice.
    AlreadyQueued {
        to: MemberId,
        parent: MessageId,
        intent: Intent,
    },
    /// `limit` AI deliveries ran since the last human message (`maxRounds`): the pending AI
    /// deliveries were dropped to stop a runaway loop; a human must speak to continue.
    RoundLimitReached {
        limit: usize,
        dropped: Vec<MemberId>,
    },
    /// The runs of this conversation cost `spent`, which reached the team's `maxCostUsd`
    /// (`limit`): no further AI delivery starts (these were dropped) until the limit is raised.
    /// `passed_by`: how far past the cap the last run took the spend, when that run crossed it
    /// (a run in flight is never stopped by the cap, so it can end above it).
    CostLimitReached {
        limit: Usd,
        spent: Usd,
        passed_by: Option<Usd>,
        dropped: Vec<MemberId>,
    },
    /// `to`'s prompt crossed into `status` (warning at 75% of its budget, critical at 90%;
    /// the fuller of the byte and token budgets decides): raised on the crossing, not on
    /// every prompt past it (seed 003's `budget_warning` / `budget_critical`).
    BudgetCrossed {
        to: MemberId,
        status: BudgetStatus,
        total_bytes: usize,
        max_bytes: usize,
    },
    /// `member`'s agent type is not one the core knows; its prompts use the plain format.
    UnknownAgentType {
        member: MemberId,
        agent_type: String,
    },
    /// The prompt for `to` could not be built; the delivery was skipped.
    PromptFailed { to: MemberId, error: String },
    /// `message` did not fit `to`'s budget whole: its text was cut from `from_bytes` to
    /// `to_bytes` (0: none of it fits) so the prompt stays within the budget. The delivery
    /// goes ahead; the notice says so where the explain alone would not be seen (a terminal).
    MessageCut {
        to: MemberId,
        message: MessageId,
        from_bytes: usize,
        to_bytes: usize,
    },
    /// `member` (shown as `name`) left the team once `after` messages were stored; `dropped`
    /// deliveries queued to them were dropped. Their messages stay theirs.
    MemberLeft {
        member: MemberId,
        name: String,
        after: usize,
        dropped: usize,
    },
}

impl Notice {
    /// The sentence a person reads, each message named by `label` (hosts that show notices
    /// name them as the page numbers them, `#2 from Max`, never by their internal id;
    /// docs/architecture.md §14c).
    pub fn describe(&self, label: impl Fn(&MessageId) -> String) -> String {
        let mut named = self.clone();
        let relabel = |id: &mut MessageId| *id = MessageId(label(id));
        match &mut named {
            Notice::UnresolvedAddressees { message, .. }
            | Notice::UnresolvedDropTargets { message, .. }
            | Notice::SelfAddressed { message, .. }
            | Notice::Dropped { message, .. }
            | Notice::NextIgnoredAfterDone { message, .. }
            | Notice::NotRoutedAfterDone { message }
            | Notice::FromIgnored { message, .. }
            | Notice::MessageCut { message, .. } => relabel(message),
            Notice::QueueFull { parent, .. }
            | Notice::Demoted { parent, .. }
            | Notice::AlreadyQueued { parent, .. } => relabel(parent),
            Notice::TeamTaskTruncated { .. }
            | Notice::RoundLimitReached { .. }
            | Notice::CostLimitReached { .. }
            | Notice::BudgetCrossed { .. }
            | Notice::UnknownAgentType { .. }
            | Notice::PromptFailed { .. }
            | Notice::MemberLeft { .. } => {}
        }
        named.to_string()
    }
}

/// One sentence, naming messages by their id (for logs; people read [`Notice::describe`]).
impl std::fmt::Display for Notice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Notice::TeamTaskTruncated { from, to } => {
                // docs/architecture.md §19 (seed 004)'s warning, word for word.
                write!(f, "Team task truncated from {from} bytes to {to} bytes (5KB limit).")
            }
            Notice::UnresolvedAddressees { message, names } => write!(
                f,
                "[NEXT] in {message}: no member matches {}; not routed",
                names.join(", ")
            ),
            Notice::UnresolvedDropTargets { message, names } => write!(
                f,
                "[DROP] in {message}: no member matches {}",
                names.join(", ")
            ),
            Notice::SelfAddressed { message, member } => write!(
                f,
                "{member} addressed itself in {message}; a member never answers itself"
            ),
            Notice::Dropped { message, removed } => write!(
                f,
                "[DROP] in {message} removed the pending deliveries to {}",
                removed.join(", ")
            ),
            Notice::NextIgnoredAfterDone { message, names } => write!(
                f,
                "{message} carried [DONE], so [NEXT: {}] was not routed",
                names.join(", ")
            ),
            Notice::NotRoutedAfterDone { message } => write!(
                f,
                "{message} arrived after [DONE]: stored, not routed"
            ),
            Notice::FromIgnored { message, member } => write!(
                f,
                "[FROM] in {message} ignored: only humans may use it; the reply stays {member}'s"
            ),
            Notice::QueueFull { to, parent, limit } => write!(
                f,
                "queue full ({limit} pending): the delivery of {parent} to {to} was refused"
            ),
            Notice::Demoted {
                to,
                parent,
                from,
                limit,
            } => write!(
                f,
                "{parent} already has {limit} pending deliveries: {to} was queued as P3 instead of {from}"
            ),
            Notice::AlreadyQueued { to, parent, intent } => write!(
                f,
                "{to} is already queued for {parent} with {intent}: not queued twice"
            ),
            Notice::RoundLimitReached { limit, dropped } => {
                write!(f, "runaway bound: {limit} AI deliveries since the last human message")?;
                if !dropped.is_empty() {
                    write!(f, "; dropped the pending deliveries to {}", dropped.join(", "))?;
                }
                f.write_str("; a human must speak to continue")
            }
            Notice::CostLimitReached {
                limit,
                spent,
                passed_by,
                dropped,
            } => write_cost_limit(f, (*limit, *spent, *passed_by), dropped),
            Notice::BudgetCrossed {
                to,
                status,
                total_bytes,
                max_bytes,
            } => write_budget_crossed(f, to, *status, *total_bytes, *max_bytes),
            Notice::UnknownAgentType { member, agent_type } => write!(
                f,
                "{member}: agent type {agent_type:?} is unknown; its prompts use the plain format"
            ),
            Notice::PromptFailed { to, error } => {
                write!(f, "the prompt for {to} could not be built: {error}")
            }
            Notice::MemberLeft {
                name,
                after,
                dropped,
                ..
            } => {
                match *after {
                    0 => write!(f, "{name} left the team before the first message")?,
                    n => write!(f, "{name} left the team at #{n}")?,
                }
                f.write_str(": their messages stay theirs; they get no more messages")?;
                match *dropped {
                    0 => Ok(()),
                    1 => f.write_str(" (1 queued delivery to them dropped)"),
                    n => write!(f, " ({n} queued deliveries to them dropped)"),
                }
            }
            Notice::MessageCut {
                to,
                message,
                to_bytes: 0,
                from_bytes,
                ..
            } => write!(
                f,
                "{message} does not reach {to}: none of its {from_bytes} bytes fit {to}'s budget"
            ),
            Notice::MessageCut {
                to,
                message,
                from_bytes,
                to_bytes,
            } => write!(
                f,
                "{message} reaches {to} cut to fit {to}'s budget: {to_bytes} of its {from_bytes} bytes"
            ),
        }
    }
}

/// [`Notice::CostLimitReached`]'s sentence: the spend against the cap (`limit`, `spent`, by
/// how much the last run passed it), what was dropped. The cap is named by its field's words
/// on the page ("max cost $"), the team file's key beside them.
fn write_cost_limit(
    f: &mut std::fmt::Formatter<'_>,
    (limit, spent, passed_by): (Usd, Usd, Option<Usd>),
    dropped: &[MemberId],
) -> std::fmt::Result {
    write!(
        f,
        "cost cap reached: the runs cost {} of the team's max cost {}",
        spent.display(),
        limit.display_limit()
    )?;
    if let Some(by) = passed_by {
        write!(
            f,
            " (the last run passed the cap by {}: a run that starts under the cap is not \
             stopped by it)",
            by.display()
        )?;
    }
    if !dropped.is_empty() {
        write!(
            f,
            "; dropped the pending deliveries to {}",
            dropped.join(", ")
        )?;
    }
    f.write_str("; raise \"max cost $\" (maxCostUsd) in the team's settings to go on")
}

/// [`Notice::BudgetCrossed`]'s sentence: the prompt's size against its budget, in percent.
fn write_budget_crossed(
    f: &mut std::fmt::Formatter<'_>,
    to: &MemberId,
    status: BudgetStatus,
    total_bytes: usize,
    max_bytes: usize,
) -> std::fmt::Result {
    let level = match status {
        BudgetStatus::Critical => "critical",
        BudgetStatus::Warning => "warning",
        BudgetStatus::Ok => "ok",
    };
    let percent = (total_bytes as u128 * 100)
        .checked_div(max_bytes as u128)
        .unwrap_or(100);
    write!(
        f,
        "budget {level}: {to}'s prompt is {total_bytes} of its {max_bytes} bytes ({percent}%); older \
         history is trimmed first as it grows"
    )
}
