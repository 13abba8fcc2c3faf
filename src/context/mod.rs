//! The context for one delivery (docs/architecture.md §7): window → strip → dedup → route context →
//! assemble → budget, recording each message's fate on the way.

pub(crate) mod dedup;
pub(crate) mod route;
mod store;
mod window;

use serde::{Deserialize, Serialize};

pub use store::{Store, TeamTaskTruncated, MAX_TEAM_TASK_BYTES};

use std::borrow::Cow;

use crate::assemble::{self, AssemblerInput, InputRef, LineRef};
use crate::budget::{self, Budget};
use crate::explain::{DedupReason, Explain, Fate, MessageFate};
use crate::message::{MemberId, MessageId, SpeakerKind};
use crate::team::{CompactionStrategy, DeliveryPolicy, ExtraSection, Member, PromptFormat, Team};

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
            extra_sections: member.extra_sections.clone(),
        }
    }

    pub(crate) fn format(&self) -> PromptFormat {
        crate::team::prompt_format(&self.agent_type)
    }
}

pub use crate::tokens::TokenEstimator;

/// Settings of one build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BuildSettings {
    pub window: usize,
    pub pin_first: bool,
    pub max_bytes: usize,
    pub delivery: DeliveryPolicy,
    pub compaction: CompactionStrategy,
    /// Token estimate for the explain; with `max_tokens`, `chars/4` is used in any case.
    pub tokens: TokenEstimator,
    /// Optional token budget kept beside `max_bytes` (docs/architecture.md §9).
    #[serde(default)]
    pub max_tokens: Option<usize>,
}

impl BuildSettings {
    /// The budget these settings keep (bytes, and tokens when set).
    pub(crate) fn budget(&self) -> Budget {
        Budget {
            max_bytes: self.max_bytes,
            strategy: self.compaction,
            tokens: self.tokens,
            max_tokens: self.max_tokens,
        }
    }

    /// The settings in force for `member` of `team`.
    pub(crate) fn for_member(team: &Team, member: &Member) -> Self {
        BuildSettings {
            window: team.window_for(member),
            pin_first: team.settings.pin_first,
            max_bytes: team.settings.max_bytes,
            delivery: team.settings.delivery,
            compaction: team.settings.compaction,
            tokens: team.settings.token_estimator,
            max_tokens: team.settings.max_tokens,
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
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(rename = "Preview"))]
pub struct Prompt {
    pub prompt: String,
    /// Claude's system part, passed as `--append-system-prompt`; none (`null`) when empty or
    /// for other formats.
    pub system_flag: Option<String>,
    pub explain: Explain,
}

impl Prompt {
    /// The prompt of a delivery emitted while a session replays (never read: only the
    /// newest delivery's prompt is built, see `Conversation::build_deferred`).
    pub(crate) fn not_built() -> Self {
        Prompt {
            prompt: String::new(),
            system_flag: None,
            explain: Explain {
                recipient: MemberId::new(),
                format: PromptFormat::Plain,
                sections: Vec::new(),
                current: None,
                messages: Vec::new(),
                outside_window: 0,
                markers_stripped: 0,
                truncations: Vec::new(),
                total_bytes: 0,
                max_bytes: 0,
                total_tokens: None,
                max_tokens: None,
                status: crate::explain::BudgetStatus::Ok,
                strategy: CompactionStrategy::Lazy,
                window: 0,
            },
        }
    }

    /// The SHA-256 (lowercase hex) of exactly what an agent is given: the prompt's bytes, and
    /// when there is a system flag, a NUL byte and the flag's bytes. A bridge sends it with
    /// each delivery and a page recomputes it from its own session (docs/architecture.md §6b), so
    /// both can show that what was previewed is what was sent. The NUL keeps the two parts apart.
    pub fn sha256_hex(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut hasher = Sha256::new();
        hasher.update(self.prompt.as_bytes());
        if let Some(flag) = &self.system_flag {
            hasher.update([0u8]);
            hasher.update(flag.as_bytes());
        }
        hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

/// The store as it was at an earlier point (time travel, docs/architecture.md §6b): only its first
/// `len` messages exist, and the team task is the one in force then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AsOf<'a> {
    pub len: usize,
    pub team_task: Option<&'a str>,
}

impl<'a> AsOf<'a> {
    /// The store as it is now.
    pub(crate) fn now(store: &'a Store) -> Self {
        AsOf {
            len: store.len(),
            team_task: store.team_task(),
        }
    }
}

/// Why a prompt could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    #[error("message {0}: not in the conversation")]
    UnknownMessage(MessageId),
    #[error("parent message {0}: not in the conversation")]
    UnknownParent(MessageId),
}

/// The history line of the stored message at `pos`, borrowed from the store's views.
fn line_at(store: &Store, pos: usize) -> Option<LineRef<'_>> {
    let message = store.messages().get(pos)?;
    let view = store.view(pos)?;
    Some(LineRef {
        from: &message.speaker.name,
        to: view.to(message),
        content: Cow::Borrowed(store.stripped(pos)?),
        index: Some(pos),
    })
}

/// The input gathered for one delivery, borrowed from the store, with each considered
/// message's fate so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Gathered<'a> {
    pub input: InputRef<'a>,
    /// Fates of every message looked at, in store order.
    pub fates: Vec<MessageFate>,
    pub markers_stripped: usize,
}

/// Steps 1–4 of docs/architecture.md §7: window, strip, dedup, route context, over the store as
/// it was at `as_of` (messages from `as_of.len` on do not exist). O(window + siblings); the
/// stripped text comes from the store's views, so nothing is copied.
pub(crate) fn gather_as_of<'a>(
    store: &'a Store,
    recipient: &'a Recipient,
    target: &Target,
    settings: &BuildSettings,
    as_of: AsOf<'a>,
) -> Result<Gathered<'a>, BuildError> {
    let cur_pos = store
        .position(&target.current)
        .filter(|&p| p < as_of.len)
        .ok_or_else(|| BuildError::UnknownMessage(target.current.clone()))?;
    let parent_pos = match &target.parent {
        Some(p) => Some(
            store
                .position(p)
                .filter(|&p| p < as_of.len)
                .ok_or_else(|| BuildError::UnknownParent(p.clone()))?,
        ),
        None => None,
    };
    let messages = store.messages();
    let line = |pos: usize| {
        line_at(store, pos).ok_or_else(|| BuildError::UnknownMessage(messages[pos].id.clone()))
    };
    let markers = |pos: usize| store.view(pos).map_or(0, |v| v.markers());
    let mut markers_stripped = markers(cur_pos);
    let mut fates = Vec::with_capacity(settings.window.min(cur_pos) + 8);

    let win = window::select(
        cur_pos,
        settings.window,
        settings.pin_first,
        store.withheld(),
    );
    let withheld = |pos: usize| store.is_withheld(pos);
    let pinned = match win.pinned.filter(|&p| !withheld(p)) {
        Some(p) => {
            fates.push(MessageFate {
                index: p,
                fate: Fate::Pinned,
            });
            markers_stripped += markers(p);
            Some(line(p)?)
        }
        None => None,
    };

    let routed = settings.delivery == DeliveryPolicy::Parent && target.parent.is_some();
    let current_line = line(cur_pos)?;
    let (context, removed) = window_lines(
        store,
        &recipient.id,
        (win.range.clone(), cur_pos),
        &current_line,
        routed,
    )?;
    for pos in win.range.clone() {
        if withheld(pos) {
            fates.push(MessageFate {
                index: pos,
                fate: Fate::Withheld,
            });
            continue;
        }
        let fate = match removed.iter().find(|(p, _)| *p == pos) {
            Some((_, reason)) => Fate::Deduplicated { reason: *reason },
            None => Fate::Included,
        };
        markers_stripped += markers(pos);
        fates.push(MessageFate { index: pos, fate });
    }
    fates.push(MessageFate {
        index: cur_pos,
        fate: Fate::Current,
    });

    // Route context: the parent when it is not the message and fell out of the window.
    let mut parent = None;
    if let Some(pp) = parent_pos {
        let in_window = win.range.contains(&pp) || win.pinned == Some(pp);
        if pp != cur_pos && !in_window && !withheld(pp) {
            parent = Some(line(pp)?);
            markers_stripped += markers(pp);
            fates.push(MessageFate {
                index: pp,
                fate: Fate::ParentContext,
            });
        }
    }
    let related = match (routed, &target.parent) {
        (true, Some(p)) => related_lines(
            store,
            &recipient.id,
            (p, cur_pos, as_of.len),
            &mut fates,
            &mut markers_stripped,
        )?,
        _ => Vec::new(),
    };
    fates.sort_unstable_by_key(|f| f.index);

    let input = InputRef {
        context,
        current: store.stripped(cur_pos).unwrap_or_default(),
        current_index: Some(cur_pos),
        team_task: as_of.team_task,
        system_instruction: recipient.system_instruction.as_deref(),
        instruction_file_text: recipient.instruction_file_text.as_deref(),
        pinned,
        omitted: win.omitted,
        parent,
        related,
        extra_sections: &recipient.extra_sections,
    };
    Ok(Gathered {
        input,
        fates,
        markers_stripped,
    })
}

/// The lines a window keeps, and the positions it dropped with why.
type WindowLines<'a> = (Vec<LineRef<'a>>, Vec<(usize, DedupReason)>);

/// The window's lines for `recipient` (the messages in `range`, the current one at `cur_pos`):
/// withheld ones left out, the last one dropped when it repeats the current message, and, for
/// a routed delivery, the receiver's own last answer (the agent's session already holds what
/// it said, as the peer does); with what was dropped and why.
fn window_lines<'a>(
    store: &'a Store,
    recipient: &str,
    (range, cur_pos): (std::ops::Range<usize>, usize),
    current_line: &LineRef<'a>,
    routed: bool,
) -> Result<WindowLines<'a>, BuildError> {
    let messages = store.messages();
    let line = |pos: usize| {
        line_at(store, pos).ok_or_else(|| BuildError::UnknownMessage(messages[pos].id.clone()))
    };
    let mut context: Vec<LineRef<'a>> = Vec::with_capacity(range.len());
    for pos in range.filter(|&p| !store.is_withheld(p)) {
        context.push(line(pos)?);
    }
    let mut removed: Vec<(usize, DedupReason)> = Vec::new();
    if let Some(last) = context.last() {
        let pos = last.index.unwrap_or(cur_pos);
        if let Some(reason) = dedup::repeats_current(
            &messages[pos],
            &last.content,
            &messages[cur_pos],
            &current_line.content,
        ) {
            removed.push((pos, reason));
            context.pop();
        }
    }
    // Routed (parent policy): the window ends before the parent, which is the `[MESSAGE]`,
    // so the parent itself is never in it.
    if routed {
        let own = |l: &LineRef<'_>| {
            let speaker = &messages[l.index.unwrap_or(cur_pos)].speaker;
            speaker.kind == SpeakerKind::Ai && speaker.id == recipient
        };
        if let Some(k) = context.iter().rposition(own) {
            removed.push((context[k].index.unwrap_or(cur_pos), DedupReason::OwnLast));
            context.remove(k);
        }
    }
    Ok((context, removed))
}

/// The related messages of a routed delivery: the other answers to `parent` stored before
/// `as_of`, newest first, at most [`route::MAX_RELATED`], each summarized (the recipient's own
/// and the current message left out); their fates and markers noted.
fn related_lines<'a>(
    store: &'a Store,
    recipient: &str,
    (parent, cur_pos, as_of): (&crate::message::MessageId, usize, usize),
    fates: &mut Vec<MessageFate>,
    markers_stripped: &mut usize,
) -> Result<Vec<LineRef<'a>>, BuildError> {
    let messages = store.messages();
    let mut related = Vec::new();
    for &pos in store.children(parent).iter().rev() {
        if pos >= as_of {
            continue;
        }
        if related.len() == route::MAX_RELATED {
            break;
        }
        if messages[pos].speaker.id == recipient || pos == cur_pos {
            continue;
        }
        if store.is_withheld(pos) {
            fates.push(MessageFate {
                index: pos,
                fate: Fate::Withheld,
            });
            continue;
        }
        let mut l = line_at(store, pos)
            .ok_or_else(|| BuildError::UnknownMessage(messages[pos].id.clone()))?;
        l.content = Cow::Owned(route::summarize_related(&l.content));
        related.push(l);
        *markers_stripped += store.view(pos).map_or(0, |v| v.markers());
        fates.push(MessageFate {
            index: pos,
            fate: Fate::Related,
        });
    }
    Ok(related)
}

impl Gathered<'_> {
    /// The owned assembler input for `recipient` within `max_bytes`, every position moved by
    /// `offset` (a host whose store holds the conversation from position `offset` on).
    pub(crate) fn to_input(
        &self,
        recipient: &Recipient,
        max_bytes: usize,
        offset: usize,
    ) -> AssemblerInput {
        let i = &self.input;
        let line = |l: &LineRef<'_>| {
            let mut line = l.to_owned_line();
            line.index = line.index.map(|p| p + offset);
            line
        };
        AssemblerInput {
            context_messages: i.context.iter().map(line).collect(),
            current_message: i.current.to_string(),
            current_index: i.current_index.map(|p| p + offset),
            team_task: i.team_task.map(str::to_string),
            system_instruction: recipient.system_instruction.clone(),
            instruction_file_text: recipient.instruction_file_text.clone(),
            max_bytes,
            pinned: i.pinned.as_ref().map(line),
            omitted: i.omitted,
            parent: i.parent.as_ref().map(line),
            related: i.related.iter().map(line).collect(),
            extra_sections: recipient.extra_sections.clone(),
            agent_id: Some(recipient.id.clone()),
        }
    }
}

/// Pin-first when the window reaches the first message (docs/architecture.md §7.1, §9,
/// §19 (seed 002)): the first message is then the first window line, rendered as any other
/// (no omitted line, so the prompt is byte for byte the one without pin-first), but the budget
/// trims it last, as it does the pinned line of a window that starts later: newer window lines
/// go first, each joining the `[N earlier messages omitted]` count. Marks that line and says
/// whether there was one (not when dedup removed it, nor when it is already the pinned line
/// outside the window).
///
/// Its fate stays `included` while nothing else of the window is trimmed, and becomes
/// `pinned` once a newer window line is: from then on it is in the prompt only because of
/// pin-first, shown before the omitted line exactly as a pinned message outside the window is.
fn pin_first_window_line(layout: &mut assemble::Layout<'_>) -> bool {
    let context = layout
        .sections
        .iter_mut()
        .find(|s| s.role == assemble::Role::Context);
    let Some(assemble::Section {
        body: assemble::Body::Lines { lines, .. },
        ..
    }) = context
    else {
        return false;
    };
    match lines.first_mut() {
        Some(line) if line.index == Some(0) && !line.pinned => {
            line.pinned = true;
            true
        }
        _ => false,
    }
}

/// Marks the fates the budget changed: dropped lines become `TrimmedForBudget`. Both lists
/// are sorted by position, so one merge pass does it (O(window)).
fn apply_trims(fates: &mut [MessageFate], fitted: &budget::Fitted, parent: Option<usize>) {
    let mut trimmed = fitted.trimmed.iter().peekable();
    for mf in fates {
        while trimmed.next_if(|&&t| t < mf.index).is_some() {}
        let cut = match mf.fate {
            Fate::Current => fitted.message_dropped,
            Fate::Included | Fate::Pinned => trimmed.peek() == Some(&&mf.index),
            Fate::Related => fitted.dropped_related.contains(&mf.index),
            Fate::ParentContext => fitted.parent_dropped && parent == Some(mf.index),
            _ => false,
        };
        if cut {
            mf.fate = Fate::TrimmedForBudget;
        }
    }
}

/// Steps 5–6: assemble `input` in `format` and fit it into `budget`. The explain lists the
/// fates the input itself shows (its history lines with positions, the current message).
pub(crate) fn assemble_prompt(
    format: PromptFormat,
    input: &AssemblerInput,
    budget: Budget,
) -> Prompt {
    let recipient = input.agent_id.as_deref().unwrap_or_default();
    assemble_input_ref(format, &input.as_ref(), recipient, budget)
}

/// [`assemble_prompt`] over a borrowed input (what [`gather_as_of`] gives), so a host that builds
/// and assembles in one go copies no history text.
pub(crate) fn assemble_input_ref(
    format: PromptFormat,
    input_ref: &InputRef<'_>,
    recipient: &str,
    budget: Budget,
) -> Prompt {
    let layout = assemble::assemble(format, input_ref);
    let fitted = budget::fit(layout, budget);
    let mut fates: Vec<MessageFate> = input_ref
        .pinned
        .iter()
        .map(|l| (l, Fate::Pinned))
        .chain(input_ref.context.iter().map(|l| (l, Fate::Included)))
        .filter_map(|(l, fate)| l.index.map(|index| MessageFate { index, fate }))
        .chain(input_ref.current_index.map(|index| MessageFate {
            index,
            fate: Fate::Current,
        }))
        .collect();
    fates.sort_unstable_by_key(|f| f.index);
    apply_trims(&mut fates, &fitted, None);
    let explain = Explain {
        recipient: recipient.to_string(),
        format,
        sections: fitted.sections,
        current: input_ref.current_index,
        messages: fates,
        outside_window: 0,
        markers_stripped: 0,
        truncations: fitted.truncations,
        total_bytes: fitted.total_bytes,
        max_bytes: budget.max_bytes,
        total_tokens: fitted.total_tokens,
        max_tokens: budget.max_tokens,
        status: fitted.status,
        strategy: budget.strategy,
        window: input_ref.context.len(),
    };
    Prompt {
        prompt: fitted.prompt,
        system_flag: fitted.system_flag,
        explain,
    }
}

/// The exact prompt `recipient` receives for `target` (docs/architecture.md §7–§9), with its
/// explain.
///
/// Cost: O(window + sibling answers + bytes emitted), independent of the history's length.
pub fn build(
    store: &Store,
    recipient: &Recipient,
    target: &Target,
    settings: &BuildSettings,
) -> Result<Prompt, BuildError> {
    build_as_of(store, recipient, target, settings, AsOf::now(store))
}

/// The prompt `recipient` would start from before any message exists (docs/architecture.md §11b):
/// the system and team task sections, no history and no message section. The explain lists no
/// message and its `current` is `None`. Never an error: a page or CLI shows it for an empty
/// conversation.
pub(crate) fn build_skeleton(
    recipient: &Recipient,
    settings: &BuildSettings,
    team_task: Option<&str>,
) -> Prompt {
    let input = InputRef {
        team_task,
        system_instruction: recipient.system_instruction.as_deref(),
        instruction_file_text: recipient.instruction_file_text.as_deref(),
        extra_sections: &recipient.extra_sections,
        ..InputRef::default()
    };
    let fitted = budget::fit(
        assemble::assemble(recipient.format(), &input),
        settings.budget(),
    );
    prompt_of(recipient, settings, fitted, Vec::new(), None, 0, 0)
}

/// The prompt and its explain, from a fit and the fates gathered for it.
fn prompt_of(
    recipient: &Recipient,
    settings: &BuildSettings,
    fitted: budget::Fitted,
    messages: Vec<MessageFate>,
    current: Option<usize>,
    outside_window: usize,
    markers_stripped: usize,
) -> Prompt {
    let explain = Explain {
        recipient: recipient.id.clone(),
        format: recipient.format(),
        sections: fitted.sections,
        current,
        messages,
        outside_window,
        markers_stripped,
        truncations: fitted.truncations,
        total_bytes: fitted.total_bytes,
        max_bytes: settings.max_bytes,
        total_tokens: fitted.total_tokens,
        max_tokens: settings.max_tokens,
        status: fitted.status,
        strategy: settings.compaction,
        window: settings.window,
    };
    Prompt {
        prompt: fitted.prompt,
        system_flag: fitted.system_flag,
        explain,
    }
}

/// [`build`] over the store as it was at `as_of` (time travel; same cost).
pub(crate) fn build_as_of(
    store: &Store,
    recipient: &Recipient,
    target: &Target,
    settings: &BuildSettings,
    as_of: AsOf<'_>,
) -> Result<Prompt, BuildError> {
    let Gathered {
        input,
        mut fates,
        markers_stripped,
    } = gather_as_of(store, recipient, target, settings, as_of)?;
    let parent = input.parent.as_ref().and_then(|l| l.index);
    let current = input.current_index;
    let mut layout = assemble::assemble(recipient.format(), &input);
    let first_in_window = settings.pin_first && pin_first_window_line(&mut layout);
    let fitted = budget::fit(layout, settings.budget());
    apply_trims(&mut fates, &fitted, parent);
    if first_in_window && !fitted.trimmed.is_empty() {
        // Window lines went and the first message stayed: pin-first kept it.
        if let Some(first) = fates.first_mut().filter(|f| f.index == 0) {
            if first.fate == Fate::Included {
                first.fate = Fate::Pinned;
            }
        }
    }
    let outside_window = as_of.len - fates.len();
    Ok(prompt_of(
        recipient,
        settings,
        fitted,
        fates,
        current,
        outside_window,
        markers_stripped,
    ))
}
