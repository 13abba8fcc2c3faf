//! The last error, in the user's terms, until dismissed (`error-banner`).

use leptos::prelude::*;

use crate::components::when::When;
use crate::erased::handler;
use crate::state::use_state;

#[component]
pub fn ErrorBanner() -> impl IntoView {
    let state = use_state();
    view! {
        <When when=Memo::new(move |_| state.error.with(Option::is_some))>
            <div class="error-banner" role="alert" data-testid="error-banner">
                <span class="error-text">{move || state.error.get().unwrap_or_default()}</span>
                <button class="dismiss" on:click=handler(move |_| state.error.set(None))>"dismiss"</button>
            </div>
        </When>
    }
}
