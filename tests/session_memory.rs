//! What a session keeps in memory (docs/architecture.md §14, "Memory"): a message's text once,
//! shared by its fact and the message it became, its speaker shared by every message of that
//! member, and a `setTeam` fact's team shared with the conversation; so a short message costs
//! its text plus a small fixed part. Counted with a counting allocator (this file's binary).

use std::sync::Arc;

use agent_chatter::config::load_team;
use agent_chatter::conversation::Action;
use agent_chatter::message::Millis;
use agent_chatter::session::{Fact, Session};
use agent_chatter::team::Team;

#[path = "support/counting_alloc.rs"]
mod counting_alloc;

use counting_alloc::live;

fn team(instruction: &str) -> Team {
    load_team(
        &serde_json::json!({"name": "Crew", "members": [
        {"name": "kailai", "displayName": "Kailai Chen", "kind": "human"},
        {"name": "bob", "kind": "human"},
        {"name": "max", "kind": "ai", "agentType": "claude", "systemInstruction": instruction}]})
        .to_string(),
    )
    .expect("valid team")
}

fn human(i: usize) -> Fact {
    Fact::Human {
        text: format!("Note {i:05}: the build is green and the docs are updated.").into(),
        sender: Some("kailai".into()),
        at: Millis(i as u64),
    }
}

/// The only test of this binary, so nothing else allocates while it counts.
#[test]
fn a_session_holds_each_text_and_team_once() {
    // The message a fact became holds the fact's text, not a copy.
    let mut session = Session::new();
    session.apply(&Fact::set_team(team("You plan."))).unwrap();
    session.apply(&human(0)).unwrap();
    session
        .apply(&Fact::human(
            "[FROM: bob] over to you [NEXT: max]",
            Millis(1),
        ))
        .unwrap();
    while let Some(action) = session.poll_action() {
        if let Action::Deliver(d) = action {
            session
                .apply(&Fact::replied(&d.to, "Planned. [NEXT: kailai]", Millis(2)))
                .unwrap();
        }
    }
    let texts: Vec<*const u8> = session
        .facts()
        .iter()
        .filter_map(|f| match f {
            Fact::Human { text, .. } | Fact::Replied { text, .. } => Some(text.as_ptr()),
            _ => None,
        })
        .collect();
    let contents: Vec<*const u8> = session
        .messages()
        .iter()
        .map(|m| m.content.as_ptr())
        .collect();
    assert_eq!(contents.len(), 3);
    assert_eq!(contents, texts, "each message holds its fact's text");

    // Every message of a member holds that member's one speaker.
    session.apply(&human(3)).unwrap();
    let kailai: Vec<_> = session
        .messages()
        .iter()
        .filter(|m| m.speaker.id == "kailai")
        .collect();
    assert_eq!(kailai.len(), 2);
    assert!(Arc::ptr_eq(&kailai[0].speaker, &kailai[1].speaker));

    // The conversation holds the setTeam fact's team.
    let big = "x".repeat(1 << 20);
    let before = live();
    let mut session = Session::new();
    session.apply(&Fact::set_team(team(&big))).unwrap();
    let Fact::SetTeam { team: logged, .. } = &session.facts()[0] else {
        panic!("the first fact is the team");
    };
    assert!(std::ptr::eq(session.team().unwrap(), &**logged));
    let held = live() - before;
    assert!(
        held < big.len() + 64 * 1024,
        "a team with a 1 MiB instruction holds {held} bytes: more than one copy"
    );

    // A short human message (57 bytes of text) costs its text and a fixed part.
    session.apply(&human(0)).unwrap();
    let n = 2_000;
    let before = live();
    for i in 1..=n {
        session.apply(&human(i)).unwrap();
        while session.poll_action().is_some() {}
    }
    let per_message = (live() - before) / n;
    // The fact (80 B) and its text (16 B of counts + 57 B), its sender's id (6 B), the
    // message (160 B) and its id (`msg-N`, 9 B), its prompt view (40 B): 368 B, and the spare
    // room of the vectors that hold them (they grow by doubling): 372 B here. A second copy
    // of the text would make it 437 B, the speaker's three strings per message 467 B.
    assert!(
        per_message < 420,
        "a short message holds {per_message} bytes of the heap"
    );
}
