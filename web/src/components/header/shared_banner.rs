//! The banner over a shared case that waits for the user's decision (`shared-banner`):
//! "shared case: <team> at #n for <member> — keep / discard" (`shared-keep`,
//! `shared-discard`); see [`crate::shared_case`].

use leptos::prelude::*;

use crate::components::when::When;
use crate::erased::handler;
use crate::shared_case::Pending;

#[component]
pub fn SharedBanner(
    pending: Signal<Option<Pending>>,
    on_keep: Callback<()>,
    on_discard: Callback<()>,
) -> impl IntoView {
    view! {
        <When when=Memo::new(move |_| pending.with(Option::is_some))>
            <div class="shared-banner" role="status" data-testid="shared-banner">
                <span class="shared-text">
                    "shared case: "{move || pending.with(|p| p.as_ref().map(|p| p.label.clone()))}
                    " — keep it as a session, or discard it and go back to what was shown before"
                </span>
                <button data-testid="shared-keep" on:click=handler(move |_| on_keep.run(()))
                    title="keep the shared case as a session of its own">"keep"</button>
                <button data-testid="shared-discard" on:click=handler(move |_| on_discard.run(()))
                    title="drop the shared case and show again the session it replaced">"discard"</button>
            </div>
        </When>
    }
}
