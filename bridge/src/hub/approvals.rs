//! Questions of the running agent answered from outside its run (docs/architecture.md §14d): a page's
//! `answerApproval` or the chat's `/allow` reach the run through its slot, once the member,
//! the question and the option are checked.

use agent_chatter::activity::{ApprovalRequest, DecidedBy};

use super::actor::Actor;
use super::HubError;

impl Actor {
    /// See [`Hub::answer_approval`](super::Hub::answer_approval).
    pub(super) fn answer_approval(
        &self,
        to: &str,
        request: &str,
        option: &str,
        place: &str,
    ) -> Result<(), HubError> {
        let refused = |why: String| Err(HubError::Approval(why));
        let mut streamed = self.streamed.lock().unwrap_or_else(|e| e.into_inner());
        let Some(slot) = streamed.as_mut().filter(|s| s.to == to) else {
            return refused(format!(
                "{to} is not running, so it has no question to answer"
            ));
        };
        let Some(at) = slot.open.iter().position(|o| o.request.id == request) else {
            return refused(format!(
                "{to}'s question {request} is not open (already answered, timed out, or its \
                 run ended)"
            ));
        };
        if !slot.open[at].request.options.iter().any(|o| o.id == option) {
            let offered: Vec<&str> = slot.open[at]
                .request
                .options
                .iter()
                .map(|o| o.id.as_str())
                .collect();
            return refused(format!(
                "{to}'s question {request} has no option {option:?} (its options: {})",
                offered.join(", ")
            ));
        }
        let open = slot.open.remove(at);
        let by = DecidedBy::Person {
            r#where: place.to_string(),
        };
        if open.answer.send((option.to_string(), by)).is_err() {
            return refused(format!("{to}'s run ended before the answer reached it"));
        }
        Ok(())
    }

    /// See [`Hub::open_approvals`](super::Hub::open_approvals).
    pub(super) fn open_approvals(&self) -> Vec<(String, ApprovalRequest)> {
        let streamed = self.streamed.lock().unwrap_or_else(|e| e.into_inner());
        streamed
            .as_ref()
            .map(|s| {
                s.open
                    .iter()
                    .map(|o| (s.to.clone(), o.request.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }
}
