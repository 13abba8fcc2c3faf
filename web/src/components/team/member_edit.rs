//! [`MemberEdit`]: a change to one member of the team, which the team editor's rows and their
//! extra sections hand to the team editor (docs/architecture.md §13).

use agent_chatter::team::Member;

/// A change to one member, applied to a copy of the team in use.
pub type MemberEdit = Box<dyn FnOnce(&mut Member)>;
