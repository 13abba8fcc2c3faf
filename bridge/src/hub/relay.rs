//! A run's stream, relayed: its text to every page in frames of bounded size, the retries its
//! CLI reports, an ACP agent's activity and questions (docs/architecture.md §14d), and what a page that
//! connects while it runs needs: the last MiB it streamed, its activity, its open questions.

use std::sync::Arc;

use agent_chatter::activity::{Activity, ActivityLog, ApprovalRequest, DecidedBy, ToolStatus};
use agent_chatter::protocol::Event;
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio::task::JoinHandle;

use super::Published;
use crate::agents::acp::Signal;
use crate::agents::decode::Retry;

/// Streamed output is relayed in frames of at most this size.
const OUTPUT_FRAME_BYTES: usize = 64 * 1024;
/// The most of a run's streamed output the hub keeps for a page that connects while it runs
/// (its last bytes); the page keeps as much.
const STREAMED_KEPT_BYTES: usize = 1024 * 1024;

/// What the run in flight has streamed so far (its last [`STREAMED_KEPT_BYTES`]), for a page
/// that connects while it runs. Each delta is kept and published under its lock, and a page
/// attaches under it too, so every delta is either in what it is sent first or in its events,
/// never both, never neither.
#[derive(Default)]
pub(super) struct Streamed {
    pub(super) run: u64,
    pub(super) to: String,
    /// The message the delivery answers (`msg-3`), which keys its activity.
    pub(super) message: String,
    pub(super) text: String,
    /// Its activity so far (one row per tool call).
    pub(super) activity: ActivityLog,
    /// Its questions no one has answered yet, each with where its answer goes.
    pub(super) open: Vec<Open>,
}

/// A question of the running agent's, waiting for a person.
pub(super) struct Open {
    pub(super) request: ApprovalRequest,
    pub(super) answer: oneshot::Sender<(String, DecidedBy)>,
}

pub(super) type StreamedSlot = Arc<std::sync::Mutex<Option<Streamed>>>;

impl Streamed {
    fn push(&mut self, delta: &str) {
        self.text.push_str(delta);
        if self.text.len() > STREAMED_KEPT_BYTES {
            let over = self.text.len() - STREAMED_KEPT_BYTES;
            // The first character boundary at or after `over` (at most 3 bytes on).
            let cut = (over..=self.text.len())
                .find(|&i| self.text.is_char_boundary(i))
                .unwrap_or(self.text.len());
            self.text.drain(..cut);
        }
    }
}

/// The relays of one run; each ends once the run has dropped its sender.
pub(super) struct Relaying {
    output: JoinHandle<()>,
    retries: JoinHandle<()>,
    signals: JoinHandle<()>,
}

impl Relaying {
    /// Waits until every relay has sent every page what the run produced.
    pub(super) async fn finish(self) {
        let _ = self.output.await;
        let _ = self.retries.await;
        let _ = self.signals.await;
    }
}

/// The senders a run streams into.
pub(super) struct Senders {
    pub(super) deltas: mpsc::UnboundedSender<String>,
    pub(super) retries: mpsc::UnboundedSender<Retry>,
    pub(super) signals: mpsc::UnboundedSender<Signal>,
}

/// Starts relaying the text deltas, the retries and the signals of the run `streamed` names,
/// to every page (see [`relay_output`], [`relay_retries`], [`relay_signals`]); the run sends
/// them into the senders returned.
pub(super) fn start(
    to: String,
    message: String,
    events: broadcast::Sender<Arc<Published>>,
    streamed: (StreamedSlot, u64),
) -> (Senders, Relaying) {
    let (tx, rx) = mpsc::unbounded_channel::<String>();
    let (retries_tx, retries_rx) = mpsc::unbounded_channel();
    let (signals_tx, signals_rx) = mpsc::unbounded_channel();
    let retries = tokio::spawn(relay_retries(to.clone(), retries_rx, events.clone()));
    let signals = tokio::spawn(relay_signals(
        (to.clone(), message),
        signals_rx,
        events.clone(),
        streamed.clone(),
    ));
    let output = tokio::spawn(relay_output(to, rx, events, streamed));
    let senders = Senders {
        deltas: tx,
        retries: retries_tx,
        signals: signals_tx,
    };
    (
        senders,
        Relaying {
            output,
            retries,
            signals,
        },
    )
}

/// Relays an ACP run's activity and questions as they come (docs/architecture.md §14d): each is kept in the
/// run's slot (its activity log; its open questions until settled) and published under the
/// slot's lock, as output is, so a page attaching meanwhile gets each exactly once.
///
/// A running tool call's progress goes out at most once a [`PROGRESS_PERIOD`], as its last
/// state: a chatty agent (1 000 updates a run, 250 a second) costs every page 20 repaints a
/// second, not 250, and its progress still shows. Anything else (a question, a decision, a
/// call that ended, a plan, a thought) goes at once, with the progress that waited.
async fn relay_signals(
    (to, message): (String, String),
    mut signals: mpsc::UnboundedReceiver<Signal>,
    events: broadcast::Sender<Arc<Published>>,
    (streamed, run): (StreamedSlot, u64),
) {
    let mut last_relayed: Option<tokio::time::Instant> = None;
    while let Some(first) = signals.recv().await {
        // What arrived meanwhile is relayed with it, a tool call's updates as its last state.
        let mut batch = vec![first];
        while batch.len() < SIGNAL_BATCH {
            match signals.try_recv() {
                Ok(more) => batch.push(more),
                Err(_) => break,
            }
        }
        if let Some(last) = last_relayed.filter(|_| batch.iter().all(is_progress)) {
            gather_until(&mut signals, &mut batch, last + PROGRESS_PERIOD).await;
        }
        for signal in coalesce(batch) {
            relay_signal(&to, &message, signal, &events, &streamed, run);
        }
        last_relayed = Some(tokio::time::Instant::now());
    }
}

/// The least time between two relays of a running tool call's progress.
const PROGRESS_PERIOD: std::time::Duration = std::time::Duration::from_millis(50);

/// Adds to `batch` what arrives before `until`, and stops early at a signal that is not
/// progress, a full batch, or the run's end.
async fn gather_until(
    signals: &mut mpsc::UnboundedReceiver<Signal>,
    batch: &mut Vec<Signal>,
    until: tokio::time::Instant,
) {
    while batch.len() < SIGNAL_BATCH {
        match tokio::time::timeout_at(until, signals.recv()).await {
            Ok(Some(signal)) => {
                let progress = is_progress(&signal);
                batch.push(signal);
                if !progress {
                    return;
                }
            }
            Ok(None) | Err(_) => return,
        }
    }
}

/// Whether `signal` only says how a tool call still running is getting on.
fn is_progress(signal: &Signal) -> bool {
    matches!(
        signal,
        Signal::Activity(Activity::ToolCall(call))
            if matches!(call.status, ToolStatus::Pending | ToolStatus::InProgress)
    )
}

/// The most signals relayed together.
const SIGNAL_BATCH: usize = 1024;

/// `batch` without the tool-call states a later one in it replaces (same id), in order.
fn coalesce(batch: Vec<Signal>) -> Vec<Signal> {
    let mut last = std::collections::HashMap::new();
    for (i, signal) in batch.iter().enumerate() {
        if let Signal::Activity(Activity::ToolCall(call)) = signal {
            last.insert(call.id.clone(), i);
        }
    }
    batch
        .into_iter()
        .enumerate()
        .filter(|(i, signal)| match signal {
            Signal::Activity(Activity::ToolCall(call)) => last.get(&call.id) == Some(i),
            _ => true,
        })
        .map(|(_, signal)| signal)
        .collect()
}

/// Keeps and publishes one signal of run `run` (see [`relay_signals`]).
fn relay_signal(
    to: &str,
    message: &str,
    signal: Signal,
    events: &broadcast::Sender<Arc<Published>>,
    streamed: &StreamedSlot,
    run: u64,
) {
    {
        let mut kept = streamed.lock().unwrap_or_else(|e| e.into_inner());
        let mut slot = kept.as_mut().filter(|k| k.run == run);
        match signal {
            Signal::Activity(item) => {
                if let Activity::Decision(decision) = &item {
                    if let Some(slot) = slot.as_deref_mut() {
                        slot.open.retain(|o| o.request.id != decision.request);
                    }
                    let _ = events.send(Published::new(Event::ApprovalSettled {
                        to: to.to_string(),
                        request: decision.request.clone(),
                        option: decision.option.as_ref().map(|o| o.id.clone()),
                        by: decision.by.clone(),
                    }));
                }
                if let Some(slot) = slot {
                    slot.activity.push(item.clone());
                }
                let _ = events.send(Published::new(Event::Activity {
                    to: to.to_string(),
                    message: message.to_string(),
                    item,
                }));
            }
            Signal::Ask { request, answer } => {
                let _ = events.send(Published::new(Event::Approval {
                    to: to.to_string(),
                    message: message.to_string(),
                    request: request.clone(),
                }));
                if let Some(slot) = slot {
                    slot.open.push(Open { request, answer });
                }
            }
        }
    }
}

/// Relays a run's streamed text to every subscriber, in frames of at most
/// [`OUTPUT_FRAME_BYTES`] (a longer delta is split at character boundaries). What arrived
/// meanwhile goes in the same event: a burst of tiny deltas is a few frames, not thousands no
/// page keeps up with.
async fn relay_output(
    to: String,
    mut deltas: mpsc::UnboundedReceiver<String>,
    events: broadcast::Sender<Arc<Published>>,
    (streamed, run): (StreamedSlot, u64),
) {
    let publish = |delta: String| {
        let mut kept = streamed.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(kept) = kept.as_mut().filter(|k| k.run == run) {
            kept.push(&delta);
        }
        let _ = events.send(Published::new(Event::Output {
            to: to.clone(),
            delta,
        }));
    };
    while let Some(mut delta) = deltas.recv().await {
        while delta.len() < OUTPUT_FRAME_BYTES {
            match deltas.try_recv() {
                Ok(more) => delta.push_str(&more),
                Err(_) => break,
            }
        }
        if delta.len() <= OUTPUT_FRAME_BYTES {
            publish(delta);
            continue;
        }
        let mut rest = delta.as_str();
        while !rest.is_empty() {
            let end = if rest.len() <= OUTPUT_FRAME_BYTES {
                rest.len()
            } else {
                agent_chatter::text::floor_char_boundary(rest, OUTPUT_FRAME_BYTES)
            };
            publish(rest[..end].to_string());
            rest = &rest[end..];
        }
    }
}

/// Relays the retries a run's CLI reports, as they come (docs/architecture.md §14c).
async fn relay_retries(
    to: String,
    mut retries: mpsc::UnboundedReceiver<Retry>,
    events: broadcast::Sender<Arc<Published>>,
) {
    while let Some(retry) = retries.recv().await {
        let _ = events.send(Published::new(Event::Retrying {
            to: to.clone(),
            attempt: retry.attempt,
            max: retry.max,
            reason: retry.reason,
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_output_kept_for_a_late_page_is_the_last_mib_cut_at_a_character() {
        let mut kept = Streamed::default();
        kept.push(&"é".repeat(STREAMED_KEPT_BYTES / 2));
        kept.push("x");
        kept.push(&"🦀".repeat(1000));
        assert!(
            kept.text.len() <= STREAMED_KEPT_BYTES,
            "{}",
            kept.text.len()
        );
        assert!(kept.text.len() > STREAMED_KEPT_BYTES - 4);
        assert!(kept.text.ends_with(&format!("x{}", "🦀".repeat(1000))));
    }

    #[test]
    fn a_batch_keeps_each_tool_calls_last_state_in_order_and_every_other_signal() {
        use agent_chatter::activity::{ToolCall, ToolKind, ToolStatus};
        let call = |id: &str, status| {
            Signal::Activity(Activity::ToolCall(ToolCall {
                id: id.into(),
                title: id.into(),
                kind: ToolKind::Execute,
                status,
                files: vec![],
                diff: None,
            }))
        };
        let thought = || Signal::Activity(Activity::Thought { text: "t".into() });
        let batch = vec![
            call("a", ToolStatus::Pending),
            thought(),
            call("b", ToolStatus::InProgress),
            call("a", ToolStatus::InProgress),
            call("a", ToolStatus::Completed),
        ];
        let kept: Vec<String> = coalesce(batch)
            .into_iter()
            .map(|s| match s {
                Signal::Activity(Activity::ToolCall(c)) => format!("{} {:?}", c.id, c.status),
                Signal::Activity(_) => "thought".into(),
                Signal::Ask { .. } => "ask".into(),
            })
            .collect();
        assert_eq!(kept, ["thought", "b InProgress", "a Completed"]);
    }

    fn running(id: &str, title: String, status: agent_chatter::activity::ToolStatus) -> Signal {
        Signal::Activity(Activity::ToolCall(agent_chatter::activity::ToolCall {
            id: id.into(),
            title,
            kind: agent_chatter::activity::ToolKind::Execute,
            status,
            files: vec![],
            diff: None,
        }))
    }

    /// Lets the relay's task take what was sent it.
    async fn settle() {
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
    }

    /// What the pages were sent, as `(title, status)` of each tool call relayed.
    fn relayed(pages: &mut broadcast::Receiver<Arc<Published>>) -> Vec<(String, ToolStatus)> {
        let mut out = Vec::new();
        while let Ok(event) = pages.try_recv() {
            if let Event::Activity {
                item: Activity::ToolCall(call),
                ..
            } = event.event()
            {
                out.push((call.title.clone(), call.status));
            }
        }
        out
    }

    /// Carol's run's signals relayed (run 1, message `msg-1`): where to send them, what the
    /// pages (a channel of `capacity`) get, and the relay's task.
    fn carols_relay(
        capacity: usize,
    ) -> (
        mpsc::UnboundedSender<Signal>,
        broadcast::Receiver<Arc<Published>>,
        JoinHandle<()>,
    ) {
        let (events, pages) = broadcast::channel(capacity);
        let (tx, rx) = mpsc::unbounded_channel();
        let relay = tokio::spawn(relay_signals(
            ("carol".into(), "msg-1".into()),
            rx,
            events,
            (StreamedSlot::default(), 1),
        ));
        (tx, pages, relay)
    }

    #[tokio::test(start_paused = true)]
    async fn a_chatty_tool_call_reaches_the_pages_at_most_once_a_period_and_its_end_at_once() {
        let (tx, mut pages, relay) = carols_relay(4096);
        // 1 000 updates, one every 4 ms (4 s), then the call ends.
        for i in 1..=1000 {
            tx.send(running("t", format!("{i}/1000"), ToolStatus::InProgress))
                .unwrap();
            tokio::time::sleep(std::time::Duration::from_millis(4)).await;
        }
        tx.send(running("t", "done".into(), ToolStatus::Completed))
            .unwrap();
        settle().await;
        let sent = relayed(&mut pages);
        assert_eq!(sent.last(), Some(&("done".into(), ToolStatus::Completed)));
        // 4 s at one relay per 50 ms: about 80, never the 1 001 updates.
        assert!((60..=100).contains(&sent.len()), "{} relayed", sent.len());
        // The first update went at once; the progress shown kept up (the last one before
        // the end is among the last updates).
        assert_eq!(sent[0].0, "1/1000");
        let before_end = &sent[sent.len() - 2].0;
        let n: u32 = before_end.split('/').next().unwrap().parse().unwrap();
        assert!(n > 980, "{before_end}");
        drop(tx);
        relay.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_lone_update_and_anything_but_progress_go_at_once() {
        let (tx, mut pages, _relay) = carols_relay(64);
        tx.send(running("a", "a1".into(), ToolStatus::InProgress))
            .unwrap();
        settle().await;
        assert_eq!(relayed(&mut pages), [("a1".into(), ToolStatus::InProgress)]);
        // Within the period: progress waits, a failed call goes at once with it.
        tx.send(running("a", "a2".into(), ToolStatus::InProgress))
            .unwrap();
        settle().await;
        assert_eq!(relayed(&mut pages), []);
        tx.send(running("b", "b".into(), ToolStatus::Failed))
            .unwrap();
        settle().await;
        assert_eq!(
            relayed(&mut pages),
            [
                ("a2".into(), ToolStatus::InProgress),
                ("b".into(), ToolStatus::Failed)
            ]
        );
    }

    #[tokio::test]
    async fn output_is_relayed_in_frames_of_at_most_the_frame_size_split_at_characters() {
        let (events, mut pages) = broadcast::channel(1024);
        let (tx, rx) = mpsc::unbounded_channel();
        let big = "é€🦀".repeat(30_000); // 270 kB of 2-, 3- and 4-byte characters
        tx.send("small ".to_string()).unwrap();
        tx.send(big.clone()).unwrap();
        tx.send(" end".to_string()).unwrap();
        drop(tx);
        relay_output("max".into(), rx, events, (StreamedSlot::default(), 1)).await;
        let mut relayed = String::new();
        while let Ok(event) = pages.try_recv() {
            let Event::Output { to, delta } = event.event() else {
                panic!("{:?}", event.event())
            };
            assert_eq!(to, "max");
            assert!(delta.len() <= OUTPUT_FRAME_BYTES, "{}", delta.len());
            relayed.push_str(delta);
        }
        assert_eq!(relayed, format!("small {big} end"));
    }
}
