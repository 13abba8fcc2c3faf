//! The routing queue: pending deliveries and the order they run in (docs/architecture.md §6, the
//! peer's routing v3 made explicit).
//!
//! Scheduling, one item at a time:
//! 1. any P1 item, earliest first;
//! 2. else items whose parent is the last completed message (P2 before P3, FIFO), at most
//!    [`MAX_LOCAL_RUN`] picks in a row, so answers to what was just said come first without
//!    starving older branches;
//! 3. else every item, P2 before P3, FIFO.
//!
//! Limits: [`MAX_QUEUED`] items (more are refused), [`MAX_PER_PARENT`] items per parent (more
//! are demoted to P3), and an identical (parent, target, intent) item is never queued twice.

use serde::{Deserialize, Serialize};

use crate::message::Intent;
use crate::message::{MemberId, MessageId};

/// At most this many pending deliveries; more are refused, so a reply naming the whole team
/// over and over cannot grow the queue without bound.
pub const MAX_QUEUED: usize = 50;
/// At most this many pending items share one parent at their own intent; more are demoted to
/// P3 so one message fanning out cannot crowd out every other branch.
pub const MAX_PER_PARENT: usize = 10;
/// At most this many consecutive picks from the last completed message's children before one
/// pick from the whole queue (anti-starvation).
pub(crate) const MAX_LOCAL_RUN: usize = 5;

/// One pending delivery: `to` must answer `parent`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct QueuedDelivery {
    /// The member who will receive it.
    pub to: MemberId,
    /// The message that addressed `to`.
    pub parent: MessageId,
    /// The intent it runs with (after any demotion).
    pub intent: Intent,
    /// Enqueue order, unique within a conversation; FIFO means lowest first.
    pub seq: u64,
}

/// What [`RoutingQueue::push`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "camelCase")]
pub(crate) enum Enqueued {
    /// Queued as asked.
    Queued,
    /// Queued, but demoted to P3 because its parent already had [`MAX_PER_PARENT`] items.
    Demoted { from: Intent },
    /// Not queued: an identical (parent, target, intent) item is already pending.
    Duplicate,
    /// Not queued: the queue holds [`MAX_QUEUED`] items.
    Full,
}

/// The pending deliveries, in enqueue order, plus the scheduler's run counter.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RoutingQueue {
    items: Vec<QueuedDelivery>,
    next_seq: u64,
    /// Consecutive picks made by rule 2 (children of the last completed message).
    local_run: usize,
}

impl RoutingQueue {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Pending items in enqueue order (not necessarily run order: that depends on what
    /// completes next).
    pub fn items(&self) -> &[QueuedDelivery] {
        &self.items
    }

    /// Pending items in the order they will run when the next message (the reply in flight,
    /// or the awaited human's) routes no one further: P1, then P2, then P3, each FIFO. That
    /// next message's own addressees would run first (rule 2), and after a failure the
    /// children of the last completed message do; those are the only ways the order changes.
    pub(crate) fn run_order(&self) -> Vec<&QueuedDelivery> {
        let mut order: Vec<&QueuedDelivery> = self.items.iter().collect();
        order.sort_unstable_by_key(|item| (item.intent, item.seq));
        order
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Queues `to` answering `parent` with `intent`, applying the limits in the peer's order:
    /// size first, then the per-parent demotion, then the duplicate check on the final intent.
    pub(crate) fn push(&mut self, to: &str, parent: &MessageId, intent: Intent) -> Enqueued {
        if self.items.len() >= MAX_QUEUED {
            return Enqueued::Full;
        }
        let siblings = self.items.iter().filter(|i| &i.parent == parent).count();
        let (intent, outcome) = if siblings >= MAX_PER_PARENT && intent != Intent::P3 {
            (Intent::P3, Enqueued::Demoted { from: intent })
        } else {
            (intent, Enqueued::Queued)
        };
        if self
            .items
            .iter()
            .any(|i| &i.parent == parent && i.to == to && i.intent == intent)
        {
            return Enqueued::Duplicate;
        }
        self.items.push(QueuedDelivery {
            to: to.to_string(),
            parent: parent.clone(),
            intent,
            seq: self.next_seq,
        });
        self.next_seq += 1;
        outcome
    }

    /// Removes and returns the item to run next (see the module doc for the rules).
    /// `last_completed` is the newest message whose routing has been applied.
    pub(crate) fn pop_next(
        &mut self,
        last_completed: Option<&MessageId>,
    ) -> Option<QueuedDelivery> {
        if let Some(i) = self.items.iter().position(|i| i.intent == Intent::P1) {
            self.local_run = 0;
            return Some(self.items.remove(i));
        }
        if self.local_run < MAX_LOCAL_RUN {
            if let Some(last) = last_completed {
                if let Some(i) = self.first_by_intent(|item| &item.parent == last) {
                    self.local_run += 1;
                    return Some(self.items.remove(i));
                }
            }
        }
        self.local_run = 0;
        let i = self.first_by_intent(|_| true)?;
        Some(self.items.remove(i))
    }

    /// The first (FIFO) P2 item matching `filter`, else the first P3 one.
    fn first_by_intent(&self, filter: impl Fn(&QueuedDelivery) -> bool) -> Option<usize> {
        [Intent::P2, Intent::P3].iter().find_map(|&intent| {
            self.items
                .iter()
                .position(|item| item.intent == intent && filter(item))
        })
    }

    /// Removes every pending item for `member` (`[DROP: member]`); returns them.
    #[cfg(test)]
    pub(crate) fn remove_target(&mut self, member: &str) -> Vec<QueuedDelivery> {
        self.remove_where(&|i| i.to == member)
    }

    /// Removes every pending item matching `pred`; returns them in enqueue order. (`pred` is
    /// a `dyn`: one copy of this in the page's wasm, whatever the predicate.)
    pub(crate) fn remove_where(
        &mut self,
        pred: &dyn Fn(&QueuedDelivery) -> bool,
    ) -> Vec<QueuedDelivery> {
        let (removed, kept) = std::mem::take(&mut self.items)
            .into_iter()
            .partition(|i| pred(i));
        self.items = kept;
        if !removed.is_empty() {
            self.local_run = 0;
        }
        removed
    }

    /// Removes everything (`[DROP: ALL]`, `[DONE]`); returns what was pending.
    pub(crate) fn clear(&mut self) -> Vec<QueuedDelivery> {
        self.local_run = 0;
        std::mem::take(&mut self.items)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u64) -> MessageId {
        MessageId::from_seq(n)
    }

    fn order(q: &mut RoutingQueue, last: Option<&MessageId>) -> Vec<String> {
        std::iter::from_fn(|| q.pop_next(last))
            .map(|i| i.to)
            .collect()
    }

    #[test]
    fn p2_items_of_one_parent_run_fifo() {
        let mut q = RoutingQueue::new();
        for to in ["a", "b", "c"] {
            assert_eq!(q.push(to, &id(1), Intent::P2), Enqueued::Queued);
        }
        assert_eq!(order(&mut q, Some(&id(1))), ["a", "b", "c"]);
    }

    #[test]
    fn p1_runs_first_earliest_first() {
        let mut q = RoutingQueue::new();
        q.push("a", &id(1), Intent::P2);
        q.push("b", &id(1), Intent::P1);
        q.push("c", &id(2), Intent::P1);
        assert_eq!(order(&mut q, Some(&id(1))), ["b", "c", "a"]);
    }

    #[test]
    fn p2_before_p3_within_a_set() {
        let mut q = RoutingQueue::new();
        q.push("a", &id(1), Intent::P3);
        q.push("b", &id(1), Intent::P2);
        assert_eq!(order(&mut q, None), ["b", "a"]);
    }

    #[test]
    fn children_of_the_last_completed_message_go_first() {
        let mut q = RoutingQueue::new();
        q.push("a", &id(1), Intent::P2);
        q.push("b", &id(2), Intent::P2);
        assert_eq!(q.pop_next(Some(&id(2))).map(|i| i.to), Some("b".into()));
        assert_eq!(q.pop_next(Some(&id(2))).map(|i| i.to), Some("a".into()));
    }

    #[test]
    fn run_order_is_the_order_of_picks_after_a_message_that_routes_no_one() {
        let mut q = RoutingQueue::new();
        q.push("a", &id(1), Intent::P3);
        q.push("b", &id(2), Intent::P2);
        q.push("c", &id(1), Intent::P1);
        q.push("d", &id(3), Intent::P2);
        let shown: Vec<String> = q.run_order().iter().map(|i| i.to.clone()).collect();
        assert_eq!(shown, ["c", "b", "d", "a"]);
        // A new message (id 4) has no children in the queue: the picks follow the same order.
        assert_eq!(order(&mut q, Some(&id(4))), shown);
    }

    #[test]
    fn local_picks_are_capped_at_five_in_a_row() {
        let mut q = RoutingQueue::new();
        q.push("old", &id(1), Intent::P2);
        for n in 0..7 {
            q.push(&format!("l{n}"), &id(2), Intent::P2);
        }
        assert_eq!(
            order(&mut q, Some(&id(2))),
            ["l0", "l1", "l2", "l3", "l4", "old", "l5", "l6"]
        );
    }

    #[test]
    fn the_eleventh_item_of_a_parent_is_demoted_to_p3() {
        let mut q = RoutingQueue::new();
        for n in 0..MAX_PER_PARENT {
            assert_eq!(
                q.push(&format!("m{n}"), &id(1), Intent::P1),
                Enqueued::Queued
            );
        }
        assert_eq!(
            q.push("late", &id(1), Intent::P1),
            Enqueued::Demoted { from: Intent::P1 }
        );
        assert_eq!(q.items().last().map(|i| i.intent), Some(Intent::P3));
    }

    #[test]
    fn a_p3_item_over_the_parent_limit_is_queued_as_is() {
        let mut q = RoutingQueue::new();
        for n in 0..MAX_PER_PARENT {
            q.push(&format!("m{n}"), &id(1), Intent::P2);
        }
        assert_eq!(q.push("late", &id(1), Intent::P3), Enqueued::Queued);
    }

    #[test]
    fn the_fifty_first_item_is_refused() {
        let mut q = RoutingQueue::new();
        for n in 0..MAX_QUEUED as u64 {
            assert_eq!(q.push("a", &id(n + 1), Intent::P2), Enqueued::Queued);
        }
        assert_eq!(q.push("b", &id(999), Intent::P2), Enqueued::Full);
        assert_eq!(q.len(), MAX_QUEUED);
    }

    #[test]
    fn identical_items_are_not_queued_twice() {
        let mut q = RoutingQueue::new();
        assert_eq!(q.push("a", &id(1), Intent::P2), Enqueued::Queued);
        assert_eq!(q.push("a", &id(1), Intent::P2), Enqueued::Duplicate);
        assert_eq!(q.push("a", &id(1), Intent::P1), Enqueued::Queued);
        assert_eq!(q.push("a", &id(2), Intent::P2), Enqueued::Queued);
        assert_eq!(q.len(), 3);
    }

    #[test]
    fn a_popped_item_can_be_queued_again() {
        let mut q = RoutingQueue::new();
        q.push("a", &id(1), Intent::P2);
        q.pop_next(None);
        assert_eq!(q.push("a", &id(1), Intent::P2), Enqueued::Queued);
    }

    #[test]
    fn drop_removes_only_the_target() {
        let mut q = RoutingQueue::new();
        q.push("a", &id(1), Intent::P2);
        q.push("b", &id(1), Intent::P2);
        q.push("a", &id(2), Intent::P3);
        assert_eq!(q.remove_target("a").len(), 2);
        assert_eq!(order(&mut q, None), ["b"]);
    }

    #[test]
    fn clear_empties_and_seq_keeps_growing() {
        let mut q = RoutingQueue::new();
        q.push("a", &id(1), Intent::P2);
        assert_eq!(q.clear().len(), 1);
        assert!(q.is_empty());
        q.push("b", &id(1), Intent::P2);
        assert_eq!(q.items()[0].seq, 1);
    }
}
