//! "notify me" (`notify-toggle`): a browser notification when a human's turn comes or an agent
//! fails while this tab is hidden. The browser's permission is asked on this click only.

use leptos::prelude::*;

use crate::erased::handler;

#[component]
pub fn NotifyToggle(
    /// Notifications are on.
    #[prop(into)]
    on: Signal<bool>,
    /// The user turns them on (`true`, asking the browser) or off.
    on_change: Callback<bool>,
) -> impl IntoView {
    view! {
        <label class="notify-toggle" title="a browser notification when your turn comes or an agent fails while this tab is hidden">
            <input type="checkbox" data-testid="notify-toggle" prop:checked=move || on.get()
                on:change=handler(move |ev| on_change.run(event_target_checked(&ev)))/>
            "notify me"
        </label>
    }
}
