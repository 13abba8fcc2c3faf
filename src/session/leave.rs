//! A member leaving the team from now on (`memberLeft`, docs/architecture.md §6b): the team
//! changes at the end of the log, the history does not. Their messages keep the speaker they
//! were stored with, their runs stay theirs, and what the session remembers of them
//! ([`LeftMember`]) lets a scenario or a team edit still name them on those messages.

use crate::message::Millis;
use crate::team::{Member, Team};

use super::{Session, SessionError};

/// A member who left the team since the last team change (`setTeam`, `loadScenario`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftMember {
    /// The member as the team held them (machine settings already stripped by the log).
    pub member: Member,
    /// Their place in the team when they left, so a team that names them again (a scenario of
    /// the history, a team edit) puts them back where they stood.
    pub position: usize,
    /// How many messages were stored when they left: "left the team at #`after`".
    pub after: usize,
}

impl Session {
    /// Whether `member` (an id) may leave the team now: the team must have them, no run of
    /// theirs may be in flight (its outcome would have no one to belong to), and the team
    /// without them must still be valid. The error says why and what to do instead.
    pub fn can_leave(&self, member: &str) -> Result<(), SessionError> {
        self.leaving(member).map(drop)
    }

    /// The members who left since the last team change, in the order they left.
    pub fn left_members(&self) -> &[LeftMember] {
        &self.left
    }

    /// The display name of `member` (an id): the team's member's, else that of a member who
    /// left (their messages and runs stay theirs, so the page still names them).
    pub fn display_name(&self, member: &str) -> Option<&str> {
        let left = || self.left.iter().map(|l| &l.member).find(|m| m.id == member);
        self.team()
            .and_then(|t| t.member(member))
            .or_else(left)
            .map(|m| m.display_name.as_str())
    }

    /// `team` with the members who left put back where they stood (those it does not name
    /// again): the team a scenario of this history, or a team edit that keeps it, must hold,
    /// since the history's messages name them. (The last to leave goes back first: each
    /// place was taken in the team as it was then.)
    pub fn with_left_members(&self, mut team: Team) -> Team {
        for left in self.left.iter().rev() {
            if team.member(&left.member.id).is_none() {
                let at = left.position.min(team.members.len());
                team.members.insert(at, left.member.clone());
            }
        }
        team
    }

    /// The member leaving and their place in the team, once [`Self::can_leave`]'s checks pass.
    fn leaving(&self, member: &str) -> Result<(usize, &Member), SessionError> {
        let team = self.team().ok_or(SessionError::NoTeam)?;
        let Some(position) = team.members.iter().position(|m| m.id == member) else {
            return Err(SessionError::CannotLeave(format!(
                "{member:?} is not a member of the team, so {member:?} cannot leave it"
            )));
        };
        let m = &team.members[position];
        let name = &m.display_name;
        if self.conversation.in_flight().is_some_and(|f| f.to == m.id) {
            return Err(SessionError::CannotLeave(format!(
                "{name} is running: wait for {name}'s answer or cancel the run, then remove \
                 {name} from the team"
            )));
        }
        let mut without = team.clone();
        without.members.remove(position);
        if let Err(e) = without.validate() {
            return Err(SessionError::CannotLeave(format!(
                "{name} cannot leave: the team without {name} would not be valid ({e})"
            )));
        }
        Ok((position, m))
    }

    /// Applies `memberLeft`: checked, then the conversation goes on without them.
    pub(super) fn member_left(&mut self, member: &str, at: Millis) -> Result<(), SessionError> {
        let (position, m) = self.leaving(member)?;
        let left = LeftMember {
            member: m.clone(),
            position,
            after: self.messages().len(),
        };
        self.conversation.member_left(&left.member, at);
        self.left.push(left);
        Ok(())
    }
}
