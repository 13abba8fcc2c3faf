//! The context for one delivery (DESIGN §7): window → strip → dedup → route context → assemble
//! → budget, recording each message's fate on the way.

pub mod dedup;
pub mod manager;
pub mod route;
pub mod store;
pub mod window;

use serde::{Deserialize, Serialize};

pub use store::{Store, TeamTaskTruncated, MAX_TEAM_TASK_BYTES};

use crate::assemble::{self, AssemblerInput, ContextLine};
use crate::budget::{self, Budget};
use crate::explain::{DedupReason, Explain, Fate, MessageFate};
use crate::markers;
use crate::message::{MemberId, MessageId, SpeakerKind};
use crate::team::{CompactionStrategy, DeliveryPolicy, Member, PromptFormat, Team};

/// An extra named section of a member's context (seed 003 plugins: plan, memory, tool output).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtraSection {
    pub name: String,
    pub content: String,
    /// Higher is trimmed first among compactable sections.
    #[serde(default)]
    pub priority: i32,
    /// Compactable sections may be trimmed (before history); others never are, unless the
    /// budget cannot hold them at all (the hard invariant wins, and the explain says so).
    #[serde(default)]
    pub compactable: bool,
}

/// Who receives the prompt and what they carry beyond the shared history.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Recipient {
    pub id: MemberId,
    /// Agent type as configured (normalised inside).
    pub agent_type: String,
    pub system_instruction: Option<String>,
    pub instruction_file_text: Option<String>,
    #[serde(default)]
    pub extra_sections: Vec<ExtraSection>,
}

impl Recipient {
    pub fn from_member(member: &Member) -> Self {
        Recipient {
            id: member.id.clone(),
            agent_type: member.agent_type.clone().unwrap_or_default(),
            system_instruction: member.system_instruction.clone(),
            instruction_file_text: member.instruction_file_text.clone(),
            extra_sections: Vec::new(),
        }
    }

    pub fn format(&self) -> PromptFormat {
        crate::team::prompt_format(&self.agent_type)
    }
}

/// Pluggable token estimate (seed 002: `chars / 4`, rounded up).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum TokenEstimator {
    /// No token figures.
    #[default]
    None,
    /// `ceil(chars / 4)`.
    CharsDiv4,
}

/// Settings of one build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BuildSettings {
    pub window: usize,
    pub pin_first: bool,
    pub max_bytes: usize,
    pub delivery: DeliveryPolicy,
    pub compaction: CompactionStrategy,
    pub tokens: TokenEstimator,
}

impl BuildSettings {
    /// The settings in force for `member` of `team`.
    pub fn for_member(team: &Team, member: &Member) -> Self {
        BuildSettings {
            window: team.window_for(member),
            pin_first: team.settings.pin_first,
            max_bytes: team.settings.max_bytes,
            delivery: team.settings.delivery,
            compaction: team.settings.compaction,
            tokens: TokenEstimator::None,
        }
    }
}

/// Which message the prompt answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Target {
    /// The message that becomes `[MESSAGE]`.
    pub current: MessageId,
    /// For routed deliveries: the message that addressed the recipient.
    pub parent: Option<MessageId>,
}

/// The result of a build: exactly what the agent receives, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Prompt {
    pub prompt: String,
    /// Claude's system part, passed as `--append-system-prompt`; `None` when empty or for
    /// other formats.
    pub system_flag: Option<String>,
    pub explain: Explain,
}

/// Why a prompt could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    #[error("message {0}: not in the conversation")]
    UnknownMessage(MessageId),
    #[error("parent message {0}: not in the conversation")]
    UnknownParent(MessageId),
}

/// The history line of a stored message (stripped content, `to` = addressees or `all`).
fn line_of(message: &crate::message::Message, content: String) -> ContextLine {
    ContextLine {
        from: message.speaker.name.clone(),
        to: message.to_label(),
        content,
        message_id: Some(message.id.clone()),
    }
}

/// The input gathered for one delivery, with each considered message's fate so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gathered {
    pub input: AssemblerInput,
    /// `(store position, fate)` of every message looked at, in store order.
    pub fates: Vec<(usize, MessageFate)>,
    pub markers_stripped: usize,
}

/// Steps 1–4 of DESIGN §7: window, strip, dedup, route context. O(window + siblings).
pub fn gather(
    store: &Store,
    recipient: &Recipient,
    target: &Target,
    settings: &BuildSettings,
) -> Result<Gathered, BuildError> {
    let cur_pos = store
        .position(&target.current)
        .ok_or_else(|| BuildError::UnknownMessage(target.current.clone()))?;
    let parent_pos = match &target.parent {
        Some(p) => Some(
            store
                .position(p)
                .ok_or_else(|| BuildError::UnknownParent(p.clone()))?,
        ),
        None => None,
    };
    let messages = store.messages();
    let current = &messages[cur_pos];
    let mut stripped_count = 0;
    let mut strip = |text: &str| {
        let (s, n) = markers::strip_all_counted(text);
        stripped_count += n;
        s
    };
    let fate = |pos: usize, fate: Fate| {
        (
            pos,
            MessageFate {
                id: messages[pos].id.clone(),
                speaker: messages[pos].speaker.id.clone(),
                fate,
            },
        )
    };
    let mut fates = Vec::new();

    let win = window::select(cur_pos, settings.window, settings.pin_first);
    let pinned = win.pinned.map(|p| {
        fates.push(fate(p, Fate::Pinned));
        line_of(&messages[p], strip(&messages[p].content))
    });

    let routed = settings.delivery == DeliveryPolicy::Parent && target.parent.is_some();
    let current_stripped = strip(&current.content);
    let mut lines: Vec<(usize, ContextLine)> = win
        .range
        .clone()
        .map(|pos| (pos, line_of(&messages[pos], strip(&messages[pos].content))))
        .collect();
    let mut removed: Vec<(usize, DedupReason)> = Vec::new();
    if let Some((pos, last)) = lines.last() {
        if let Some(reason) =
            dedup::repeats_current(&messages[*pos], &last.content, current, &current_stripped)
        {
            removed.push((*pos, reason));
            lines.pop();
        }
    }
    // Routed (parent policy): the window ends before the parent, which is the `[MESSAGE]`,
    // so the parent itself is never in it; the receiver's own last answer is dropped, as the
    // peer does (the agent's session already holds what it said).
    if routed {
        let own = |pos: usize| {
            let speaker = &messages[pos].speaker;
            speaker.kind == SpeakerKind::Ai && speaker.id == recipient.id
        };
        if let Some(k) = lines.iter().rposition(|(pos, _)| own(*pos)) {
            removed.push((lines[k].0, DedupReason::OwnLast));
            lines.remove(k);
        }
    }
    for pos in win.range.clone() {
        let f = match removed.iter().find(|(p, _)| *p == pos) {
            Some((_, reason)) => Fate::Deduplicated { reason: *reason },
            None => Fate::Included,
        };
        fates.push(fate(pos, f));
    }
    fates.push(fate(cur_pos, Fate::Current));

    // Route context: the parent when it is not the message and fell out of the window.
    let mut parent = None;
    if let Some(pp) = parent_pos {
        let in_window = win.range.contains(&pp) || win.pinned == Some(pp);
        if pp != cur_pos && !in_window {
            parent = Some(line_of(&messages[pp], strip(&messages[pp].content)));
            fates.push(fate(pp, Fate::ParentContext));
        }
    }
    let mut related = Vec::new();
    if let (true, Some(p)) = (routed, &target.parent) {
        for &pos in store.children(p).iter().rev() {
            if related.len() == route::MAX_RELATED {
                break;
            }
            let m = &messages[pos];
            if m.speaker.id == recipient.id || pos == cur_pos {
                continue;
            }
            related.push(line_of(m, route::summarize_related(&strip(&m.content))));
            fates.push(fate(pos, Fate::Related));
        }
    }
    fates.sort_by_key(|(pos, _)| *pos);

    let input = AssemblerInput {
        context_messages: lines.into_iter().map(|(_, l)| l).collect(),
        current_message: current_stripped,
        current_message_id: Some(current.id.clone()),
        team_task: store.team_task().map(str::to_string),
        system_instruction: recipient.system_instruction.clone(),
        instruction_file_text: recipient.instruction_file_text.clone(),
        max_bytes: settings.max_bytes,
        pinned,
        omitted: win.omitted,
        parent,
        related,
        extra_sections: recipient.extra_sections.clone(),
        agent_id: Some(recipient.id.clone()),
    };
    Ok(Gathered {
        input,
        fates,
        markers_stripped: stripped_count,
    })
}

/// Steps 5–6: assemble `input` in `format` and fit it into `budget`. The explain lists the
/// fates the input itself shows (history lines, current); [`build`] adds the rest.
pub fn assemble_prompt(format: PromptFormat, input: &AssemblerInput, budget: Budget) -> Prompt {
    let layout = assemble::assemble(format, input);
    let fitted = budget::fit(layout, budget);
    let trimmed =
        |id: &MessageId| fitted.trimmed.contains(id) || fitted.dropped_related.contains(id);
    let mut messages = Vec::new();
    let lines = input.pinned.iter().chain(&input.context_messages);
    for line in lines {
        if let Some(id) = &line.message_id {
            let fate = if trimmed(id) {
                Fate::TrimmedForBudget
            } else {
                Fate::Included
            };
            messages.push(MessageFate {
                id: id.clone(),
                speaker: line.from.clone(),
                fate,
            });
        }
    }
    if let Some(id) = &input.current_message_id {
        messages.push(MessageFate {
            id: id.clone(),
            speaker: String::new(),
            fate: Fate::Current,
        });
    }
    let explain = Explain {
        recipient: input.agent_id.clone().unwrap_or_default(),
        format,
        sections: fitted.sections,
        messages,
        outside_window: 0,
        markers_stripped: 0,
        truncations: fitted.truncations,
        total_bytes: fitted.total_bytes,
        max_bytes: budget.max_bytes,
        total_tokens: fitted.total_tokens,
        status: fitted.status,
        strategy: budget.strategy,
        window: input.context_messages.len(),
    };
    Prompt {
        prompt: fitted.prompt,
        system_flag: fitted.system_flag,
        explain,
    }
}

/// The exact prompt `recipient` receives for `target` (DESIGN §7–§9), with its explain.
///
/// Cost: O(window + sibling answers + bytes emitted), independent of the history's length.
pub fn build(
    store: &Store,
    recipient: &Recipient,
    target: &Target,
    settings: &BuildSettings,
) -> Result<Prompt, BuildError> {
    let gathered = gather(store, recipient, target, settings)?;
    let budget = Budget {
        max_bytes: settings.max_bytes,
        strategy: settings.compaction,
        tokens: settings.tokens,
    };
    let layout = assemble::assemble(recipient.format(), &gathered.input);
    let fitted = budget::fit(layout, budget);
    let parent_id = gathered
        .input
        .parent
        .as_ref()
        .and_then(|l| l.message_id.clone());
    let messages: Vec<MessageFate> = gathered
        .fates
        .into_iter()
        .map(|(_, mut mf)| {
            let cut = match mf.fate {
                Fate::Included | Fate::Pinned => fitted.trimmed.contains(&mf.id),
                Fate::Related => fitted.dropped_related.contains(&mf.id),
                Fate::ParentContext => fitted.parent_dropped && parent_id.as_ref() == Some(&mf.id),
                _ => false,
            };
            if cut {
                mf.fate = Fate::TrimmedForBudget;
            }
            mf
        })
        .collect();
    let explain = Explain {
        recipient: recipient.id.clone(),
        format: recipient.format(),
        sections: fitted.sections,
        outside_window: store.len() - messages.len(),
        messages,
        markers_stripped: gathered.markers_stripped,
        truncations: fitted.truncations,
        total_bytes: fitted.total_bytes,
        max_bytes: settings.max_bytes,
        total_tokens: fitted.total_tokens,
        status: fitted.status,
        strategy: settings.compaction,
        window: settings.window,
    };
    Ok(Prompt {
        prompt: fitted.prompt,
        system_flag: fitted.system_flag,
        explain,
    })
}
