//! A message's raw text with its markers highlighted, from the core's `markers::spans`
//! (never re-parsed here): FROM, NEXT (with its intent), TEAM_TASK, DONE, DROP.

use agent_chatter::markers::{self, MarkerKind};
use leptos::prelude::*;

/// Pieces of `text`: plain runs and markers, in order.
fn pieces(text: &str) -> Vec<(Option<MarkerKind>, String)> {
    let mut out = Vec::new();
    let mut at = 0;
    for span in markers::spans(text) {
        if span.range.start > at {
            out.push((None, text[at..span.range.start].to_string()));
        }
        out.push((Some(span.kind), text[span.range.clone()].to_string()));
        at = span.range.end;
    }
    if at < text.len() {
        out.push((None, text[at..].to_string()));
    }
    out
}

/// The CSS class of a marker kind.
fn class(kind: MarkerKind) -> &'static str {
    match kind {
        MarkerKind::From => "marker marker-from",
        MarkerKind::TeamTask => "marker marker-team-task",
        MarkerKind::Next => "marker marker-next",
        MarkerKind::Done => "marker marker-done",
        MarkerKind::Drop => "marker marker-drop",
    }
}

#[component]
pub fn MarkedText(text: String) -> impl IntoView {
    pieces(&text)
        .into_iter()
        .map(|(kind, piece)| match kind {
            None => view! { <span>{piece}</span> }.into_any(),
            Some(kind) => {
                view! { <mark class=class(kind) title=kind.name()>{piece}</mark> }.into_any()
            }
        })
        .collect_view()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_cover_the_text_and_mark_each_marker() {
        let text = "[FROM: kailai] hi [NEXT: max!P1]\n```\n[NEXT: x]\n```\n[DONE]";
        let pieces = pieces(text);
        let joined: String = pieces.iter().map(|(_, p)| p.as_str()).collect();
        assert_eq!(joined, text);
        let marked: Vec<&str> = pieces
            .iter()
            .filter(|(k, _)| k.is_some())
            .map(|(_, p)| p.as_str())
            .collect();
        assert_eq!(marked, ["[FROM: kailai]", "[NEXT: max!P1]", "[DONE]"]);
    }
}
