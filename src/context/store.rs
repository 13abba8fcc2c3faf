//! The message store: raw messages in order, the team task, the id counter
//! (docs/architecture.md §4, §19 (seed 001)).

use serde::{Deserialize, Serialize};

use crate::hash::HashMap;
use std::sync::Arc;

use crate::message::{Message, MessageId, Millis, Routing, Speaker, Text};

/// Team task cap: 5 KiB, cut at a character boundary (docs/architecture.md §19 (seed 001 D6,
/// seed 004)).
pub const MAX_TEAM_TASK_BYTES: usize = 5 * 1024;

/// What [`Store::set_team_task`] did to the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TeamTaskTruncated {
    pub from: usize,
    pub to: usize,
}

/// What every prompt shows of a stored message, computed once when it is stored: messages
/// never change, so no prompt re-strips history (docs/architecture.md §9 cost rule). One per
/// message, so kept small (40 bytes): a message is at most 1 MiB, so a range within it fits
/// in two `u32`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct View {
    /// `strip_all` of the content ([`Store::stripped`]).
    stripped: Stripped,
    /// Markers `strip_all` removed.
    markers: u32,
    /// The `to` of its history line when it names more than one addressee (their names
    /// joined by `, `); `all` and a single name are read from the message ([`View::to`]), so
    /// most messages keep no copy.
    joined_to: Option<Box<str>>,
}

/// `strip_all` of a stored message: most often a piece of its content (prose without markers
/// inside it), kept as that range with no copy; otherwise a text of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Stripped {
    Piece(u32, u32),
    Own(Box<str>),
}

impl Default for Stripped {
    fn default() -> Self {
        Stripped::Piece(0, 0)
    }
}

impl View {
    fn of(message: &Message) -> Self {
        let content = message.content.as_str();
        let (stripped, markers) = crate::markers::strip_all_counted(content);
        let piece = |range: std::ops::Range<usize>| {
            Some(Stripped::Piece(
                u32::try_from(range.start).ok()?,
                u32::try_from(range.end).ok()?,
            ))
        };
        let stripped = match stripped {
            std::borrow::Cow::Borrowed(text) => crate::text::range_within(content, text)
                .and_then(piece)
                .unwrap_or_else(|| Stripped::Own(text.into())),
            std::borrow::Cow::Owned(own) => Stripped::Own(own.into()),
        };
        View {
            stripped,
            markers: u32::try_from(markers).unwrap_or(u32::MAX),
            joined_to: (message.routing.resolved_names.len() > 1)
                .then(|| message.to_label().into()),
        }
    }

    /// Markers `strip_all` removed.
    pub(crate) fn markers(&self) -> usize {
        self.markers as usize
    }

    /// The `to` of the message's history line ([`Message::to_label`]), given the message.
    pub(crate) fn to<'a>(&'a self, message: &'a Message) -> &'a str {
        match (&self.joined_to, message.routing.resolved_names.as_slice()) {
            (Some(joined), _) => joined,
            (None, [one]) => one,
            (None, _) => "all",
        }
    }

    /// The stripped text, given the stored message's content.
    fn stripped<'a>(&'a self, content: &'a str) -> &'a str {
        match &self.stripped {
            Stripped::Piece(start, end) => content
                .get(*start as usize..*end as usize)
                .unwrap_or_default(),
            Stripped::Own(own) => own,
        }
    }
}

/// Append-only message storage with O(1) lookup by id.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Store {
    messages: Vec<Message>,
    views: Vec<View>,
    /// Positions of the messages whose id is not `msg-N` at position N-1 (an imported history
    /// may have others): the store's own ids are found by their number, with no copy of each
    /// id in a table.
    index: HashMap<MessageId, usize>,
    /// Positions of the answers to each message (`routing.parent`), oldest first, so sibling
    /// answers are found without scanning history.
    children: HashMap<MessageId, Vec<usize>>,
    /// Positions of the messages no agent's prompt shows (the notice of a run the user
    /// cancelled, [`crate::session::Failure::reaches_prompts`]), ascending.
    withheld: Vec<usize>,
    team_task: Option<String>,
    next_seq: u64,
}

impl Store {
    pub fn new() -> Self {
        Store {
            next_seq: 1,
            ..Default::default()
        }
    }

    /// Stores a message with the next `msg-N` id and returns it.
    pub fn push(
        &mut self,
        speaker: Speaker,
        content: String,
        routing: Routing,
        at: Millis,
    ) -> &Message {
        self.push_shared(Arc::new(speaker), content.into(), routing, at)
    }

    /// [`Store::push`] keeping the speaker and the text given, shared with their other holders
    /// (the team's speaker, the fact's text) rather than copied.
    pub(crate) fn push_shared(
        &mut self,
        speaker: Arc<Speaker>,
        content: Text,
        routing: Routing,
        at: Millis,
    ) -> &Message {
        let id = MessageId::from_seq(self.next_seq.max(1));
        self.next_seq = self.next_seq.max(1) + 1;
        let idx = self.messages.len();
        if !at_its_number(&id, idx) {
            self.index.insert(id.clone(), idx);
        }
        if let Some(parent) = &routing.parent {
            self.children.entry(parent.clone()).or_default().push(idx);
        }
        let message = Message {
            id,
            speaker,
            content,
            routing,
            at,
        };
        self.views.push(View::of(&message));
        self.messages.push(message);
        &self.messages[idx]
    }

    /// The prompt view of the message at `pos` (same order as [`Store::messages`]).
    pub(crate) fn view(&self, pos: usize) -> Option<&View> {
        self.views.get(pos)
    }

    /// `strip_all` of the message at `pos`: what prompts show of it.
    pub(crate) fn stripped(&self, pos: usize) -> Option<&str> {
        Some(
            self.views
                .get(pos)?
                .stripped(&self.messages.get(pos)?.content),
        )
    }

    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    pub fn len(&self) -> usize {
        self.messages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    pub fn latest(&self) -> Option<&Message> {
        self.messages.last()
    }

    /// Position of a message in the store.
    pub fn position(&self, id: &MessageId) -> Option<usize> {
        let by_number = number_position(id).filter(|&pos| {
            self.messages
                .get(pos)
                .is_some_and(|m| m.id.as_str() == id.as_str())
        });
        by_number.or_else(|| self.index.get(id).copied())
    }

    pub fn get(&self, id: &MessageId) -> Option<&Message> {
        self.position(id).map(|i| &self.messages[i])
    }

    /// Keeps the latest message out of every prompt: no window, parent or related section
    /// shows it, and windows count the messages around it as if it were not there.
    pub(crate) fn withhold_latest(&mut self) {
        if let Some(pos) = self.messages.len().checked_sub(1) {
            if self.withheld.last() != Some(&pos) {
                self.withheld.push(pos);
            }
        }
    }

    /// Whether no agent's prompt shows the message at `pos` ([`Self::withhold_latest`]).
    pub fn is_withheld(&self, pos: usize) -> bool {
        self.withheld.binary_search(&pos).is_ok()
    }

    /// Positions of the withheld messages, ascending.
    pub(crate) fn withheld(&self) -> &[usize] {
        &self.withheld
    }

    /// Positions of the stored answers to `parent`, oldest first.
    pub(crate) fn children(&self, parent: &MessageId) -> &[usize] {
        self.children.get(parent).map_or(&[], Vec::as_slice)
    }

    pub fn team_task(&self) -> Option<&str> {
        self.team_task.as_deref()
    }

    /// Sets (or with `None`/empty, clears) the team task, capped at [`MAX_TEAM_TASK_BYTES`].
    pub fn set_team_task(&mut self, task: Option<&str>) -> Option<TeamTaskTruncated> {
        let task = task.filter(|t| !t.is_empty());
        let Some(task) = task else {
            self.team_task = None;
            return None;
        };
        let cut = crate::text::floor_char_boundary(task, MAX_TEAM_TASK_BYTES);
        self.team_task = Some(task[..cut].to_string());
        (cut < task.len()).then_some(TeamTaskTruncated {
            from: task.len(),
            to: cut,
        })
    }

    /// Empties the store and restarts ids at `msg-1`.
    pub(crate) fn clear(&mut self) {
        *self = Store::new();
    }

    /// Replaces everything with already-validated messages; the id counter continues from the
    /// highest numeric id.
    pub(crate) fn replace(&mut self, messages: Vec<Message>, team_task: Option<String>) {
        let next_seq = messages
            .iter()
            .filter_map(|m| m.id.seq())
            .max()
            .unwrap_or(0)
            + 1;
        let index = messages
            .iter()
            .enumerate()
            .filter(|(i, m)| !at_its_number(&m.id, *i))
            .map(|(i, m)| (m.id.clone(), i))
            .collect();
        let mut children: HashMap<MessageId, Vec<usize>> = HashMap::default();
        for (i, m) in messages.iter().enumerate() {
            if let Some(parent) = &m.routing.parent {
                children.entry(parent.clone()).or_default().push(i);
            }
        }
        let views = messages.iter().map(View::of).collect();
        *self = Store {
            messages,
            views,
            index,
            children,
            withheld: Vec::new(),
            team_task,
            next_seq,
        };
    }
}

/// The position a `msg-N` id has when the store numbers messages itself: N-1.
fn number_position(id: &MessageId) -> Option<usize> {
    usize::try_from(id.seq()?).ok()?.checked_sub(1)
}

/// Whether the message at `pos` with `id` is found by its number, without the index.
fn at_its_number(id: &MessageId, pos: usize) -> bool {
    number_position(id) == Some(pos)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::SpeakerKind;

    fn message(id: &str) -> Message {
        Message {
            id: MessageId(id.to_string()),
            speaker: Arc::new(Speaker {
                id: "kailai".into(),
                name: "kailai".into(),
                display_name: "Kailai".into(),
                kind: SpeakerKind::Human,
            }),
            content: format!("{id} says hi").into(),
            routing: Routing::default(),
            at: Millis(0),
        }
    }

    #[test]
    fn every_message_is_found_by_its_id_whether_or_not_it_is_msg_n_at_position_n_minus_1() {
        let mut store = Store::new();
        // An imported history: ids out of the store's own numbering, one of them `msg-1`
        // at position 1 and one `msg-01` (number 1, but not the store's spelling of it).
        let ids = ["msg-3", "msg-1", "a", "msg-01", "msg-5"];
        store.replace(ids.iter().map(|id| message(id)).collect(), None);
        let speaker = Speaker::clone(&message("x").speaker);
        store.push(
            speaker.clone(),
            "next".into(),
            Routing::default(),
            Millis(1),
        );
        store.push(speaker, "and next".into(), Routing::default(), Millis(2));
        for (pos, m) in store.messages().iter().enumerate() {
            assert_eq!(store.position(&m.id), Some(pos), "{}", m.id);
        }
        assert_eq!(store.messages()[5].id.as_str(), "msg-6");
        assert_eq!(store.position(&MessageId("msg-2".into())), None);
        assert_eq!(store.position(&MessageId("msg-8".into())), None);
    }
}
