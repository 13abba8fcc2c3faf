//! Facts coming in, and who sent them (docs/architecture.md §6, §19 (seed 004 REQ-2/REQ-3) and its
//! error catalogue).

use serde::{Deserialize, Serialize};

use crate::message::{MemberId, MAX_MESSAGE_BYTES};
use crate::team::{Member, Team};

/// Text a human typed.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HumanInput {
    /// Raw text, markers included; stored exactly as given.
    pub text: String,
    /// The sender's member id when the host knows it (a logged-in page user); it wins over
    /// `[FROM]` and the waiting state.
    #[serde(default)]
    pub sender: Option<MemberId>,
}

impl HumanInput {
    /// Input whose sender is resolved from `[FROM]`, the waiting state or the only human.
    pub fn text(text: impl Into<String>) -> Self {
        HumanInput {
            text: text.into(),
            sender: None,
        }
    }

    /// Input from a known member id.
    pub fn from(sender: impl Into<MemberId>, text: impl Into<String>) -> Self {
        HumanInput {
            text: text.into(),
            sender: Some(sender.into()),
        }
    }
}

/// Why an input was refused. Nothing is stored or changed when one is returned. Texts follow
/// docs/architecture.md §19 (seed 004)'s catalogue in its final, plain-text form; hosts print them
/// after `Error: `.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum InputError {
    /// A message before any team. Worded for an API (the npm `Conversation`, the core): a team
    /// is set with `setTeam`. The terminal chat prints seed 004's catalogue words instead, `No
    /// team loaded. Use /team deploy <config> first`, its users loading teams with that command.
    #[error("No team loaded. Set a team before sending messages")]
    NoTeam,
    #[error("The team has no human member. The first message must come from a human: add one to the team")]
    NoHumans,
    #[error(
        "Multiple human members detected. Please specify sender with [FROM:xxx]\nAvailable members: {}\n\nExample: [FROM:{}] Your message here",
        .humans.join(", "),
        .humans.first().map_or("name", String::as_str)
    )]
    SenderRequired { humans: Vec<String> },
    #[error("Member '{name}' not found.\nAvailable human members: {}", .humans.join(", "))]
    UnknownFrom { name: String, humans: Vec<String> },
    #[error(
        "Cannot use [FROM:{name}]. {display_name} is an AI agent.\n[FROM:xxx] is only for human members."
    )]
    FromAi {
        name: String,
        display_name: String,
        humans: Vec<String>,
    },
    /// An explicit sender is a member id (a name is not taken: ids are what a host holds); the
    /// message lists the ids, each with its name when they differ.
    #[error("Sender id '{id}' is not a member of the team; the member ids are: {}", .members.join(", "))]
    UnknownSender { id: String, members: Vec<String> },
    #[error("First message must be from a human member ({member} is an AI agent)")]
    FirstMessageFromAi { member: MemberId },
    #[error("{member} is an AI agent: its messages arrive as agent replies, not as human input")]
    AiAsHuman { member: MemberId },
    #[error("Message over the 1 MiB limit ({max} bytes), found {bytes} bytes; split it or send the content as a file")]
    TooLarge { bytes: usize, max: usize },
    #[error("{}", not_in_flight(member, expected.as_deref()))]
    NotInFlight {
        member: String,
        expected: Option<MemberId>,
    },
}

fn not_in_flight(member: &str, expected: Option<&str>) -> String {
    match expected {
        Some(e) => {
            format!("No delivery to '{member}' is in flight; the reply awaited is from '{e}'")
        }
        None => format!("No delivery to '{member}' is in flight; no agent reply is awaited"),
    }
}

/// Refuses text above [`MAX_MESSAGE_BYTES`].
pub(crate) fn check_size(text: &str) -> Result<(), InputError> {
    if text.len() > MAX_MESSAGE_BYTES {
        return Err(InputError::TooLarge {
            bytes: text.len(),
            max: MAX_MESSAGE_BYTES,
        });
    }
    Ok(())
}

/// Sender resolution, in order (docs/architecture.md §19 (seed 004 R3 §6)): explicit id →
/// `[FROM:x]` (humans only) → the human we wait for → the only human → an error listing the humans
/// with an example.
pub(crate) fn resolve_sender<'t>(
    team: &'t Team,
    explicit: Option<&str>,
    from: Option<&str>,
    waiting_for: Option<&str>,
) -> Result<&'t Member, InputError> {
    let human_names = || team.humans().map(|h| h.name.clone()).collect::<Vec<_>>();
    if let Some(id) = explicit {
        let member = team.member(id).ok_or_else(|| InputError::UnknownSender {
            id: id.to_string(),
            members: team
                .members
                .iter()
                .map(|m| {
                    if m.id == m.name {
                        m.id.clone()
                    } else {
                        format!("{} ({})", m.id, m.name)
                    }
                })
                .collect(),
        })?;
        return Ok(member);
    }
    if let Some(name) = from {
        let member = team.find(name).ok_or_else(|| InputError::UnknownFrom {
            name: name.to_string(),
            humans: human_names(),
        })?;
        if !member.is_human() {
            return Err(InputError::FromAi {
                name: name.to_string(),
                display_name: member.display_name.clone(),
                humans: human_names(),
            });
        }
        return Ok(member);
    }
    if let Some(member) = waiting_for
        .and_then(|id| team.member(id))
        .filter(|m| m.is_human())
    {
        return Ok(member);
    }
    let mut humans = team.humans();
    match (humans.next(), humans.next()) {
        (Some(only), None) => Ok(only),
        (None, _) => Err(InputError::NoHumans),
        (Some(_), Some(_)) => Err(InputError::SenderRequired {
            humans: human_names(),
        }),
    }
}
