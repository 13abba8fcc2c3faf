//! The page's one keyed list: Leptos's `<For>` over `u64` keys, each row built by a boxed
//! closure. `<For>` is generic over its closures, so each use compiled its own copy of the
//! keyed diff (~7 KB of wasm each); through this component the timeline, the team editor, a
//! member's extra sections and the session library share one (docs/architecture.md §18).

use std::sync::Arc;

use leptos::prelude::*;

/// Builds the row of a key.
pub type Row = Arc<dyn Fn(u64) -> AnyView + Send + Sync>;

/// The rows of `keys`, in order. A row lives as long as its key is listed: a change of the
/// list adds, removes and moves rows, and never rebuilds one whose key stays.
#[component]
pub fn KeyedList(
    /// The keys, in the order shown (each at most once).
    #[prop(into)]
    keys: Signal<Vec<u64>>,
    /// The row of a key.
    row: Row,
) -> impl IntoView {
    view! { <For each=move || keys.get() key=|k| *k children=move |k| row(k)/> }
}
