//! The session library (docs/architecture.md §13): the quick switch in the header
//! (`session-select`) and the library it opens (`session-library`): every session with its
//! name (`session-name`, editable in place), when it was made and last changed, its first
//! message and fact count; a search across every session's messages (`session-search`,
//! `search-hit`); a new session (`library-new`). The sessions are the bridge's, or this
//! browser's without one; the host does every act.

use std::sync::Arc;

use agent_chatter::markers;
use leptos::prelude::*;

use crate::components::keyed_list::KeyedList;
use crate::components::when::When;
use crate::erased::handler;
use crate::host::{use_host, Host};
use crate::library::{query_too_long, snippet_text, team_beside, title, when, Entry, Hit};
use crate::state::{use_state, AppState};

/// How long typing must pause before the search runs: one search for what was typed, not
/// one per key.
const SEARCH_DELAY: std::time::Duration = std::time::Duration::from_millis(250);

/// What the search box takes: the bridge's limits (`library::check_search_query`), written
/// out so the page formats nothing for it.
const SEARCH_TITLE: &str = "a few words: at most 16 words and 200 characters";

/// The user's time zone, in minutes east of UTC.
fn local_offset() -> i64 {
    -(js_sys::Date::new_0().get_timezone_offset() as i64)
}

fn plural(n: usize, one: &str) -> String {
    format!("{n} {one}{}", if n == 1 { "" } else { "s" })
}

#[component]
pub fn SessionsMenu() -> impl IntoView {
    let state = use_state();
    let host = use_host();
    let sessions = host.sessions();
    let shown = host.shown_session();
    let hits = host.search_hits();
    let open = RwSignal::new(false);
    let query = RwSignal::new(String::new());
    // Bumped when a switch is called off, so the select shows the session still open.
    let kept = RwSignal::new(0u32);
    let pending = StoredValue::new(None::<TimeoutHandle>);
    let offset = local_offset();
    let choose = move |id: i64| {
        if host.open_session(id) {
            open.set(false);
        } else {
            kept.update(|n| *n += 1);
        }
    };
    let search = move |text: String| {
        query.set(text.clone());
        if let Some(handle) = pending.get_value() {
            handle.clear();
        }
        // Too long a query is never sent: the library says so instead (below).
        let handle = query_too_long(&text)
            .is_none()
            .then(|| set_timeout_with_handle(move || host.search_sessions(text), SEARCH_DELAY));
        pending.set_value(handle.and_then(Result::ok));
    };
    // A row lives as long as its session: a save or a reply that lands while the user types
    // a new name updates the row's dates in place and never replaces the input being typed in.
    let entry = move |id: i64| Memo::new(move |_| find(sessions, id));
    let row = move |id: i64| session_row(state, host, id, entry(id), shown, choose, offset);
    let list = move || {
        let searching = query.with(|q| !q.trim().is_empty());
        if !searching {
            return view! {
                <ul class="library-list">
                    // Ids as the list's keys: `as u64` and back is the identity on i64.
                    <KeyedList keys=Signal::derive(move || sessions.with(|l| l.iter().map(|e| e.id as u64).collect()))
                        row=Arc::new(move |id| row(id as i64).into_any())/>
                </ul>
            }
            .into_any();
        }
        if let Some(why) = query.with(|q| query_too_long(q)) {
            return view! { <p class="library-note" data-testid="search-too-long">{why}</p> }
                .into_any();
        }
        let found = hits
            .get()
            .filter(|(q, _)| *q == query.get())
            .map(|(_, found)| found);
        match found {
            None => view! { <p class="library-note">"searching…"</p> }.into_any(),
            Some(found) if found.is_empty() => {
                let q = query.get();
                view! { <p class="library-note" data-testid="search-none">{format!("no session holds “{}”", q.trim())}</p> }.into_any()
            }
            Some(found) => hit_list(found, sessions, state, offset, choose),
        }
    };
    // As the open/save menus: a click or tap outside the open library closes it, and so does
    // Escape wherever the focus is, putting it back on the library's button.
    let root = NodeRef::<leptos::html::Div>::new();
    let toggle = NodeRef::<leptos::html::Button>::new();
    crate::components::header::popover::close_popover_on_outside_or_escape(
        move || root.get_untracked().map(Into::into),
        move || toggle.get_untracked().map(Into::into),
        move || open.get_untracked(),
        move || open.set(false),
    );
    view! {
        <div class="sessions" node_ref=root>
            <label>"session "
                <select data-testid="session-select" on:change=handler(move |ev| {
                    if let Ok(id) = event_target_value(&ev).parse() {
                        choose(id);
                    }
                })>
                    {move || sessions.get().into_iter().map(|e| session_option(state, e, shown, kept, offset)).collect_view()}
                </select>
            </label>
            <button data-testid="library-toggle" node_ref=toggle aria-expanded=move || open.get().to_string()
                title="every session: names, dates, first messages; search them"
                on:click=handler(move |_| open.update(|o| *o = !*o))>"library"</button>
            <When when=Memo::new(move |_| open.get())>
                <div class="session-library" data-testid="session-library" role="dialog"
                    aria-label="sessions library">
                    <div class="library-bar">
                        <input type="search" data-testid="session-search" aria-label="search every session"
                            placeholder="search every session's messages…"
                            title=SEARCH_TITLE
                            prop:value=move || query.get()
                            on:input=handler(move |ev| search(event_target_value(&ev)))/>
                        <button data-testid="library-new" on:click=handler(move |_| {
                            host.new_session();
                            open.set(false);
                        })>"new session"</button>
                        <button class="library-close" aria-label="close the library"
                            on:click=handler(move |_| open.set(false))>"×"</button>
                    </div>
                    {list}
                </div>
            </When>
        </div>
    }
}

/// One session of the library (`session-entry`): its title (`library::title`), editable in
/// place; its team (beside a title that is its first message), when it was made and last
/// changed and its fact count; its first message; "open" unless it is the one `shown`.
fn session_row(
    state: AppState,
    host: Host,
    id: i64,
    entry: Memo<Option<Entry>>,
    shown: Signal<Option<i64>>,
    choose: impl Fn(i64) + Copy + 'static,
    offset: i64,
) -> impl IntoView {
    // The open session's count is the page's own (the list is as of when it was sent).
    let facts_of = move |e: &Entry| {
        if shown.get() == Some(e.id) {
            state.session.with(|s| s.facts().len())
        } else {
            e.facts
        }
    };
    let is_shown = move || shown.get() == Some(id);
    let name = Memo::new(move |_| entry.with(|e| e.as_ref().map(title)).unwrap_or_default());
    let dates = move || {
        let Some(e) = entry.get() else {
            return String::new();
        };
        let now = state.clock.get();
        let facts = plural(facts_of(&e), "fact");
        let dates = dates_words(
            &when(e.created_at, now, offset),
            &when(e.updated_at, now, offset),
            &facts,
        );
        // The team's name beside a title that is the first message.
        match team_beside(&e) {
            Some(team) => format!("{team} · {dates}"),
            None => dates,
        }
    };
    let first = Memo::new(move |_| {
        entry.with(|e| {
            e.as_ref()
                .and_then(|e| e.first_message.as_deref())
                .map_or_else(
                    || "(no message yet)".to_string(),
                    |m| markers::strip_all(m).into_owned(),
                )
        })
    });
    view! {
        <li class="session-entry" class:shown=is_shown data-testid="session-entry" data-id=id>
            <div class="session-line">
                <input class="session-name" data-testid="session-name" aria-label="session name"
                    prop:value=name title="rename: type a name, then Enter"
                    on:change=handler(move |ev| host.rename_session(id, &event_target_value(&ev)))
                    on:keydown=handler(move |ev: leptos::ev::KeyboardEvent| {
                        if ev.key() == "Enter" {
                            let _ = event_target::<web_sys::HtmlInputElement>(&ev).blur();
                        }
                    })/>
                <button data-testid="session-open" prop:disabled=is_shown
                    on:click=handler(move |_| choose(id))>
                    {move || if is_shown() { "shown" } else { "open" }}
                </button>
            </div>
            <div class="session-dates" title="facts: the entries of its log (messages, replies, team and settings changes)">{dates}</div>
            <div class="session-first" title=first>{first}</div>
        </li>
    }
}

/// The quick switch's option for a session: its name and when it last changed, selected
/// while it is shown (again when a switch is called off: `kept`).
fn session_option(
    state: AppState,
    e: Entry,
    shown: Signal<Option<i64>>,
    kept: RwSignal<u32>,
    offset: i64,
) -> impl IntoView {
    let selected = move || {
        kept.track();
        shown.get() == Some(e.id)
    };
    let label = {
        let e = e.clone();
        move || label(&e, state.clock.get(), offset)
    };
    // Shown in the header, the title is cut short (whole in the text, the library and on
    // hover), so the switch shows its whole label at 1280 px.
    let short = {
        let e = e.clone();
        move || short_label(&e, state.clock.get(), offset)
    };
    let whole = {
        let e = e.clone();
        move || self::label(&e, state.clock.get(), offset)
    };
    view! { <option value=e.id.to_string() prop:selected=selected label=short title=whole>{label}</option> }
}

/// The most characters of a title the session switch shows.
const SWITCH_TITLE_CHARS: usize = 24;

/// [`label`] with the title cut to [`SWITCH_TITLE_CHARS`] (ending in `…` when cut).
fn short_label(e: &Entry, now: u64, offset: i64) -> String {
    let title = title(e);
    let short = if title.chars().count() > SWITCH_TITLE_CHARS {
        let cut: String = title.chars().take(SWITCH_TITLE_CHARS - 1).collect();
        format!("{}…", cut.trim_end())
    } else {
        title
    };
    format!("{short} · {}", when(e.updated_at, now, offset))
}

/// Session `id` of the list.
fn find(sessions: Signal<Vec<Entry>>, id: i64) -> Option<Entry> {
    sessions.with(|l| l.iter().find(|e| e.id == id).cloned())
}

/// A session in one line: its title and when it last changed (`title · today 14:02`).
fn label(e: &Entry, now: u64, offset: i64) -> String {
    format!("{} · {}", title(e), when(e.updated_at, now, offset))
}

/// The search's answer: one button per session found (`search-hit`): its title and when it
/// last changed, and its snippet with the matches marked.
fn hit_list(
    found: Vec<Hit>,
    sessions: Signal<Vec<Entry>>,
    state: AppState,
    offset: i64,
    choose: impl Fn(i64) + Copy + 'static,
) -> AnyView {
    // Read once, untracked: the hits are not rebuilt (and the focus lost) as time or the list
    // moves.
    let now = state.clock.get_untracked();
    let rows = found
        .into_iter()
        .map(|hit| {
            let id = hit.session;
            let head = untrack(|| find(sessions, id)).map_or(hit.name, |e| label(&e, now, offset));
            let title = format!("open {head}: {}", snippet_text(&hit.snippet));
            view! {
                <li>
                    <button class="search-hit" data-testid="search-hit" data-id=id title=title
                        on:click=handler(move |_| choose(id))>
                        <span class="hit-name">{head}</span>
                        <span class="hit-snippet">{hit.snippet.into_iter().map(|p| if p.hit {
                            view! { <mark>{p.text}</mark> }.into_any()
                        } else {
                            p.text.into_any()
                        }).collect_view()}</span>
                    </button>
                </li>
            }
        })
        .collect_view();
    view! { <ul class="library-hits">{rows}</ul> }.into_any()
}

/// When a session was made and, if later, last changed, with its fact count.
fn dates_words(created: &str, updated: &str, facts: &str) -> String {
    if created == updated {
        format!("{created} · {facts}")
    } else {
        format!("{created}, changed {updated} · {facts}")
    }
}

#[cfg(test)]
mod tests {
    use super::dates_words;

    #[test]
    fn a_session_changed_since_it_was_made_says_both_dates() {
        assert_eq!(
            dates_words("today 09:00", "today 09:00", "3 facts"),
            "today 09:00 · 3 facts"
        );
        assert_eq!(
            dates_words("yesterday 18:00", "today 09:00", "1 fact"),
            "yesterday 18:00, changed today 09:00 · 1 fact"
        );
    }
}
