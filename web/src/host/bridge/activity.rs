//! What a bridge says of its agents over ACP (docs/architecture.md §14d), as the page keeps
//! it: each run's activity by (message, member), the open approvals by member, each member's
//! last context fill; and the page's answer to an approval.

use std::collections::BTreeMap;

use agent_chatter::activity::{Activity, ActivityLog, ApprovalRequest, RunActivity};
use agent_chatter::message::MemberId;
use agent_chatter::protocol::Command;
use leptos::prelude::*;

use super::Bridge;

impl Bridge {
    /// A session's activity, whole: every run's, and the last context fill of each member.
    /// Approvals asked before are not known open any more (the bridge asks again).
    pub(super) fn on_activity_whole(&self, runs: Vec<RunActivity>) {
        let mut logs = BTreeMap::new();
        let mut context = BTreeMap::new();
        for run in runs {
            let log: &mut ActivityLog = logs.entry((run.message, run.to.clone())).or_default();
            for item in run.items {
                if let Activity::Context { used, size } = item {
                    context.insert(run.to.clone(), (used, size));
                }
                log.push(item);
            }
        }
        self.activity.set(logs);
        self.context.set(context);
        self.approvals.set(BTreeMap::new());
    }

    /// One more thing a running agent did.
    pub(super) fn on_activity(&self, to: MemberId, message: String, item: Activity) {
        if let Activity::Context { used, size } = item {
            self.context.update(|c| {
                c.insert(to.clone(), (used, size));
            });
        }
        if let Activity::Decision(d) = &item {
            self.settled(&to, &d.request);
        }
        self.activity
            .update(|logs| logs.entry((message, to)).or_default().push(item));
    }

    /// The approval `request` of `to` is no longer open.
    pub(super) fn settled(&self, to: &str, request: &str) {
        if self
            .approvals
            .with_untracked(|o| o.get(to).is_some_and(|a| a.iter().any(|r| r.id == request)))
        {
            self.approvals.update(|open| {
                if let Some(asked) = open.get_mut(to) {
                    asked.retain(|r| r.id != request);
                    if asked.is_empty() {
                        open.remove(to);
                    }
                }
            });
        }
    }

    /// What the run of `member` for the message `message` did (reactive).
    pub fn activity(&self, message: &str, member: &str) -> Vec<Activity> {
        self.activity.with(|logs| {
            logs.get(&(message.to_string(), member.to_string()))
                .map(|l| l.items().to_vec())
                .unwrap_or_default()
        })
    }

    /// Every open approval, by member (reactive).
    pub fn approvals(&self) -> Vec<(MemberId, ApprovalRequest)> {
        self.approvals.with(|open| {
            open.iter()
                .flat_map(|(m, asked)| asked.iter().map(|r| (m.clone(), r.clone())))
                .collect()
        })
    }

    /// Whether `member`'s agent waits for an answer (reactive).
    pub fn needs_you(&self, member: &str) -> bool {
        self.approvals.with(|open| open.contains_key(member))
    }

    /// The last context fill `member`'s agent reported (reactive).
    pub fn context_fill(&self, member: &str) -> Option<(u64, u64)> {
        self.context.with(|c| c.get(member).copied())
    }

    /// Answers `to`'s open approval `request` with `option`; the bridge settles it for every
    /// page (`approvalSettled`).
    pub fn answer_approval(&self, to: &str, request: &str, option: &str) {
        if !self.send(&Command::AnswerApproval {
            to: to.to_string(),
            request: request.to_string(),
            option: option.to_string(),
        }) {
            self.state
                .report("not connected to the bridge: the approval was not answered");
        }
    }
}
