//! The deliveries list (`deliveries`, docs/architecture.md §13): one row per delivery (a message
//! handed to one recipient), as a browser's network panel lists requests: the message number,
//! the recipient, the prompt's bytes against its budget, how the delivery went (delivered, ✓
//! when the bridge's digest is the page's preview; failed, with the reason on hover; cancelled;
//! timed out; running, with its time; would receive, for the one due and the ones queued), its duration
//! (the bridge's timing, else from due to reply by the facts' times) and what it cost. Filters by member and by status; a row selects its recipient and message
//! in the inspector.
//!
//! Every row's status is known from the session alone (cheap, so the filters see them all);
//! the bytes and the digest check need the prompt, so they are computed for the rows in view
//! only: rows have one height and are virtualised, so 10⁴ messages cost what 10 do.

mod details;

pub use details::model_words;

use std::collections::BTreeMap;

use agent_chatter::message::MemberId;
use agent_chatter::session::Run;
use agent_chatter::session::{PreviewOverrides, Session};
use agent_chatter::team::DeliveryPolicy;
use agent_chatter::usage::{Silence, Usd};
use leptos::prelude::*;

use crate::components::virtual_list;
use crate::components::when::When;
use crate::erased::handler;
use crate::host::{use_host, Host};
use crate::state::{use_state, AppState};
use crate::status::{clock, duration_words, ring_turn};

/// A row's height in pixels (one line each, so the list is placed without measuring).
const ROW_HEIGHT: f64 = 26.0;
/// Rows rendered beyond the visible ones, above and below.
const OVERSCAN: usize = 4;
/// Viewport height assumed before the first measure.
const DEFAULT_VIEWPORT: f64 = 400.0;

/// How a delivery went, or where it stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryStatus {
    /// Its agent replied.
    Delivered,
    /// Its run failed (the reason is the run's).
    Failed,
    /// The user stopped its run.
    Cancelled,
    /// Its run reached its timeout and was stopped.
    TimedOut,
    /// A bridge is running its agent now.
    Running,
    /// Not handed to an agent yet: queued, or due in simulation (the user or the simulator
    /// answers it).
    WouldReceive,
}

impl DeliveryStatus {
    pub const ALL: [DeliveryStatus; 6] = [
        DeliveryStatus::Delivered,
        DeliveryStatus::Failed,
        DeliveryStatus::Cancelled,
        DeliveryStatus::TimedOut,
        DeliveryStatus::Running,
        DeliveryStatus::WouldReceive,
    ];

    /// Its name in `data-status` and in the status filter.
    pub fn key(self) -> &'static str {
        match self {
            DeliveryStatus::Delivered => "delivered",
            DeliveryStatus::Failed => "failed",
            DeliveryStatus::Cancelled => "cancelled",
            DeliveryStatus::TimedOut => "timed-out",
            DeliveryStatus::Running => "running",
            DeliveryStatus::WouldReceive => "would-receive",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            DeliveryStatus::WouldReceive => "would receive",
            DeliveryStatus::TimedOut => "timed out",
            other => other.key(),
        }
    }
}

/// One delivery of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The position of its `[MESSAGE]`.
    pub at: usize,
    pub to: MemberId,
    pub status: DeliveryStatus,
    /// Its run in `Session::runs`, once it ended.
    pub run: Option<usize>,
    /// It is the delivery in flight (running, or due in simulation).
    pub in_flight: bool,
    /// Which delivery of this message to this member it is (1 the first; a retry 2, 3, …),
    /// and whether a later one was made: a row says its try and only the last one stands
    /// for the pair when none was picked.
    pub attempt: usize,
    pub retried: bool,
}

/// How long delivery `all[i]` took, from when it became due to its reply or failure, by the
/// facts' times: due when its `[MESSAGE]` came, or when the run before it ended if that was
/// later (one runs at a time). `None` while it has not ended, or when a time is missing (a
/// log written without them), and for a run cut short by its host (`interrupted`): its
/// notice was written when the bridge came back, so its time says how long the bridge was
/// away, not how long the agent ran. A bridge's own timing ([`Usage::duration_ms`]) comes
/// first.
fn took(session: &Session, all: &[Entry], i: usize) -> Option<u64> {
    let time = |at: usize| {
        session
            .messages()
            .get(at)
            .map(|m| m.at.0)
            .filter(|&t| t > 0)
    };
    let run = |e: &Entry| session.runs().get(e.run?);
    let ended = |e: &Entry| time(run(e)?.message);
    let entry = all.get(i)?;
    if run(entry)?.cut_short() {
        return None;
    }
    // The run before, interrupted or not, ended when its notice was written: the earliest
    // this one could start.
    let before = i.checked_sub(1).and_then(|j| ended(&all[j]));
    let due = time(entry.at)?.max(before.unwrap_or(0));
    ended(entry)?.checked_sub(due)
}

/// Every delivery of `session`, in the order they were made, then the one due and the queued
/// ones in the order they will run. `agents_run`: a bridge runs the due one (`running`);
/// otherwise it waits for the user (`would receive`).
pub fn entries(session: &Session, agents_run: bool) -> Vec<Entry> {
    let runs = session.runs();
    // A member's n-th delivery ended in its n-th run (one runs at a time).
    let mut by_member: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, run) in runs.iter().enumerate().rev() {
        by_member.entry(run.to.as_str()).or_default().push(i);
    }
    let mut list: Vec<Entry> = session
        .deliveries()
        .into_iter()
        .map(|(at, to)| {
            let run = by_member.get_mut(to).and_then(Vec::pop);
            // The run's own word for how it ended (docs/architecture.md §14c).
            let status = match run.map(|i| runs[i].outcome()) {
                Some("failed") => DeliveryStatus::Failed,
                Some("cancelled") => DeliveryStatus::Cancelled,
                Some("timed out") => DeliveryStatus::TimedOut,
                Some(_) => DeliveryStatus::Delivered,
                None if agents_run => DeliveryStatus::Running,
                None => DeliveryStatus::WouldReceive,
            };
            Entry {
                at,
                to: to.to_string(),
                status,
                run,
                in_flight: run.is_none(),
                attempt: 1,
                retried: false,
            }
        })
        .collect();
    let conversation = session.conversation();
    let len = session.messages().len();
    let parent_policy = session
        .settings()
        .is_some_and(|s| s.delivery == DeliveryPolicy::Parent);
    for queued in conversation.pending_in_run_order() {
        let latest = len.saturating_sub(1);
        let at = if parent_policy {
            session.store().position(&queued.parent).unwrap_or(latest)
        } else {
            latest
        };
        list.push(Entry {
            at,
            to: queued.to.clone(),
            status: DeliveryStatus::WouldReceive,
            run: None,
            in_flight: false,
            attempt: 1,
            retried: false,
        });
    }
    number_attempts(&mut list);
    list
}

/// Numbers each delivery's try of its message to its member and marks those tried again. Only
/// a member's last failed run can be run again, so a retry is that member's next delivery,
/// of the same message.
fn number_attempts(list: &mut [Entry]) {
    // Per member, the index of its last delivery so far (the map type `entries` uses).
    let mut last: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    let mut tries = vec![(1usize, false); list.len()];
    for (i, e) in list.iter().enumerate() {
        let before = last.entry(e.to.as_str()).or_default();
        if let Some(&j) = before.last() {
            if list[j].at == e.at {
                tries[i].0 = tries[j].0 + 1;
                tries[j].1 = true;
            }
        }
        before.clear();
        before.push(i);
    }
    for (e, (attempt, retried)) in list.iter_mut().zip(tries) {
        e.attempt = attempt;
        e.retried = retried;
    }
}

/// What `run` cost as far as its CLI said: `None` when it reported no cost, and for a run
/// that did not reply reporting `$0` (Claude's `result` of a failed run says `0`, which is
/// "nothing counted", not a price: it reads `—`, never `$0.0000`).
pub fn reported_cost(run: &Run) -> Option<Usd> {
    let cost = run.usage.as_ref()?.cost_usd?;
    (run.failed.is_none() || cost.dollars() > 0.0).then_some(cost)
}

/// The cost and the tokens in and out, as far as the run reported them: the cost first (a
/// narrow column cuts the end of the cell), `—` in its place when it was not reported;
/// `—` alone for a run that reported nothing (simulated, or one that never started).
pub fn usage_cell(run: Option<&Run>) -> String {
    let Some(u) = run.and_then(|r| r.usage.as_ref()).filter(|u| !u.is_empty()) else {
        return "—".into();
    };
    let cost = run.and_then(reported_cost);
    let mut parts = vec![cost.map_or_else(|| "—".to_string(), Usd::display)];
    if let Some(i) = u.input_tokens {
        parts.push(format!("{i} in"));
    }
    if let Some(o) = u.output_tokens {
        parts.push(format!("{o} out"));
    }
    parts.join(" · ")
}

/// What `run` reported in words for the inspector (`1200 in · 80 out · $0.0031 · 5.4 s`), the
/// cost said as `cost —` when a run that ran reported none ([`reported_cost`]), and nothing
/// reported as `silence` gives the reason.
pub fn usage_words(run: &Run, silence: Silence) -> String {
    let mut usage = run.usage.unwrap_or_default();
    usage.cost_usd = reported_cost(run);
    if usage.is_empty() || usage.cost_usd.is_some() {
        usage.summary_or(silence)
    } else {
        format!("{} · cost —", usage.summary())
    }
}

/// `1234 B` and its share of the budget, `0.16%`.
pub fn bytes_cell(bytes: usize, budget: usize) -> (String, String) {
    let percent = if budget == 0 {
        0.0
    } else {
        bytes as f64 * 100.0 / budget as f64
    };
    let percent = if percent > 0.0 && percent < 0.01 {
        "<0.01".to_string()
    } else {
        format!("{percent:.2}")
    };
    (format!("{bytes} B"), format!("{percent}%"))
}

/// What a row in view shows beyond its entry.
#[derive(Debug, Clone, PartialEq)]
struct Shown {
    index: usize,
    entry: Entry,
    name: String,
    number: String,
    bytes: String,
    /// The bytes against the budget in full, on hover.
    budget: String,
    /// For a delivery whose digest the host reported: whether the page's preview has it.
    verified: Option<bool>,
    /// Why it failed, or why its reply may be cut short.
    reason: Option<String>,
    duration: String,
    usage: String,
}

#[component]
pub fn Deliveries() -> impl IntoView {
    let state = use_state();
    let host = use_host();
    let agents_run = host.runs_agents();
    let member_filter = RwSignal::new(String::new());
    let status_filter = RwSignal::new(String::new());
    let all = Memo::new(move |_| state.session.with(|s| entries(s, agents_run)));
    // The delivery chosen in the list, as it stands now (its run may have ended since).
    let picked = RwSignal::new(None::<Entry>);
    let chosen = Memo::new(move |_| {
        let p = picked.get()?;
        all.with(|all| {
            all.iter()
                .find(|e| e.at == p.at && e.to == p.to && e.attempt == p.attempt)
                .cloned()
        })
    });
    // Indices into `all` that pass the filters.
    let filtered = Memo::new(move |_| {
        let member = member_filter.get();
        let status = status_filter.get();
        all.with(|all| {
            all.iter()
                .enumerate()
                .filter(|(_, e)| member.is_empty() || e.to == member)
                .filter(|(_, e)| status.is_empty() || e.status.key() == status)
                .map(|(i, _)| i)
                .collect::<Vec<_>>()
        })
    });
    let scroller = NodeRef::<leptos::html::Div>::new();
    let scroll_top = RwSignal::new(0.0_f64);
    let viewport = RwSignal::new(DEFAULT_VIEWPORT);
    let range = Memo::new(move |_| {
        let len = filtered.with(Vec::len);
        virtual_list::fixed(scroll_top.get(), viewport.get(), ROW_HEIGHT, OVERSCAN, len)
    });
    let measure = move || {
        if let Some(el) = scroller.get_untracked() {
            scroll_top.set(el.scroll_top() as f64);
            viewport.set((el.client_height() as f64).max(ROW_HEIGHT));
        }
    };
    crate::erased::effect(move || {
        if scroller.get().is_some() {
            request_animation_frame(measure);
        }
    });
    // The rows in view: their prompts are built (bytes, digest) only here.
    let shown = Memo::new(move |_| {
        let range = range.get();
        // Each with how long its run took by the facts' times (for runs no CLI timed).
        let rows: Vec<(usize, Entry, Option<u64>)> = state.session.with(|s| {
            filtered.with(|f| {
                all.with(|all| {
                    f[range.clone()]
                        .iter()
                        .zip(range.clone())
                        .map(|(&i, index)| (index, all[i].clone(), took(s, all, i)))
                        .collect()
                })
            })
        });
        state.session.with(|s| {
            rows.into_iter()
                .map(|(index, entry, took)| show(s, host, index, entry, took))
                .collect::<Vec<_>>()
        })
    });
    let agents = move || state.agent_names();
    let count = move || {
        let earlier = state.session.with(|s| s.earlier_runs());
        count_words(filtered.with(Vec::len), all.with(Vec::len), earlier)
    };
    view! {
        <div class="deliveries" data-testid="deliveries">
            <div class="deliveries-filters">
                <label>"member "
                    <select data-testid="deliveries-filter-member" on:change=handler(move |ev| member_filter.set(event_target_value(&ev)))>
                        <option value="">"all"</option>
                        {move || agents().into_iter().map(|(id, name)| view! { <option value=id>{name}</option> }).collect_view()}
                    </select>
                </label>
                <label>"status "
                    <select data-testid="deliveries-filter-status" on:change=handler(move |ev| status_filter.set(event_target_value(&ev)))>
                        <option value="">"all"</option>
                        {DeliveryStatus::ALL.iter().map(|s| view! { <option value=s.key()>{s.label()}</option> }).collect_view()}
                    </select>
                </label>
                <span class="muted" data-testid="deliveries-count">{count}</span>
            </div>
            <div class="delivery-row delivery-head" aria-hidden="true">
                <span>"#"</span><span>"to"</span>
                // Short heads, so that a narrow pane shows them whole; the full words on hover.
                <span title="the prompt's bytes: stdin and the system flag together, as the budget counts them (on hover, their share of it)">"bytes"</span>
                <span>"status"</span>
                <span title="duration: from when it was due to its reply or failure">"time"</span>
                <span>"usage"</span>
            </div>
            <div class="deliveries-list" node_ref=scroller on:scroll=handler(move |_| measure())
                role="listbox" aria-label="deliveries: select one to see its prompt in the inspector">
                <div class="deliveries-spacer" style:height=move || format!("{}px", filtered.with(Vec::len) as f64 * ROW_HEIGHT)>
                    {move || shown.get().into_iter().map(|r| delivery_row(state, host, picked, r)).collect_view()}
                </div>
                <When when=Memo::new(move |_| filtered.with(Vec::is_empty))>
                    <p class="muted">{move || if all.with(Vec::is_empty) { "no delivery yet" } else { "no delivery matches the filters" }}</p>
                </When>
            </div>
            <details::DeliveryDetails chosen=chosen />
        </div>
    }
}

/// What row `index` shows of `entry` (its prompt built here: bytes, digest check), `took`
/// being how long its run took by the facts' times.
fn show(s: &Session, host: Host, index: usize, entry: Entry, took: Option<u64>) -> Shown {
    // A member who left the team is still named (`memberLeft`: their runs stay theirs).
    let name = s.display_name(&entry.to).unwrap_or(&entry.to).to_string();
    let prompt = s
        .preview(&entry.to, Some(entry.at), &PreviewOverrides::default())
        .ok();
    // The share of the budget on hover only: the cell stays short enough
    // for a phone (docs/architecture.md §13).
    let (bytes, budget) = prompt.as_ref().map_or_else(
        || ("—".to_string(), String::new()),
        |p| {
            let e = &p.explain;
            let (bytes, share) = bytes_cell(e.total_bytes, e.max_bytes);
            let budget = format!("{bytes} of a {} B budget ({share})", e.max_bytes);
            (bytes, budget)
        },
    );
    let verified = (entry.status == DeliveryStatus::Delivered)
        .then(|| {
            let message = &s.messages().get(entry.at)?.id.0;
            let sent = host.sent_digest(message, &entry.to)?;
            Some(prompt.as_ref().is_some_and(|p| p.sha256_hex() == sent))
        })
        .flatten();
    let run = entry.run.and_then(|i| s.runs().get(i));
    let reason = run.and_then(|r| r.failed.clone().or(r.incomplete.clone()));
    let duration = run
        .and_then(|r| r.usage.as_ref())
        .and_then(|u| u.duration_ms)
        .or(took)
        .map_or_else(|| "—".to_string(), duration_words);
    Shown {
        index,
        number: match entry.attempt {
            1 => format!("#{}", entry.at + 1),
            n => format!("#{} · try {n}", entry.at + 1),
        },
        name,
        bytes,
        budget,
        verified,
        reason,
        duration,
        usage: usage_cell(run),
        entry,
    }
}

/// A row's status cell and its title (on hover): a delivery's digest checked (✓, ✗), why it
/// failed or may be cut short (`reason`), or what "would receive" means.
fn status_words(
    status: DeliveryStatus,
    verified: Option<bool>,
    reason: Option<&str>,
) -> (String, String) {
    match (status, verified) {
        (DeliveryStatus::Delivered, Some(true)) => (
            "delivered ✓".to_string(),
            "verified: the bridge sent exactly the bytes this page previews".to_string(),
        ),
        (DeliveryStatus::Delivered, Some(false)) => (
            "delivered ✗".to_string(),
            "the bridge sent other bytes than this page previews".to_string(),
        ),
        (DeliveryStatus::Delivered, None) => (
            "delivered".to_string(),
            reason.map_or_else(String::new, |r| format!("incomplete: {r}")),
        ),
        (DeliveryStatus::Failed | DeliveryStatus::Cancelled | DeliveryStatus::TimedOut, _) => (
            status.label().to_string(),
            reason.unwrap_or_default().to_string(),
        ),
        (DeliveryStatus::Running, _) => ("running".to_string(), String::new()),
        (DeliveryStatus::WouldReceive, _) => (
            "would receive".to_string(),
            "not handed to its agent yet: due or queued; the prompt is what it would get now"
                .to_string(),
        ),
    }
}

/// Selects `entry`'s recipient and message in the inspector, and its details under the list.
fn choose(state: AppState, picked: RwSignal<Option<Entry>>, entry: &Entry) {
    state.recipient.set(Some(entry.to.clone()));
    state.selected.set(Some(entry.at));
    picked.set(Some(entry.clone()));
}

/// One row of the list, placed at its `index`.
fn delivery_row(
    state: AppState,
    host: Host,
    picked: RwSignal<Option<Entry>>,
    shown: Shown,
) -> AnyView {
    let Shown {
        index,
        entry,
        name,
        number,
        bytes,
        budget,
        verified,
        reason,
        duration,
        usage,
    } = shown;
    let (to, at, status) = (entry.to.clone(), entry.at, entry.status);
    let (attempt, retried) = (entry.attempt, entry.retried);
    // The row shown in the inspector: of the tries of one message to one member, the one
    // picked in the list, else the last.
    let selected = {
        let to = to.clone();
        move || {
            state.shown_at.get() == Some(at)
                && state
                    .shown_recipient
                    .with(|r| r.as_deref() == Some(to.as_str()))
                && picked.with(|p| match p {
                    Some(p) if p.at == at && p.to == to => p.attempt == attempt,
                    _ => !retried,
                })
        }
    };
    // The delivery in flight counts its time on the clock member-status reads.
    let in_flight = entry.in_flight;
    let ran = {
        let to = to.clone();
        Memo::new(move |_| host.running_for(&to))
    };
    let elapsed = move || ran.get().map(clock).unwrap_or_default();
    // Its ring turns with the same clock, as the running mark's does.
    let turn = move || ring_turn(ran.get().unwrap_or_default());
    let (status_text, title) = status_words(status, verified, reason.as_deref());
    let on_key = {
        let entry = entry.clone();
        move |ev: leptos::ev::KeyboardEvent| {
            if ev.key() == "Enter" || ev.key() == " " {
                ev.prevent_default();
                choose(state, picked, &entry);
            }
        }
    };
    let verified_attr = verified.map(|v| if v { "yes" } else { "no" });
    let (name_title, usage_title) = (name.clone(), usage.clone());
    view! {
        <div class={let selected = selected.clone(); move || if selected() { "delivery-row selected" } else { "delivery-row" }}
            data-testid="delivery-row" data-status=status.key() data-verified=verified_attr
            role="option" aria-selected=move || selected().to_string() tabindex="0"
            style:top=format!("{}px", index as f64 * ROW_HEIGHT)
            on:click=handler({
                let entry = entry.clone();
                move |_| choose(state, picked, &entry)
            })
            on:keydown=handler(on_key)>
            <span class="d-number">{number}</span>
            <span class="d-to" title=name_title>{name}</span>
            <span class="d-bytes" title=budget>{bytes}</span>
            <span class=format!("d-status d-{}", status.key()) title=title>
                {in_flight.then(|| view! { <span class="spinner" data-testid="delivery-spinner" data-turn=turn aria-hidden="true"></span> })}
                {status_text}
                {(status == DeliveryStatus::Failed).then(|| reason.clone().map(|r| format!(": {r}"))).flatten()}
            </span>
            <span class="d-duration">{move || if in_flight { elapsed() } else { duration.clone() }}</span>
            <span class="d-usage" title=usage_title>{usage}</span>
        </div>
    }
    // Type-erased: one row type instead of nested closure types (7 KB less wasm, gzipped).
    .into_any()
}

/// How many deliveries the filters let through, of how many; and the runs under an earlier
/// team: still counted in the usage, no longer listed (the prompts they were given were
/// built by that team).
fn count_words(shown: usize, total: usize, earlier: usize) -> String {
    let mut count = if shown == total {
        format!("{total} deliveries")
    } else {
        format!("{shown} of {total} deliveries")
    };
    if earlier > 0 {
        count.push_str(&format!(
            " · {earlier} earlier run(s), before the team changed, are counted in the usage, not listed"
        ));
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_chatter::message::Millis;
    use agent_chatter::session::{Fact, Failure};
    use agent_chatter::usage::Usage;

    fn demo() -> Session {
        let mut s = Session::new();
        s.apply(&Fact::set_team(agent_chatter::demo::team()))
            .unwrap();
        s
    }

    fn go(s: &mut Session, fact: Fact) {
        s.apply(&fact).unwrap();
        while s.poll_action().is_some() {}
    }

    /// Max's run ended at `at` by `failure`, for `reason`.
    fn max_stopped(failure: Failure, reason: &str, at: u64) -> Fact {
        Fact::Failed {
            to: "max".into(),
            reason: reason.into(),
            at: Millis(at),
            failure: Some(failure),
            usage: None,
        }
    }

    fn summary(list: &[Entry]) -> Vec<(usize, &str, &str)> {
        list.iter()
            .map(|e| (e.at, e.to.as_str(), e.status.key()))
            .collect()
    }

    #[test]
    fn each_delivery_is_a_row_with_how_it_went() {
        let mut s = demo();
        go(
            &mut s,
            Fact::human("[FROM: kailai] plan it [NEXT: max]", Millis(1)),
        );
        assert_eq!(summary(&entries(&s, true)), [(0, "max", "running")]);
        assert_eq!(
            summary(&entries(&s, false)),
            [(0, "max", "would-receive")],
            "in simulation the due one waits for the user"
        );
        go(
            &mut s,
            Fact::replied("max", "planned [NEXT: sarah]", Millis(2)),
        );
        go(
            &mut s,
            Fact::failed("sarah", "codex exited with 1", Millis(3)),
        );
        let list = entries(&s, true);
        assert_eq!(
            summary(&list[..2]),
            [(0, "max", "delivered"), (1, "sarah", "failed")]
        );
        assert_eq!(list[1].run, Some(1), "sarah's row has sarah's run");
    }

    #[test]
    fn a_run_takes_from_when_it_was_due_to_its_reply_or_failure() {
        let mut s = demo();
        go(
            &mut s,
            Fact::human(
                "[FROM: kailai] all of you [NEXT: max, sarah]",
                Millis(60_000),
            ),
        );
        go(&mut s, Fact::replied("max", "done", Millis(65_000)));
        go(
            &mut s,
            Fact::failed("sarah", "codex exited with 1", Millis(72_000)),
        );
        let list = entries(&s, false);
        assert_eq!(took(&s, &list, 0), Some(5_000), "max: due with the message");
        assert_eq!(
            took(&s, &list, 1),
            Some(7_000),
            "sarah was queued: due once max's run ended"
        );
    }

    #[test]
    fn a_run_not_ended_or_without_times_has_no_duration() {
        let mut s = demo();
        go(
            &mut s,
            Fact::human("[FROM: kailai] go [NEXT: max]", Millis(0)),
        );
        assert_eq!(took(&s, &entries(&s, false), 0), None, "still due");
        go(&mut s, Fact::replied("max", "done", Millis(5_000)));
        assert_eq!(
            took(&s, &entries(&s, false), 0),
            None,
            "the message has no time (a log written without them)"
        );
    }

    #[test]
    fn a_run_cut_short_by_its_host_has_no_duration() {
        let mut s = demo();
        go(
            &mut s,
            Fact::human("[FROM: kailai] go [NEXT: max]", Millis(1_000)),
        );
        // Recorded when the bridge came back, 45 s later.
        let reason = "interrupted: the bridge stopped while it ran";
        go(&mut s, max_stopped(Failure::Interrupted, reason, 46_000));
        assert_eq!(took(&s, &entries(&s, true), 0), None);
        // Retried once the bridge is back: timed from then, not from the message.
        go(
            &mut s,
            Fact::Retry {
                to: "max".into(),
                at: Millis(46_000),
            },
        );
        go(&mut s, Fact::replied("max", "done", Millis(50_000)));
        assert_eq!(took(&s, &entries(&s, true), 1), Some(4_000));
    }

    #[test]
    fn a_retry_is_the_second_try_of_its_delivery_and_the_first_says_it_was_tried_again() {
        let mut s = demo();
        go(
            &mut s,
            Fact::human("[FROM: kailai] plan it [NEXT: max]", Millis(1)),
        );
        go(&mut s, max_stopped(Failure::Crashed, "exited with 1", 2));
        go(
            &mut s,
            Fact::Retry {
                to: "max".into(),
                at: Millis(3),
            },
        );
        let list = entries(&s, true);
        let tries: Vec<(usize, &str, usize, bool)> = list
            .iter()
            .map(|e| (e.at, e.to.as_str(), e.attempt, e.retried))
            .collect();
        assert_eq!(tries, [(0, "max", 1, true), (0, "max", 2, false)]);
    }

    #[test]
    fn a_cancelled_run_reads_cancelled_not_failed() {
        let mut s = demo();
        go(
            &mut s,
            Fact::human("[FROM: kailai] plan it [NEXT: max]", Millis(1)),
        );
        let reason = "cancelled by the user: the agent was stopped";
        go(&mut s, max_stopped(Failure::Cancelled, reason, 2));
        assert_eq!(summary(&entries(&s, true)), [(0, "max", "cancelled")]);
    }

    #[test]
    fn a_run_stopped_at_its_timeout_reads_timed_out_not_failed() {
        let mut s = demo();
        go(
            &mut s,
            Fact::human("[FROM: kailai] plan it [NEXT: max]", Millis(1)),
        );
        let reason = "no reply within 10 s: the agent was stopped";
        go(&mut s, max_stopped(Failure::Timeout, reason, 2));
        assert_eq!(summary(&entries(&s, true)), [(0, "max", "timed-out")]);
        assert_eq!(DeliveryStatus::TimedOut.label(), "timed out");
    }

    #[test]
    fn queued_deliveries_would_receive_the_latest_message() {
        let mut s = demo();
        go(
            &mut s,
            Fact::human(
                "[FROM: kailai] all of you [NEXT: max, sarah, carol]",
                Millis(1),
            ),
        );
        let list = entries(&s, true);
        assert_eq!(list.len(), 3, "{list:?}");
        assert_eq!(list[0].status, DeliveryStatus::Running);
        assert!(list[1..]
            .iter()
            .all(|e| e.status == DeliveryStatus::WouldReceive && e.at == 0));
    }

    #[test]
    fn cells_say_bytes_against_the_budget_and_what_was_reported() {
        let cell = |b, of| {
            let (bytes, share) = bytes_cell(b, of);
            format!("{bytes} · {share}")
        };
        assert_eq!(cell(683, 786_432), "683 B · 0.09%");
        assert_eq!(cell(1, 786_432), "1 B · <0.01%");
        assert_eq!(usage_cell(None), "—");
        let u = Usage {
            input_tokens: Some(1200),
            output_tokens: Some(80),
            ..Default::default()
        };
        let run = |usage: Option<Usage>, failed: Option<&str>| Run {
            to: "max".into(),
            message: 1,
            usage,
            incomplete: None,
            failed: failed.map(str::to_string),
            failure: None,
        };
        // A cost not reported reads `—`, in the cell and in the inspector's words.
        assert_eq!(
            usage_cell(Some(&run(Some(u), None))),
            "— · 1200 in · 80 out"
        );
        assert_eq!(
            usage_words(&run(Some(u), None), Silence::NotReported),
            "1200 in · 80 out · cost —"
        );
        assert_eq!(usage_cell(Some(&run(None, Some("crashed")))), "—");
        assert_eq!(
            usage_words(&run(None, None), Silence::NotReported),
            "no usage reported"
        );
        assert_eq!(
            usage_words(&run(None, None), Silence::Simulated),
            "the simulator reports no usage"
        );
        let priced = Usage {
            cost_usd: Usd::new(0.0031),
            ..u
        };
        assert_eq!(
            usage_cell(Some(&run(Some(priced), None))),
            "$0.0031 · 1200 in · 80 out"
        );
        // A failed run's `$0` is nothing counted, not a price.
        let zero = Usage {
            cost_usd: Usd::new(0.0),
            duration_ms: Some(300),
            ..Default::default()
        };
        assert_eq!(usage_cell(Some(&run(Some(zero), Some("auth")))), "—");
        assert_eq!(
            usage_words(&run(Some(zero), Some("auth")), Silence::Simulated),
            "0.3 s · cost —"
        );
        assert_eq!(usage_cell(Some(&run(Some(zero), None))), "$0.0000");
    }

    #[test]
    fn a_delivered_row_says_whether_the_bridge_sent_the_bytes_previewed() {
        let words = |v, r| status_words(DeliveryStatus::Delivered, v, r);
        assert_eq!(words(Some(true), None).0, "delivered ✓");
        assert_eq!(words(Some(false), None).0, "delivered ✗");
        assert_eq!(
            words(None, Some("cut")),
            ("delivered".to_string(), "incomplete: cut".to_string())
        );
        assert_eq!(
            status_words(DeliveryStatus::TimedOut, None, Some("600 s")),
            ("timed out".to_string(), "600 s".to_string())
        );
    }

    #[test]
    fn the_count_says_what_the_filters_leave_and_the_earlier_runs() {
        assert_eq!(count_words(3, 3, 0), "3 deliveries");
        assert_eq!(count_words(1, 3, 0), "1 of 3 deliveries");
        assert_eq!(
            count_words(3, 3, 2),
            "3 deliveries · 2 earlier run(s), before the team changed, are counted in the usage, not listed"
        );
    }
}
