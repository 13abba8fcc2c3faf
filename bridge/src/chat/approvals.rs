//! What an ACP agent does, as the terminal chat shows it (docs/architecture.md §14d): one line per tool call
//! when it is first seen and one when it fails; an approval with its tool call, what it
//! touches, its options and how to answer (`/allow`, `/allow always`, `/deny`), ringing the
//! bell as a human's turn does; and who settled it.

use std::collections::{HashMap, HashSet};

use agent_chatter::activity::{Activity, ApprovalRequest, DecidedBy, OptionKind, ToolStatus};

use crate::hub::{Hub, Said};

/// An answer typed in the chat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answer {
    /// `/allow`: the agent's allow-once option.
    Allow,
    /// `/allow always`: its allow-always option.
    AllowAlways,
    /// `/deny`: its reject-once option, else reject-always.
    Deny,
}

impl Answer {
    /// The option kinds this answer takes, the first the agent offers.
    fn kinds(self) -> &'static [OptionKind] {
        match self {
            Answer::Allow => &[OptionKind::AllowOnce],
            Answer::AllowAlways => &[OptionKind::AllowAlways],
            Answer::Deny => &[OptionKind::RejectOnce, OptionKind::RejectAlways],
        }
    }

    fn command(self) -> &'static str {
        match self {
            Answer::Allow => "/allow",
            Answer::AllowAlways => "/allow always",
            Answer::Deny => "/deny",
        }
    }
}

/// Answers the oldest open approval with `answer`'s option, as a person in the chat; says so
/// when none is open, or when the agent offers no such option.
pub(crate) async fn answer(hub: &Hub, answer: Answer) -> Result<String, String> {
    let open = hub.open_approvals().await.map_err(|e| e.to_string())?;
    let Some((to, request)) = open.into_iter().next() else {
        return Err("No agent is asking for approval".to_string());
    };
    let Some(option) = request.first_of(answer.kinds()) else {
        let offered: Vec<&str> = request.options.iter().map(|o| o.name.as_str()).collect();
        return Err(format!(
            "{} is not offered for \"{}\"; the options are: {}",
            answer.command(),
            request.tool_call.title,
            offered.join(", ")
        ));
    };
    let chosen = option.name.clone();
    hub.answer_approval(to, request.id.clone(), option.id.clone(), "chat")
        .await
        .map_err(|e| e.to_string())?;
    Ok(format!("✓ {chosen}: {}", request.tool_call.title))
}

/// What the printer remembers of the running agent's activity: the tool calls it has shown
/// (and shown failed), and the open approvals, to name what an answer settled.
#[derive(Default)]
pub(crate) struct Shown {
    calls: HashSet<(String, String)>,
    failed: HashSet<(String, String)>,
    asked: HashMap<String, ApprovalRequest>,
}

impl Shown {
    /// A new delivery: its tool call ids are its own.
    pub(crate) fn new_run(&mut self) {
        self.calls.clear();
        self.failed.clear();
    }

    /// The lines for an activity item of `name`'s run: a tool call when first seen and when it
    /// fails; nothing else (plans, thoughts and context fills are the page's).
    pub(crate) fn activity(&mut self, to: &str, name: &str, item: &Activity) -> Vec<Said> {
        let Activity::ToolCall(call) = item else {
            return Vec::new();
        };
        let key = (to.to_string(), call.id.clone());
        let mut said = Vec::new();
        if self.calls.insert(key.clone()) {
            said.push(Said::Out(format!(
                "  ⚙ {name}: {} ({})",
                call.title,
                call.kind.label()
            )));
        }
        if call.status == ToolStatus::Failed && self.failed.insert(key) {
            said.push(Said::Err(format!("  ✗ {name}: {} failed", call.title)));
        }
        said
    }

    /// The lines for a question from `name`'s run, with the bell: it needs the person.
    pub(crate) fn approval(&mut self, name: &str, request: &ApprovalRequest) -> Vec<Said> {
        self.asked.insert(request.id.clone(), request.clone());
        let call = &request.tool_call;
        let mut said = vec![
            Said::Bell,
            Said::Out(format!(
                "? {name} asks to run: {} ({})",
                call.title,
                call.kind.label()
            )),
        ];
        if !call.files.is_empty() {
            said.push(Said::Out(format!("  touches: {}", call.files.join(", "))));
        }
        let options: Vec<String> = request.options.iter().map(|o| o.name.clone()).collect();
        said.push(Said::Out(format!("  options: {}", options.join(", "))));
        let answers: Vec<&str> = [Answer::Allow, Answer::AllowAlways, Answer::Deny]
            .into_iter()
            .filter(|a| request.first_of(a.kinds()).is_some())
            .map(Answer::command)
            .collect();
        said.push(Said::Out(format!("  answer with {}", answers.join(", "))));
        said
    }

    /// The line for a settled question: what was chosen, and by whom.
    pub(crate) fn settled(
        &mut self,
        name: &str,
        request: &str,
        option: Option<&str>,
        by: &DecidedBy,
    ) -> Vec<Said> {
        let asked = self.asked.remove(request);
        let title = asked
            .as_ref()
            .map_or(request.to_string(), |r| r.tool_call.title.clone());
        let chosen = match (option, &asked) {
            (Some(id), Some(r)) => r
                .options
                .iter()
                .find(|o| o.id == id)
                .map_or(id.to_string(), |o| o.name.clone()),
            (Some(id), None) => id.to_string(),
            (None, _) => "withdrawn".to_string(),
        };
        vec![Said::Out(format!(
            "  {name}'s question \"{title}\": {chosen}, decided by {}",
            by.describe()
        ))]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_chatter::activity::{ApprovalOption, ToolCall, ToolKind};
    use agent_chatter::message::Millis;

    fn request() -> ApprovalRequest {
        let option = |id: &str, name: &str, kind| ApprovalOption {
            id: id.into(),
            name: name.into(),
            kind,
        };
        ApprovalRequest {
            id: "max-1".into(),
            tool_call: ToolCall {
                id: "w1".into(),
                title: "Write hello.txt".into(),
                kind: ToolKind::Edit,
                status: ToolStatus::Pending,
                files: vec!["/w/hello.txt".into()],
                diff: None,
            },
            options: vec![
                option("allow", "Allow", OptionKind::AllowOnce),
                option("reject", "Reject", OptionKind::RejectOnce),
            ],
            deadline: Millis(0),
        }
    }

    #[test]
    fn a_tool_call_shows_once_and_again_when_it_fails_and_a_question_rings() {
        let mut shown = Shown::default();
        let mut call = request().tool_call;
        let item = |c: &ToolCall| Activity::ToolCall(c.clone());
        assert_eq!(
            shown.activity("max", "Max", &item(&call)),
            vec![Said::Out("  ⚙ Max: Write hello.txt (edit)".into())]
        );
        call.status = ToolStatus::InProgress;
        assert!(shown.activity("max", "Max", &item(&call)).is_empty());
        call.status = ToolStatus::Failed;
        assert_eq!(
            shown.activity("max", "Max", &item(&call)),
            vec![Said::Err("  ✗ Max: Write hello.txt failed".into())]
        );
        let asked = shown.approval("Max", &request());
        assert_eq!(asked[0], Said::Bell);
        assert!(asked.contains(&Said::Out("  touches: /w/hello.txt".into())));
        // No allow-always option: `/allow always` is not offered.
        assert!(asked.contains(&Said::Out("  answer with /allow, /deny".into())));
        let by = DecidedBy::Person {
            r#where: "chat".into(),
        };
        assert_eq!(
            shown.settled("Max", "max-1", Some("allow"), &by),
            vec![Said::Out(
                "  Max's question \"Write hello.txt\": Allow, decided by you, in the chat".into()
            )]
        );
    }
}
