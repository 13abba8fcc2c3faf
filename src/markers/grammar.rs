//! What a marker is: the names and the shape of one marker at a `[` ([`probe`]), and what
//! marker values mean (NEXT addressees with their intent, DROP lists, FROM and TEAM_TASK).

use std::collections::BTreeSet;

use memchr::memchr;

use super::{DropTargets, MarkerKind, MarkerSpan, Markers};
use crate::message::{Addressee, Intent};

/// Markers as borrowed slices while scanning: values are copied once at the end, and DROP
/// names are deduplicated through an ordered set (no hash seed: the core reads no random
/// source), so parsing stays linear however many markers a
/// message carries.
#[derive(Default)]
pub(super) struct Found<'a> {
    from: Option<&'a str>,
    team_task: Option<&'a str>,
    next: Vec<Addressee>,
    done: bool,
    drop_all: bool,
    drop_names: Vec<&'a str>,
    drop_seen: BTreeSet<&'a str>,
}

impl<'a> Found<'a> {
    pub(super) fn add(&mut self, kind: MarkerKind, value: &'a str) {
        match kind {
            MarkerKind::From => {
                if self.from.is_none() && !value.is_empty() {
                    self.from = Some(value);
                }
            }
            MarkerKind::TeamTask => self.team_task = Some(value),
            MarkerKind::Next => self.next.extend(parse_addressees(value)),
            MarkerKind::Done => self.done = true,
            MarkerKind::Drop => {
                // DROP names take NEXT's `!Pn` suffix, which means nothing here
                // (docs/architecture.md §5).
                let names = value.split(',').map(|item| split_intent(item.trim()).0);
                for name in names.filter(|s| !s.is_empty()) {
                    if name.eq_ignore_ascii_case("all") {
                        self.drop_all = true;
                    } else if !self.drop_all && self.drop_seen.insert(name) {
                        self.drop_names.push(name);
                    }
                }
            }
        }
    }

    pub(super) fn into_markers(self) -> Markers {
        let drop = if self.drop_all {
            Some(DropTargets::All)
        } else if self.drop_names.is_empty() {
            None
        } else {
            Some(DropTargets::Members(
                self.drop_names.into_iter().map(str::to_string).collect(),
            ))
        };
        Markers {
            from: self.from.map(str::to_string),
            team_task: self.team_task.map(str::to_string),
            next: self.next,
            done: self.done,
            drop,
        }
    }
}

/// The addressees of one NEXT value: comma-separated, each trimmed, an optional trailing
/// `!P1`/`!P2`/`!P3` (case-insensitive, whitespace before `!` allowed) is the intent
/// (default P2); `!` and `P` must be adjacent (`a ! P1` is the name `a ! P1`, left for the
/// resolver to report). Empty names are skipped.
pub(crate) fn parse_addressees(value: &str) -> impl Iterator<Item = Addressee> + '_ {
    value.split(',').filter_map(|item| {
        let (name, intent) = split_intent(item.trim());
        (!name.is_empty()).then(|| Addressee {
            name: name.to_string(),
            intent,
        })
    })
}

fn split_intent(item: &str) -> (&str, Intent) {
    let bytes = item.as_bytes();
    if let [.., b'!', p, digit] = bytes {
        if p.eq_ignore_ascii_case(&b'p') {
            let intent = match digit {
                b'1' => Some(Intent::P1),
                b'2' => Some(Intent::P2),
                b'3' => Some(Intent::P3),
                _ => None,
            };
            if let (Some(intent), Some(name)) = (intent, item.get(..bytes.len() - 3)) {
                return (name.trim_end(), intent);
            }
        }
    }
    (item, Intent::P2)
}

pub(super) const FENCE: &[u8] = b"```";

/// Named markers that take a value, with the bytes that follow `[`.
const VALUED: [(&[u8], MarkerKind); 4] = [
    (b"FROM:", MarkerKind::From),
    (b"TEAM_TASK:", MarkerKind::TeamTask),
    (b"NEXT:", MarkerKind::Next),
    (b"DROP:", MarkerKind::Drop),
];

pub(super) enum Probe {
    Marker(MarkerSpan),
    /// Not a marker at this `[`; scanning may continue after it.
    Text,
    /// A marker name with no `]` before the limit: no marker can follow in this region.
    Unclosed,
}

fn starts_with_ignore_case(hay: &[u8], needle: &[u8]) -> bool {
    hay.len() >= needle.len() && hay[..needle.len()].eq_ignore_ascii_case(needle)
}

/// Probes for a marker whose `[` is at `at`, never looking at or past `limit` (the line end).
pub(super) fn probe(bytes: &[u8], at: usize, limit: usize) -> Probe {
    let Some(after) = bytes.get(at + 1..limit) else {
        return Probe::Text;
    };
    if starts_with_ignore_case(after, b"DONE]") {
        return Probe::Marker(MarkerSpan {
            range: at..at + 6,
            value: at + 5..at + 5,
            kind: MarkerKind::Done,
        });
    }
    // Most `[` in text start no marker: look only at the names with that first letter.
    let first = after.first().map(u8::to_ascii_uppercase);
    for (name, kind) in VALUED {
        if name.first() == first.as_ref() && starts_with_ignore_case(after, name) {
            let value_start = at + 1 + name.len();
            let rest = bytes.get(value_start..limit).unwrap_or_default();
            return match memchr(b']', rest) {
                Some(len) => Probe::Marker(MarkerSpan {
                    range: at..value_start + len + 1,
                    value: value_start..value_start + len,
                    kind,
                }),
                None => Probe::Unclosed,
            };
        }
    }
    Probe::Text
}
