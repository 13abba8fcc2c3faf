//! The routing state beyond the messages, so a host can persist it beside a snapshot and
//! resume after a restart with nothing lost (docs/architecture.md §14: "a killed bridge resumes the
//! session").

use serde::{Deserialize, Serialize};

use super::queue::{RoutingQueue, MAX_QUEUED};
use super::{InFlight, Status};
use crate::context::Store;
use crate::message::{MemberId, MessageId};
use crate::team::Team;

/// Everything [`Conversation`](super::Conversation) holds besides the team and the store.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RoutingState {
    pub queue: RoutingQueue,
    pub status: Status,
    pub waiting_for: Option<MemberId>,
    pub in_flight: Option<InFlight>,
    /// `[DONE]` was said while the delivery in flight ran: its reply will be stored, not routed.
    pub in_flight_after_done: bool,
    pub last_completed: Option<MessageId>,
    pub rounds: usize,
}

/// Why a routing state does not fit the team and store it is resumed with. Names the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[error("{path}: {problem}")]
pub struct ResumeError {
    /// Where, e.g. `queue[3].to`.
    pub path: String,
    /// What is wrong, e.g. `'zed' is not a member of the team`.
    pub problem: String,
}

fn invalid(path: impl Into<String>, problem: impl Into<String>) -> ResumeError {
    ResumeError {
        path: path.into(),
        problem: problem.into(),
    }
}

impl RoutingState {
    /// Checks every reference against `team` and `store`, and that the status agrees with the
    /// rest, so a resumed conversation can never reach a state the machine cannot leave.
    pub(crate) fn validate(&self, team: &Team, store: &Store) -> Result<(), ResumeError> {
        let message = |path: &str, id: &MessageId| {
            store
                .get(id)
                .map(|_| ())
                .ok_or_else(|| invalid(path, format!("message {id} is not in the conversation")))
        };
        let member = |path: &str, id: &str| {
            team.member(id)
                .ok_or_else(|| invalid(path, format!("'{id}' is not a member of the team")))
        };
        if self.queue.len() > MAX_QUEUED {
            return Err(invalid(
                "queue",
                format!(
                    "{} items, above the limit of {MAX_QUEUED}",
                    self.queue.len()
                ),
            ));
        }
        for (i, item) in self.queue.items().iter().enumerate() {
            member(&format!("queue[{i}].to"), &item.to)?;
            message(&format!("queue[{i}].parent"), &item.parent)?;
        }
        if let Some(id) = &self.waiting_for {
            if !member("waitingFor", id)?.is_human() {
                return Err(invalid(
                    "waitingFor",
                    format!("'{id}' is an AI agent, not a human"),
                ));
            }
        }
        if let Some(flight) = &self.in_flight {
            if !member("inFlight.to", &flight.to)?.is_ai() {
                return Err(invalid(
                    "inFlight.to",
                    format!("'{}' is a human, not an AI agent", flight.to),
                ));
            }
            message("inFlight.message", &flight.message)?;
            message("inFlight.parent", &flight.parent)?;
        }
        if let Some(id) = &self.last_completed {
            message("lastCompleted", id)?;
        }
        let consistent = match self.status {
            Status::Idle => store.is_empty() && self.in_flight.is_none() && self.queue.is_empty(),
            Status::Running => self.in_flight.is_some() && self.waiting_for.is_none(),
            Status::AwaitingHuman => self.in_flight.is_none() && self.waiting_for.is_some(),
            Status::Completed => self.waiting_for.is_none(),
        };
        if !consistent {
            return Err(invalid(
                "status",
                format!(
                    "{:?} contradicts inFlight {}, waitingFor {}, {} queued, {} messages",
                    self.status,
                    if self.in_flight.is_some() {
                        "set"
                    } else {
                        "empty"
                    },
                    if self.waiting_for.is_some() {
                        "set"
                    } else {
                        "empty"
                    },
                    self.queue.len(),
                    store.len()
                ),
            ));
        }
        Ok(())
    }
}
