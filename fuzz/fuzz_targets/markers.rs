//! Marker parse and strip on any text, differential: the fast scanning engine must give
//! exactly what the plain line-by-line reference (`markers::reference`) gives — the same
//! spans, line roles, parsed meaning and stripped text with its count (also read together by
//! `parse_and_strip_routing`). Besides: no panic,
//! spans in order on character boundaries, strips never longer than the input.
#![no_main]
use agent_chatter::markers::{self, reference};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let spans: Vec<_> = markers::spans(text).collect();
    let mut end = 0;
    for span in &spans {
        assert!(span.range.start >= end, "spans overlap or go back");
        assert!(text.is_char_boundary(span.range.start) && text.is_char_boundary(span.range.end));
        assert!(span.value.start >= span.range.start && span.value.end <= span.range.end);
        end = span.range.end;
    }
    assert_eq!(spans, reference::spans(text), "spans differ");
    assert_eq!(
        markers::line_spans(text).collect::<Vec<_>>(),
        reference::line_spans(text),
        "line roles differ"
    );
    assert_eq!(
        markers::parse(text),
        reference::parse(text),
        "parse differs"
    );
    let all = markers::strip_all_counted(text);
    let routing = markers::strip_routing_counted(text);
    assert!(all.0.len() <= text.len() && routing.0.len() <= text.len());
    let reference_routing = reference::strip_routing_counted(text);
    assert_eq!(
        (all.0.into_owned(), all.1),
        reference::strip_all_counted(text),
        "strip_all differs"
    );
    assert_eq!(
        (routing.0.into_owned(), routing.1),
        reference_routing,
        "strip_routing differs"
    );
    let (parsed, view) = markers::parse_and_strip_routing(text);
    assert_eq!(
        parsed,
        reference::parse(text),
        "parse_and_strip_routing: parse differs"
    );
    assert_eq!(
        view, reference_routing.0,
        "parse_and_strip_routing: view differs"
    );
});
