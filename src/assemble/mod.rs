//! Per-agent prompt formats (docs/architecture.md §8), built as data and rendered once.
//!
//! An assembler turns an input (already windowed, stripped and deduplicated) into a
//! `Layout`: named sections with a header and a body whose pieces borrow from the input.
//! The budget (`crate::budget`) trims the layout by byte counts and renders it exactly
//! once, so nothing is ever re-parsed out of rendered text (the peer's regex re-parsing loses
//! paragraphs, docs/architecture.md §16) and no history line is copied before it is written out.
//!
//! Sections are joined by one blank line; a section whose body is empty after trimming is not
//! emitted at all. Order: system, team task, extra sections, context, parent, related, message.

mod claude;
mod codex;
mod gemini;
mod plain;

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::message::MemberId;
use crate::team::{ExtraSection, PromptFormat};

/// The name of the `[MESSAGE]` section in the explain (every format).
pub(crate) const MESSAGE_SECTION: &str = "message";

/// One history line as the agent sees it: `from`, `to` and stripped content.
///
/// Shaped like the peer's `PromptContextMessage` (`{from, to, content}`), plus the position of
/// the message it shows (for the explain).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[cfg_attr(feature = "ts", ts(rename = "PromptContextMessage"))]
pub struct ContextLine {
    pub from: String,
    /// Resolved addressees' names joined by `, `, or `all` (also when absent or `null`, as
    /// the peer prints it).
    #[serde(default = "all", deserialize_with = "to_or_all")]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub to: String,
    pub content: String,
    /// Position of the message in the conversation (0-based), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub index: Option<usize>,
}

fn all() -> String {
    "all".to_string()
}

/// A line's `to`: a string, or `null` for everyone.
fn to_or_all<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_else(all))
}

/// The `[MESSAGE]` body: a string, or `null` for none (the peer then leaves the section out,
/// as an empty body is).
fn message_or_none<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_default())
}

impl ContextLine {
    fn as_ref(&self) -> LineRef<'_> {
        LineRef {
            from: &self.from,
            to: &self.to,
            content: Cow::Borrowed(&self.content),
            index: self.index,
        }
    }
}

/// Everything an assembler needs (docs/architecture.md §19 (seed 001) `AssemblerInput`, plus route
/// context, extra sections and the pin-first marker). The owned form, for the `ContextManager` API.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AssemblerInput {
    /// History lines, oldest first (already stripped and deduplicated).
    #[serde(deserialize_with = "crate::objects::objects")]
    pub context_messages: Vec<ContextLine>,
    /// The `[MESSAGE]` body, stripped of every marker.
    #[serde(deserialize_with = "message_or_none")]
    pub current_message: String,
    /// Position of the current message in the conversation, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub current_index: Option<usize>,
    pub team_task: Option<String>,
    /// Read from a string or, as the peer's `AssemblerInput` allows, an array of lines
    /// (joined as a member's instruction lines are, docs/architecture.md §4).
    #[serde(
        skip_serializing_if = "Option::is_none",
        deserialize_with = "instruction_lines"
    )]
    #[cfg_attr(feature = "ts", ts(type = "string | string[]", optional))]
    pub system_instruction: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub instruction_file_text: Option<String>,
    /// Budget in UTF-8 bytes, greater than 0; absent (0) uses the manager's.
    pub max_bytes: usize,
    /// Pin-first policy (docs/architecture.md §19 (seed 002)): the pinned first message, shown
    /// before the window.
    #[serde(
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::objects::optional_object"
    )]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub pinned: Option<ContextLine>,
    /// Messages skipped between the pinned one and the window (`[N earlier messages omitted]`).
    #[serde(skip_serializing_if = "is_zero")]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub omitted: usize,
    /// `[PARENT_CONTEXT]`: the routed parent, when it is not the message and fell out of the
    /// window. Read as `parentContext` too, the peer's name for it.
    #[serde(
        alias = "parentContext",
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::objects::optional_object"
    )]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub parent: Option<ContextLine>,
    /// `[RELATED_CONTEXT]`: sibling answers to the same parent, newest first.
    /// Read as `siblingContext` too, the peer's name for it.
    #[serde(
        alias = "siblingContext",
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "crate::objects::objects"
    )]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub related: Vec<ContextLine>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(as = "Option<_>", optional))]
    pub extra_sections: Vec<ExtraSection>,
    /// The recipient, for the explain.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub agent_id: Option<MemberId>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// `systemInstruction` as a string, an array of lines, or null. A visitor rather than an
/// untagged enum: errors then name the line (`systemInstruction[1]`) and the wasm build stays
/// small.
fn instruction_lines<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    struct Lines;
    impl<'de> serde::de::Visitor<'de> for Lines {
        type Value = Option<String>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a string or an array of strings")
        }

        fn visit_none<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_some<D2: serde::Deserializer<'de>>(self, d: D2) -> Result<Self::Value, D2::Error> {
            d.deserialize_any(self)
        }

        fn visit_str<E>(self, text: &str) -> Result<Self::Value, E> {
            Ok(Some(text.to_owned()))
        }

        fn visit_string<E>(self, text: String) -> Result<Self::Value, E> {
            Ok(Some(text))
        }

        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Self::Value, A::Error> {
            let mut lines = Vec::new();
            while let Some(line) = seq.next_element::<String>()? {
                lines.push(line);
            }
            Ok(crate::team::join_instruction_lines(
                lines.iter().map(String::as_str),
            ))
        }
    }
    d.deserialize_option(Lines)
}

impl AssemblerInput {
    /// The borrowed form the assemblers work on.
    pub(crate) fn as_ref(&self) -> InputRef<'_> {
        InputRef {
            context: self
                .context_messages
                .iter()
                .map(ContextLine::as_ref)
                .collect(),
            current: &self.current_message,
            current_index: self.current_index,
            team_task: self.team_task.as_deref(),
            system_instruction: self.system_instruction.as_deref(),
            instruction_file_text: self.instruction_file_text.as_deref(),
            pinned: self.pinned.as_ref().map(ContextLine::as_ref),
            omitted: self.omitted,
            parent: self.parent.as_ref().map(ContextLine::as_ref),
            related: self.related.iter().map(ContextLine::as_ref).collect(),
            extra_sections: &self.extra_sections,
        }
    }
}

/// A history line borrowed from the store (or an owned input).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LineRef<'a> {
    pub from: &'a str,
    pub to: &'a str,
    pub content: Cow<'a, str>,
    pub index: Option<usize>,
}

impl LineRef<'_> {
    pub(crate) fn to_owned_line(&self) -> ContextLine {
        ContextLine {
            from: self.from.to_string(),
            to: self.to.to_string(),
            content: self.content.to_string(),
            index: self.index,
        }
    }
}

/// The borrowed input of one prompt: what [`assemble`] lays out.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct InputRef<'a> {
    pub context: Vec<LineRef<'a>>,
    pub current: &'a str,
    pub current_index: Option<usize>,
    pub team_task: Option<&'a str>,
    pub system_instruction: Option<&'a str>,
    pub instruction_file_text: Option<&'a str>,
    pub pinned: Option<LineRef<'a>>,
    pub omitted: usize,
    pub parent: Option<LineRef<'a>>,
    pub related: Vec<LineRef<'a>>,
    pub extra_sections: &'a [ExtraSection],
}

/// What a section is, which decides how the budget may trim it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Role {
    System,
    TeamTask,
    Extra { compactable: bool, priority: i32 },
    Context,
    Parent,
    Related,
    Message,
}

/// The text of one line: a history line in some style, or literal text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LineText<'a> {
    Styled {
        style: LineStyle,
        from: &'a str,
        to: &'a str,
        content: Cow<'a, str>,
    },
    Raw(Cow<'a, str>),
}

/// One history line, its byte length (cached), and the message it shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Line<'a> {
    pub text: LineText<'a>,
    pub len: usize,
    /// Position of the message shown (`None` for the omitted marker).
    pub index: Option<usize>,
    /// The pin-first line or its omitted marker: trimmed after every window line.
    pub pinned: bool,
}

impl<'a> Line<'a> {
    fn styled(style: LineStyle, line: &LineRef<'a>, pinned: bool) -> Self {
        let text = LineText::Styled {
            style,
            from: line.from,
            to: line.to,
            content: line.content.clone(),
        };
        let len = text_len(&text);
        Line {
            text,
            len,
            index: line.index,
            pinned,
        }
    }

    /// The pin-first `[N earlier messages omitted]` line.
    pub(crate) fn omitted_marker(n: usize) -> Self {
        Line::raw(omitted_line(n), None, true)
    }

    fn raw(text: String, index: Option<usize>, pinned: bool) -> Self {
        let len = text.len();
        Line {
            text: LineText::Raw(Cow::Owned(text)),
            len,
            index,
            pinned,
        }
    }

    pub(crate) fn write_to(&self, out: &mut String) {
        match &self.text {
            LineText::Styled {
                style,
                from,
                to,
                content,
            } => style.write(out, from, to, content),
            LineText::Raw(text) => out.push_str(text),
        }
    }

    pub(crate) fn render(&self) -> String {
        let mut s = String::with_capacity(self.len);
        self.write_to(&mut s);
        s
    }
}

fn text_len(text: &LineText<'_>) -> usize {
    match text {
        LineText::Styled {
            style,
            from,
            to,
            content,
        } => style.len(from, to, content),
        LineText::Raw(text) => text.len(),
    }
}

/// A section body: free text, or lines joined by `\n` (with their total length cached).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Body<'a> {
    Text(Cow<'a, str>),
    Lines { lines: Vec<Line<'a>>, len: usize },
}

impl<'a> Body<'a> {
    pub(crate) fn lines(lines: Vec<Line<'a>>) -> Self {
        let len = lines.iter().map(|l| l.len).sum::<usize>() + lines.len().saturating_sub(1);
        Body::Lines { lines, len }
    }

    /// Bytes of the body as rendered.
    pub(crate) fn len(&self) -> usize {
        match self {
            Body::Text(t) => t.len(),
            Body::Lines { len, .. } => *len,
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        match self {
            Body::Text(t) => t.is_empty(),
            Body::Lines { lines, .. } => lines.is_empty(),
        }
    }

    fn write_to(&self, out: &mut String) {
        match self {
            Body::Text(t) => out.push_str(t),
            Body::Lines { lines, .. } => {
                for (i, l) in lines.iter().enumerate() {
                    if i > 0 {
                        out.push('\n');
                    }
                    l.write_to(out);
                }
            }
        }
    }
}

/// A named section: header (may be empty, may span lines) and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Section<'a> {
    /// Explain name: `system`, `teamTask`, `context`, `parent`, `related`, `message`, or an
    /// extra section's own name.
    pub name: Cow<'a, str>,
    pub header: Cow<'a, str>,
    pub body: Body<'a>,
    pub role: Role,
}

impl<'a> Section<'a> {
    fn text(name: &'static str, header: &'static str, body: Cow<'a, str>, role: Role) -> Self {
        Section {
            name: Cow::Borrowed(name),
            header: Cow::Borrowed(header),
            body: Body::Text(body),
            role,
        }
    }

    fn lines(name: &'static str, header: &'static str, lines: Vec<Line<'a>>, role: Role) -> Self {
        Section {
            name: Cow::Borrowed(name),
            header: Cow::Borrowed(header),
            body: Body::lines(lines),
            role,
        }
    }

    /// Bytes this section occupies when emitted (0 when its body is empty: not emitted).
    pub(crate) fn len(&self) -> usize {
        if self.body.is_empty() {
            0
        } else if self.header.is_empty() {
            self.body.len()
        } else {
            self.header.len() + 1 + self.body.len()
        }
    }

    pub(crate) fn is_emitted(&self) -> bool {
        !self.body.is_empty()
    }

    /// Appends the section (header, newline, body) to `out`.
    pub(crate) fn write_to(&self, out: &mut String) {
        if !self.header.is_empty() {
            out.push_str(&self.header);
            out.push('\n');
        }
        self.body.write_to(out);
    }

    pub(crate) fn render(&self) -> String {
        let mut s = String::with_capacity(self.len());
        self.write_to(&mut s);
        s
    }
}

/// The sections of one prompt, plus the Claude system part that travels as a flag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layout<'a> {
    pub format: PromptFormat,
    /// Sections of the prompt, in order.
    pub sections: Vec<Section<'a>>,
    /// Claude only: the system body, passed as `--append-system-prompt` (no header).
    pub system_flag: Option<Section<'a>>,
    /// Pin-first: how many messages lie between the pinned one and the first history line
    /// shown (the count its `[N earlier messages omitted]` line states; 0 = no such line).
    pub omitted: usize,
}

impl Layout<'_> {
    /// `prompt.len()`: emitted sections plus `\n\n` between them.
    pub(crate) fn prompt_len(&self) -> usize {
        let (n, bytes) = self
            .sections
            .iter()
            .filter(|s| s.is_emitted())
            .fold((0usize, 0usize), |(n, b), s| (n + 1, b + s.len()));
        bytes + 2 * n.saturating_sub(1)
    }

    pub(crate) fn flag_len(&self) -> usize {
        self.system_flag.as_ref().map_or(0, Section::len)
    }

    /// `prompt.len() + system_flag.len()`, the quantity the budget bounds.
    pub(crate) fn total_len(&self) -> usize {
        self.prompt_len() + self.flag_len()
    }

    /// Renders the prompt once, with exact capacity.
    pub(crate) fn render_prompt(&self) -> String {
        let mut out = String::with_capacity(self.prompt_len());
        for s in self.sections.iter().filter(|s| s.is_emitted()) {
            if !out.is_empty() {
                out.push_str("\n\n");
            }
            s.write_to(&mut out);
        }
        out
    }

    /// The flag text, `None` when there is no (non-empty) system part.
    pub(crate) fn render_flag(&self) -> Option<String> {
        self.system_flag
            .as_ref()
            .filter(|s| s.is_emitted())
            .map(Section::render)
    }
}

/// How one format spells its sections (docs/architecture.md §8 table).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Spelling {
    /// `None`: the system part goes into the flag (Claude).
    pub system: Option<&'static str>,
    pub team_task: &'static str,
    pub context: &'static str,
    pub line: LineStyle,
    /// `None`: not shown in this format.
    pub parent: Option<&'static str>,
    pub related: Option<&'static str>,
    pub message: &'static str,
    pub extra: ExtraHeader,
}

/// How a history line is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineStyle {
    /// `- {from} -> {to}: {content}`
    FromTo,
    /// `- {from}: {content}`
    DashFrom,
    /// `{from}: {content}`
    From,
}

impl LineStyle {
    /// Bytes of a line in this style, without writing it.
    pub(crate) fn len(self, from: &str, to: &str, content: &str) -> usize {
        match self {
            LineStyle::FromTo => 2 + from.len() + 4 + to.len() + 2 + content.len(),
            LineStyle::DashFrom => 2 + from.len() + 2 + content.len(),
            LineStyle::From => from.len() + 2 + content.len(),
        }
    }

    /// Writes one history line; multi-line content continues unindented.
    pub(crate) fn write(self, out: &mut String, from: &str, to: &str, content: &str) {
        match self {
            LineStyle::FromTo => {
                out.push_str("- ");
                out.push_str(from);
                out.push_str(" -> ");
                out.push_str(to);
            }
            LineStyle::DashFrom => {
                out.push_str("- ");
                out.push_str(from);
            }
            LineStyle::From => out.push_str(from),
        }
        out.push_str(": ");
        out.push_str(content);
    }
}

/// How an extra section's header is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ExtraHeader {
    /// `[PLAN]`: the name upper-cased, spaces as `_`.
    Bracket,
    /// `Plan:`
    Colon,
    /// No header.
    None,
}

/// The `[N earlier messages omitted]` line of the pin-first policy (`message` when N is 1).
pub(crate) fn omitted_line(n: usize) -> String {
    let noun = if n == 1 { "message" } else { "messages" };
    format!("[{n} earlier {noun} omitted]")
}

/// System body: instruction and instruction file text, each trimmed, empty ones dropped,
/// joined by a blank line (docs/architecture.md §19 (seed 000 §6.4)).
pub(crate) fn system_body<'a>(
    system_instruction: Option<&'a str>,
    instruction_file_text: Option<&'a str>,
) -> Cow<'a, str> {
    let parts = [system_instruction, instruction_file_text]
        .into_iter()
        .flatten()
        .map(str::trim)
        .filter(|s| !s.is_empty());
    let mut out: Cow<'a, str> = Cow::Borrowed("");
    for part in parts {
        if out.is_empty() {
            out = Cow::Borrowed(part);
        } else {
            let owned = out.to_mut();
            owned.push_str("\n\n");
            owned.push_str(part);
        }
    }
    out
}

/// The spelling of a format.
pub(crate) fn spelling(format: PromptFormat) -> Spelling {
    match format {
        PromptFormat::Claude => claude::SPELLING,
        PromptFormat::Codex => codex::SPELLING,
        PromptFormat::Gemini => gemini::SPELLING,
        PromptFormat::Plain => plain::SPELLING,
    }
}

/// Builds the layout of `input` in `format`. Cost: O(lines); no text is copied.
pub(crate) fn assemble<'a>(format: PromptFormat, input: &InputRef<'a>) -> Layout<'a> {
    let sp = spelling(format);
    let mut sections = Vec::with_capacity(7 + input.extra_sections.len());

    let system = system_body(input.system_instruction, input.instruction_file_text);
    let system_flag = match sp.system {
        Some(header) => {
            sections.push(Section::text("system", header, system, Role::System));
            None
        }
        None => Some(Section::text("system", "", system, Role::System)),
    };

    let task = input.team_task.map(str::trim).unwrap_or_default();
    sections.push(Section::text(
        "teamTask",
        sp.team_task,
        Cow::Borrowed(task),
        Role::TeamTask,
    ));

    for extra in input.extra_sections {
        let header = match sp.extra {
            ExtraHeader::Bracket => {
                format!("[{}]", extra.name.trim().to_uppercase().replace(' ', "_"))
            }
            ExtraHeader::Colon => format!("{}:", extra.name.trim()),
            ExtraHeader::None => String::new(),
        };
        sections.push(Section {
            name: Cow::Borrowed(&extra.name),
            header: Cow::Owned(header),
            body: Body::Text(Cow::Borrowed(extra.content.trim())),
            role: Role::Extra {
                compactable: extra.compactable,
                priority: extra.priority,
            },
        });
    }

    let mut lines = Vec::with_capacity(input.context.len() + 2);
    if let Some(pinned) = &input.pinned {
        lines.push(Line::styled(sp.line, pinned, true));
        if input.omitted > 0 {
            lines.push(Line::omitted_marker(input.omitted));
        }
    }
    lines.extend(
        input
            .context
            .iter()
            .map(|l| Line::styled(sp.line, l, false)),
    );
    sections.push(Section::lines("context", sp.context, lines, Role::Context));

    // Parent and related lines are always `- from: content` (docs/architecture.md §8).
    if let (Some(header), Some(parent)) = (sp.parent, &input.parent) {
        let line = Line::styled(LineStyle::DashFrom, parent, false);
        sections.push(Section::lines("parent", header, vec![line], Role::Parent));
    }
    if let Some(header) = sp.related.filter(|_| !input.related.is_empty()) {
        let lines = input
            .related
            .iter()
            .map(|l| Line::styled(LineStyle::DashFrom, l, false))
            .collect();
        sections.push(Section::lines("related", header, lines, Role::Related));
    }

    sections.push(Section::text(
        MESSAGE_SECTION,
        sp.message,
        Cow::Borrowed(input.current.trim()),
        Role::Message,
    ));

    Layout {
        format,
        sections,
        system_flag,
        omitted: if input.pinned.is_some() {
            input.omitted
        } else {
            0
        },
    }
}
