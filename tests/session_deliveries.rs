//! The session's deliveries (docs/architecture.md §6b, §13 *deliveries*): every prompt it handed
//! an agent, in the order it handed them, which the page lists one row each.

use agent_chatter::message::Millis;
use agent_chatter::session::{Fact, Session};

fn drain(s: &mut Session) {
    while s.poll_action().is_some() {}
}

#[test]
fn every_delivery_is_listed_in_the_order_it_was_made_with_its_message_and_recipient() {
    let mut s = Session::new();
    s.apply(&Fact::set_team(agent_chatter::demo::team()))
        .unwrap();
    assert!(s.deliveries().is_empty(), "no message, no delivery");
    s.apply(&Fact::human(
        "[FROM: kailai] plan it [NEXT: max]",
        Millis(1),
    ))
    .unwrap();
    drain(&mut s);
    assert_eq!(s.deliveries(), [(0, "max")], "max is handed message #1");
    s.apply(&Fact::replied("max", "done [NEXT: sarah]", Millis(2)))
        .unwrap();
    drain(&mut s);
    s.apply(&Fact::failed("sarah", "codex exited with 1", Millis(3)))
        .unwrap();
    drain(&mut s);
    let listed = s.deliveries();
    assert_eq!(&listed[..2], [(0, "max"), (1, "sarah")]);
    assert_eq!(s.runs().len(), 2, "each of the two ended in a run");
    assert_eq!(s.runs()[1].failed.as_deref(), Some("codex exited with 1"));
}

#[test]
fn a_new_team_starts_a_new_list() {
    let mut s = Session::new();
    s.apply(&Fact::set_team(agent_chatter::demo::team()))
        .unwrap();
    s.apply(&Fact::human("[FROM: kailai] go [NEXT: max]", Millis(1)))
        .unwrap();
    drain(&mut s);
    s.apply(&Fact::set_team(agent_chatter::demo::team()))
        .unwrap();
    assert!(s.deliveries().is_empty());
}
