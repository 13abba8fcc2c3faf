//! `<When>`: the children while a condition holds, else the fallback. Leptos's `<Show>` is
//! generic over its children's type, so each of its uses compiled its own copy (~0.9 KB of
//! wasm each); this one takes its children boxed (`ChildrenFn`) and is compiled once
//! (docs/architecture.md §18).

use leptos::prelude::*;

/// The children while `when` is true, else `fallback` (nothing by default). As `<Show>`:
/// the children are built when `when` turns true and dropped when it turns false, not with
/// every change of what `when` reads.
#[component]
pub fn When(
    /// Whether the children are shown (a memo: only a change of the answer rebuilds them).
    when: Memo<bool>,
    /// What is shown while `when` holds.
    children: ChildrenFn,
    /// What is shown instead.
    #[prop(optional, into)]
    fallback: ViewFn,
) -> impl IntoView {
    move || {
        if when.get() {
            children()
        } else {
            fallback.run()
        }
    }
}
