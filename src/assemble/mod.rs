//! Per-agent prompt formats (DESIGN §8), built as data and rendered once.
//!
//! An assembler turns an [`AssemblerInput`] (already windowed, stripped and deduplicated) into
//! a [`Layout`]: named sections with a header and a body. The budget ([`crate::budget`]) trims
//! the layout arithmetically and renders it exactly once, so nothing is ever re-parsed out of
//! rendered text (the peer's regex re-parsing loses paragraphs, DESIGN §16).
//!
//! Sections are joined by one blank line; a section whose body is empty after trimming is not
//! emitted at all. Order: system, team task, extra sections, context, parent, related, message.

pub mod claude;
pub mod codex;
pub mod gemini;
pub mod plain;

use serde::{Deserialize, Serialize};

use crate::context::ExtraSection;
use crate::message::{MemberId, MessageId};
use crate::team::PromptFormat;

/// One history line as the agent sees it: `from`, `to` and stripped content.
///
/// Shaped like the peer's `PromptContextMessage` (`{from, to, content}`) plus the id of the
/// message it shows, which the explain uses.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextLine {
    pub from: String,
    /// Resolved addressees' names joined by `, `, or `all`.
    #[serde(default = "all")]
    pub to: String,
    pub content: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<MessageId>,
}

fn all() -> String {
    "all".to_string()
}

/// Everything an assembler needs (seed 001 `AssemblerInput`, plus route context, extra
/// sections and the pin-first marker).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AssemblerInput {
    /// History lines, oldest first (already stripped and deduplicated).
    pub context_messages: Vec<ContextLine>,
    /// The `[MESSAGE]` body, stripped of every marker.
    pub current_message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_message_id: Option<MessageId>,
    pub team_task: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_instruction: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instruction_file_text: Option<String>,
    pub max_bytes: usize,
    /// Pin-first policy (seed 002): the pinned first message, shown before the window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pinned: Option<ContextLine>,
    /// Messages skipped between the pinned one and the window (`[N earlier messages omitted]`).
    #[serde(skip_serializing_if = "is_zero")]
    pub omitted: usize,
    /// `[PARENT_CONTEXT]`: the routed parent, when it is not the message and fell out of the
    /// window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<ContextLine>,
    /// `[RELATED_CONTEXT]`: sibling answers to the same parent, newest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub related: Vec<ContextLine>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub extra_sections: Vec<ExtraSection>,
    /// The recipient, for the explain.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<MemberId>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// What a section is, which decides how the budget may trim it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    System,
    TeamTask,
    Extra { compactable: bool, priority: i32 },
    Context,
    Parent,
    Related,
    Message,
}

/// One rendered history line and the message it shows (`None` for the omitted marker).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub text: String,
    pub message: Option<MessageId>,
    /// The pin-first line or its omitted marker: trimmed after every window line.
    pub pinned: bool,
}

/// A section body: free text, or lines joined by `\n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    Text(String),
    Lines(Vec<Line>),
}

impl Body {
    /// Bytes of the body as rendered.
    pub fn len(&self) -> usize {
        match self {
            Body::Text(t) => t.len(),
            Body::Lines(lines) => {
                lines.iter().map(|l| l.text.len()).sum::<usize>() + lines.len().saturating_sub(1)
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        match self {
            Body::Text(t) => t.is_empty(),
            Body::Lines(lines) => lines.is_empty(),
        }
    }

    fn write_to(&self, out: &mut String) {
        match self {
            Body::Text(t) => out.push_str(t),
            Body::Lines(lines) => {
                for (i, l) in lines.iter().enumerate() {
                    if i > 0 {
                        out.push('\n');
                    }
                    out.push_str(&l.text);
                }
            }
        }
    }
}

/// A named section: header (may be empty, may span lines) and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// Explain name: `system`, `teamTask`, `context`, `parent`, `related`, `message`, or an
    /// extra section's own name.
    pub name: String,
    pub header: String,
    pub body: Body,
    pub role: Role,
}

impl Section {
    fn text(name: &str, header: &str, body: String, role: Role) -> Self {
        Section {
            name: name.to_string(),
            header: header.to_string(),
            body: Body::Text(body),
            role,
        }
    }

    /// Bytes this section occupies when emitted (0 when its body is empty: not emitted).
    pub fn len(&self) -> usize {
        if self.body.is_empty() {
            0
        } else if self.header.is_empty() {
            self.body.len()
        } else {
            self.header.len() + 1 + self.body.len()
        }
    }

    pub fn is_emitted(&self) -> bool {
        !self.body.is_empty()
    }

    /// True when the section is not emitted (its body is empty).
    pub fn is_empty(&self) -> bool {
        self.body.is_empty()
    }

    /// Appends the section (header, newline, body) to `out`.
    pub fn write_to(&self, out: &mut String) {
        if !self.header.is_empty() {
            out.push_str(&self.header);
            out.push('\n');
        }
        self.body.write_to(out);
    }

    pub fn render(&self) -> String {
        let mut s = String::with_capacity(self.len());
        self.write_to(&mut s);
        s
    }
}

/// The sections of one prompt, plus the Claude system part that travels as a flag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub format: PromptFormat,
    /// Sections of the prompt, in order.
    pub sections: Vec<Section>,
    /// Claude only: the system body, passed as `--append-system-prompt` (no header).
    pub system_flag: Option<Section>,
}

impl Layout {
    /// `prompt.len()`: emitted sections plus `\n\n` between them.
    pub fn prompt_len(&self) -> usize {
        let (n, bytes) = self
            .sections
            .iter()
            .filter(|s| s.is_emitted())
            .fold((0usize, 0usize), |(n, b), s| (n + 1, b + s.len()));
        bytes + 2 * n.saturating_sub(1)
    }

    pub fn flag_len(&self) -> usize {
        self.system_flag.as_ref().map_or(0, Section::len)
    }

    /// `prompt.len() + system_flag.len()`, the quantity the budget bounds.
    pub fn total_len(&self) -> usize {
        self.prompt_len() + self.flag_len()
    }

    /// Renders the prompt once, with exact capacity.
    pub fn render_prompt(&self) -> String {
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
    pub fn render_flag(&self) -> Option<String> {
        self.system_flag
            .as_ref()
            .filter(|s| s.is_emitted())
            .map(Section::render)
    }
}

/// How one format spells its sections (DESIGN §8 table).
#[derive(Debug, Clone, Copy)]
pub struct Spelling {
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
pub enum LineStyle {
    /// `- {from} -> {to}: {content}`
    FromTo,
    /// `- {from}: {content}`
    DashFrom,
    /// `{from}: {content}`
    From,
}

/// How an extra section's header is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtraHeader {
    /// `[PLAN]`: the name upper-cased, spaces as `_`.
    Bracket,
    /// `Plan:`
    Colon,
    /// No header.
    None,
}

impl LineStyle {
    /// Writes one history line; multi-line content continues unindented.
    pub fn write(self, line: &ContextLine) -> String {
        match self {
            LineStyle::FromTo => format!("- {} -> {}: {}", line.from, line.to, line.content),
            LineStyle::DashFrom => format!("- {}: {}", line.from, line.content),
            LineStyle::From => format!("{}: {}", line.from, line.content),
        }
    }
}

/// Parent/related lines always use `- from: content` (DESIGN §8).
fn route_line(line: &ContextLine) -> Line {
    Line {
        text: LineStyle::DashFrom.write(line),
        message: line.message_id.clone(),
        pinned: false,
    }
}

/// The `[N earlier messages omitted]` line of the pin-first policy.
pub fn omitted_line(n: usize) -> String {
    format!("[{n} earlier messages omitted]")
}

/// System body: instruction and instruction file text, each trimmed, empty ones dropped,
/// joined by a blank line (seed 000 §6.4).
pub fn system_body(
    system_instruction: Option<&str>,
    instruction_file_text: Option<&str>,
) -> String {
    [system_instruction, instruction_file_text]
        .into_iter()
        .flatten()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The spelling of a format.
pub fn spelling(format: PromptFormat) -> Spelling {
    match format {
        PromptFormat::Claude => claude::SPELLING,
        PromptFormat::Codex => codex::SPELLING,
        PromptFormat::Gemini => gemini::SPELLING,
        PromptFormat::Plain => plain::SPELLING,
    }
}

/// Builds the layout of `input` in `format`. Cost: O(bytes of the input).
pub fn assemble(format: PromptFormat, input: &AssemblerInput) -> Layout {
    let sp = spelling(format);
    let mut sections = Vec::with_capacity(7 + input.extra_sections.len());

    let system = system_body(
        input.system_instruction.as_deref(),
        input.instruction_file_text.as_deref(),
    );
    let system_flag = match sp.system {
        Some(header) => {
            sections.push(Section::text("system", header, system, Role::System));
            None
        }
        None => Some(Section::text("system", "", system, Role::System)),
    };

    let task = input
        .team_task
        .as_deref()
        .map(str::trim)
        .unwrap_or_default()
        .to_string();
    sections.push(Section::text(
        "teamTask",
        sp.team_task,
        task,
        Role::TeamTask,
    ));

    for extra in &input.extra_sections {
        let header = match sp.extra {
            ExtraHeader::Bracket => {
                format!("[{}]", extra.name.trim().to_uppercase().replace(' ', "_"))
            }
            ExtraHeader::Colon => format!("{}:", extra.name.trim()),
            ExtraHeader::None => String::new(),
        };
        sections.push(Section {
            name: extra.name.clone(),
            header,
            body: Body::Text(extra.content.trim().to_string()),
            role: Role::Extra {
                compactable: extra.compactable,
                priority: extra.priority,
            },
        });
    }

    let mut lines = Vec::with_capacity(input.context_messages.len() + 2);
    if let Some(pinned) = &input.pinned {
        lines.push(Line {
            text: sp.line.write(pinned),
            message: pinned.message_id.clone(),
            pinned: true,
        });
        if input.omitted > 0 {
            lines.push(Line {
                text: omitted_line(input.omitted),
                message: None,
                pinned: true,
            });
        }
    }
    lines.extend(input.context_messages.iter().map(|l| Line {
        text: sp.line.write(l),
        message: l.message_id.clone(),
        pinned: false,
    }));
    sections.push(Section {
        name: "context".into(),
        header: sp.context.into(),
        body: Body::Lines(lines),
        role: Role::Context,
    });

    if let (Some(header), Some(parent)) = (sp.parent, &input.parent) {
        sections.push(Section {
            name: "parent".into(),
            header: header.into(),
            body: Body::Lines(vec![route_line(parent)]),
            role: Role::Parent,
        });
    }
    if let Some(header) = sp.related.filter(|_| !input.related.is_empty()) {
        sections.push(Section {
            name: "related".into(),
            header: header.into(),
            body: Body::Lines(input.related.iter().map(route_line).collect()),
            role: Role::Related,
        });
    }

    sections.push(Section::text(
        "message",
        sp.message,
        input.current_message.trim().to_string(),
        Role::Message,
    ));

    Layout {
        format,
        sections,
        system_flag,
    }
}
