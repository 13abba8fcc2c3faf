//! Leptos's primitives with their closures boxed. `Effect::new` and an `on:…` handler are
//! generic over their closure, so each use compiled its own copy of the primitive's machinery
//! into the page's wasm; through these functions it is compiled once (once per event kind for
//! handlers; docs/architecture.md §18). Only the closures' own code stays per use.

use leptos::prelude::*;

/// An event handler boxed, for `on:…=handler(…)`: every handler of one event kind is one
/// type.
pub fn handler<E: 'static>(f: impl FnMut(E) + 'static) -> Box<dyn FnMut(E)> {
    Box::new(f)
}

/// `Effect::new` for an effect that keeps no value between runs.
pub fn effect(f: impl Fn() + 'static) {
    let f: Box<dyn Fn()> = Box::new(f);
    Effect::new(move |_| f());
}
