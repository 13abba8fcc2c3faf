//! A finished run becomes a fact of the session it was delivered in (docs/architecture.md §14c
//! "Outcomes are honest"): [`judge`] decides which, from the run and the opening in force,
//! without the store; [`Actor::finished`] keeps the output it says to keep and records the
//! fact, keeping it to write again when the disk fails.

use agent_chatter::activity::{Activity, DecidedBy, Decision, RunActivity};
use agent_chatter::message::{Millis, MAX_MESSAGE_BYTES};
use agent_chatter::protocol::Event;
use agent_chatter::session::{Fact, Failure};

use super::actor::{gone_elsewhere, Actor, Finished, Unstored};
use super::{HubError, UNSTORED_RETRY};
use crate::agents::decode::above_the_limit;
use crate::agents::run::Outcome;
use crate::clock::now;

/// What a finished run becomes.
#[derive(Debug, PartialEq)]
pub(super) enum Judged {
    /// Its session was left meanwhile: nothing is recorded (that session's log stays as it
    /// was, and the run is recorded as interrupted when it is reopened).
    Stale,
    /// This fact is recorded.
    Fact(Fact),
    /// `output` is kept in the database first; then `kept` is recorded, or `not_kept` when
    /// the output could not be kept.
    KeepOutput {
        output: Vec<u8>,
        kept: Fact,
        not_kept: Fact,
    },
}

/// The fact `finished` becomes at `at`, while `opening` is the conversation in force. A reply
/// above the core's message limit is never lost: the whole output is kept and the
/// conversation records a `failed` fact naming its size (a cut reply could mislead the next
/// agent); so is the output of a run that failed (not one the user cancelled). An empty reply
/// is no message: stored, it would hand the turn on with nothing said and no routing.
pub(super) fn judge(finished: Finished, opening: u64, at: Millis) -> Judged {
    if finished.opening != opening {
        return Judged::Stale;
    }
    let Finished {
        to,
        outcome,
        usage,
        output,
        ..
    } = finished;
    // A run that did not reply and says it cost `$0` (Claude's `result` of a failed run) has
    // counted nothing: its cost is not reported, so no view reads `$0.0000` for it.
    let mut usage = usage;
    if matches!(outcome, Outcome::Failed(..)) && usage.cost_usd.is_some_and(|c| c.dollars() == 0.0)
    {
        usage.cost_usd = None;
    }
    let judged = match outcome {
        Outcome::Replied(text) | Outcome::Incomplete { text, .. }
            if text.len() > MAX_MESSAGE_BYTES =>
        {
            let too_large = |where_: &str| {
                let size = above_the_limit(text.len() as u64);
                failed(&to, Failure::TooLarge, format!("{size}; {where_}"), at)
            };
            let kept = if output.dropped() == 0 {
                "its full output is kept in the session database (`agent-chatter outputs` prints it)"
                    .to_string()
            } else {
                output.where_kept()
            };
            Judged::KeepOutput {
                output: output.bytes(),
                kept: too_large(&kept),
                not_kept: too_large("its output could not be kept"),
            }
        }
        Outcome::Replied(text) | Outcome::Incomplete { text, .. } if text.trim().is_empty() => {
            Judged::Fact(failed(
                &to,
                Failure::EmptyReply,
                "empty reply: the agent ended without saying anything".to_string(),
                at,
            ))
        }
        Outcome::Replied(text) => Judged::Fact(Fact::replied(to.as_str(), text, at)),
        Outcome::Incomplete { text, reason } => Judged::Fact(Fact::Replied {
            to: to.clone(),
            text: text.into(),
            at,
            incomplete: Some(reason),
            usage: None,
        }),
        // What a failed agent wrote (streamed text with no final one, a half event) is kept
        // too, so nothing it said is lost; a run the user cancelled is not.
        Outcome::Failed(failure, reason) if !output.is_empty() && failure != Failure::Cancelled => {
            let kept = format!("{}; {}", reason.trim_end_matches('.'), output.where_kept());
            Judged::KeepOutput {
                output: output.bytes(),
                kept: failed(&to, failure, kept, at),
                not_kept: failed(&to, failure, reason, at),
            }
        }
        Outcome::Failed(failure, reason) => Judged::Fact(failed(&to, failure, reason, at)),
    };
    match judged {
        Judged::Fact(fact) => Judged::Fact(fact.with_usage(usage)),
        Judged::KeepOutput {
            output,
            kept,
            not_kept,
        } => Judged::KeepOutput {
            output,
            kept: kept.with_usage(usage),
            not_kept: not_kept.with_usage(usage),
        },
        Judged::Stale => Judged::Stale,
    }
}

/// A failed fact with its kind, so the other agents read one short line in words.
pub(super) fn failed(to: &str, failure: Failure, reason: String, at: Millis) -> Fact {
    Fact::Failed {
        to: to.to_string(),
        reason,
        at,
        failure: Some(failure),
        usage: None,
    }
}

impl Actor {
    /// A run ended ([`Msg::Finished`](super::actor::Msg::Finished)): it is no longer the
    /// running one, and what [`judge`] makes of it is recorded.
    pub(super) fn finished(&mut self, finished: Finished) {
        let at = now();
        let (opening, session, run, to) = (
            finished.opening,
            finished.session,
            finished.run,
            finished.to.clone(),
        );
        if self.running.as_ref().is_some_and(|r| r.run == run) {
            self.running = None;
        }
        self.keep_activity(session, run);
        self.forget_streamed(run);
        // Noted before its fact, so a page that asks on the fact finds it (keyed by the
        // fact's time, as a kept output is).
        if let Some(note) = &finished.note {
            if let Err(e) = self.store.record_run_note(session, &to, at.0 as i64, note) {
                eprintln!("bridge: the argv and model of {to}'s run were not kept: {e}");
            }
        }
        let fact = match judge(finished, self.opening, at) {
            Judged::Stale => {
                eprintln!(
                    "bridge: {to}'s run ended after its session {session} was left; not \
                     recorded (it is recorded as interrupted when that session is opened)"
                );
                return;
            }
            Judged::Fact(fact) => fact,
            Judged::KeepOutput {
                output,
                kept,
                not_kept,
            } => match self.store.keep_output(session, &to, at.0 as i64, &output) {
                Ok(()) => kept,
                Err(_) => not_kept,
            },
        };
        self.record_outcome(opening, to, fact);
    }

    /// Records `fact`, the outcome of `to`'s run in `opening`. When the disk fails, not the
    /// session, the outcome is kept and written again, and the conversation goes on from it
    /// then.
    pub(super) fn record_outcome(&mut self, opening: u64, to: String, fact: Fact) {
        match self.apply(Some(opening), fact.clone()) {
            Ok(()) => {}
            Err(HubError::NotStored(e)) if !gone_elsewhere(&e) => {
                self.publish(Event::Error {
                    message: format!(
                        "the outcome of {to}'s run could not be written to the session database \
                         ({e}); it is kept and written again every {} s, and the conversation \
                         goes on once it is stored",
                        UNSTORED_RETRY.as_secs()
                    ),
                });
                self.unstored = Some(Unstored { opening, to, fact });
                self.retry_unstored_later();
            }
            Err(e) => self.publish(Event::Error {
                message: format!("the outcome of {to}'s run was not recorded: {e}"),
            }),
        }
    }

    /// Keeps what run `run` of `session` did (an ACP agent's activity), before its outcome is
    /// recorded, so a page that reloads on the outcome finds it.
    fn keep_activity(&self, session: i64, run: u64) {
        let activity = {
            let mut streamed = self.streamed.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(s) = streamed.as_mut().filter(|s| s.run == run) {
                // Questions the run left open (it was stopped mid-question): settled by its end.
                for open in std::mem::take(&mut s.open) {
                    let decision = Decision {
                        request: open.request.id.clone(),
                        tool_call: open.request.tool_call,
                        option: None,
                        by: DecidedBy::RunEnded,
                        at: now(),
                    };
                    self.publish(Event::ApprovalSettled {
                        to: s.to.clone(),
                        request: decision.request.clone(),
                        option: None,
                        by: DecidedBy::RunEnded,
                    });
                    s.activity.push(Activity::Decision(decision));
                }
            }
            match streamed.as_mut().filter(|s| s.run == run) {
                Some(s) if !s.activity.is_empty() => Some(RunActivity {
                    message: s.message.clone(),
                    to: s.to.clone(),
                    items: std::mem::take(&mut s.activity).into_items(),
                }),
                _ => None,
            }
        };
        if let Some(activity) = activity {
            if let Err(e) = self.store.record_activity(session, &activity) {
                eprintln!(
                    "bridge: what {}'s run did (its tool calls and approvals) was not kept: {e}",
                    activity.to
                );
            }
        }
    }

    /// Forgets what run `run` streamed (it ended): a page connecting now is sent its outcome.
    fn forget_streamed(&self, run: u64) {
        let mut streamed = self.streamed.lock().unwrap_or_else(|e| e.into_inner());
        if streamed.as_ref().is_some_and(|s| s.run == run) {
            *streamed = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use agent_chatter::usage::Usage;

    use super::*;
    use crate::agents::run::{self, CANCELLED};

    const AT: Millis = Millis(7);

    fn usage() -> Usage {
        Usage {
            input_tokens: Some(1200),
            output_tokens: Some(80),
            duration_ms: Some(5400),
            ..Usage::default()
        }
    }

    /// Run 3 to max, of opening 1, ended with `outcome` and nothing kept of its stdout.
    fn finished(outcome: Outcome) -> Finished {
        Finished {
            opening: 1,
            session: 9,
            run: 3,
            to: "max".into(),
            outcome,
            usage: usage(),
            output: run::Output::default(),
            note: None,
        }
    }

    #[test]
    fn the_run_of_a_conversation_since_left_is_not_recorded() {
        let judged = judge(finished(Outcome::Replied("done".into())), 2, AT);
        assert_eq!(judged, Judged::Stale);
    }

    #[test]
    fn a_failed_runs_zero_cost_is_not_reported() {
        let zero = Usage {
            cost_usd: agent_chatter::usage::Usd::new(0.0),
            ..usage()
        };
        let failed_run = Finished {
            usage: zero,
            ..finished(Outcome::Failed(Failure::Crashed, "exit 1".into()))
        };
        let Judged::Fact(Fact::Failed { usage: got, .. }) = judge(failed_run, 1, AT) else {
            panic!("not a failure")
        };
        assert_eq!(
            got.as_deref(),
            Some(&usage()),
            "$0 of a failed run reads as not reported"
        );
        let replied = Finished {
            usage: zero,
            ..finished(Outcome::Replied("done".into()))
        };
        let Judged::Fact(Fact::Replied { usage: got, .. }) = judge(replied, 1, AT) else {
            panic!("not a reply")
        };
        assert_eq!(got.as_deref(), Some(&zero), "a reply's $0 stays");
    }

    #[test]
    fn a_reply_is_recorded_with_its_usage() {
        let judged = judge(finished(Outcome::Replied("done".into())), 1, AT);
        assert_eq!(
            judged,
            Judged::Fact(Fact::replied("max", "done", AT).with_usage(usage()))
        );
    }

    #[test]
    fn an_incomplete_reply_is_recorded_with_the_clis_reason() {
        let outcome = Outcome::Incomplete {
            text: "half".into(),
            reason: "loop detected".into(),
        };
        let Judged::Fact(Fact::Replied {
            text, incomplete, ..
        }) = judge(finished(outcome), 1, AT)
        else {
            panic!("not a reply")
        };
        assert_eq!(
            (&*text, incomplete.as_deref()),
            ("half", Some("loop detected"))
        );
    }

    #[test]
    fn an_empty_or_blank_reply_is_a_failure_not_a_message() {
        for text in ["", " \n\t"] {
            let outcomes = [
                Outcome::Replied(text.into()),
                Outcome::Incomplete {
                    text: text.into(),
                    reason: "cut".into(),
                },
            ];
            for outcome in outcomes {
                let want = failed(
                    "max",
                    Failure::EmptyReply,
                    "empty reply: the agent ended without saying anything".into(),
                    AT,
                )
                .with_usage(usage());
                assert_eq!(judge(finished(outcome), 1, AT), Judged::Fact(want));
            }
        }
    }

    #[test]
    fn a_reply_above_the_message_limit_keeps_the_output_and_fails_naming_its_size() {
        let text = "x".repeat(MAX_MESSAGE_BYTES + 1);
        let Judged::KeepOutput { kept, not_kept, .. } =
            judge(finished(Outcome::Replied(text)), 1, AT)
        else {
            panic!("the output is not kept")
        };
        let size = above_the_limit(MAX_MESSAGE_BYTES as u64 + 1);
        let reason = |fact: &Fact| match fact {
            Fact::Failed {
                reason,
                failure: Some(Failure::TooLarge),
                usage: Some(_),
                ..
            } => reason.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            reason(&kept),
            format!(
                "{size}; its full output is kept in the session database (`agent-chatter \
                 outputs` prints it)"
            )
        );
        assert_eq!(
            reason(&not_kept),
            format!("{size}; its output could not be kept")
        );
    }

    #[test]
    fn a_failure_is_recorded_with_its_kind_and_reason() {
        for (failure, reason) in [
            (Failure::Cancelled, CANCELLED),
            (Failure::Timeout, "timed out after 30 s"),
        ] {
            let judged = judge(
                finished(Outcome::Failed(failure, reason.to_string())),
                1,
                AT,
            );
            let want = failed("max", failure, reason.to_string(), AT).with_usage(usage());
            assert_eq!(judged, Judged::Fact(want));
        }
    }
}
