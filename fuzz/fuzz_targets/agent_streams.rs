//! The agent stream decoders: any bytes, split at any positions, give the same deltas and the
//! same verdict as the whole stream in one chunk.
#![no_main]
use agent_chatter_bridge::agents::decode::Decoder;
use agent_chatter_bridge::agents::AgentType;
use libfuzzer_sys::fuzz_target;

fn run(kind: AgentType, chunks: &[&[u8]]) -> (String, String) {
    let mut d = Decoder::new(kind);
    let mut deltas = String::new();
    for c in chunks {
        deltas.extend(d.push(c));
    }
    let (last, verdict) = d.finish();
    deltas.extend(last);
    (deltas, format!("{verdict:?}"))
}

fuzz_target!(|data: &[u8]| {
    let Some((&cuts, bytes)) = data.split_first() else {
        return;
    };
    // Split points derived from the input: every `cuts`-th byte, at least 1.
    let step = usize::from(cuts % 17) + 1;
    let chunks: Vec<&[u8]> = bytes.chunks(step).collect();
    for kind in [
        AgentType::Claude,
        AgentType::Codex,
        AgentType::Gemini,
        AgentType::Command,
    ] {
        assert_eq!(
            run(kind, &[bytes]),
            run(kind, &chunks),
            "{kind:?}: split changed the result"
        );
    }
});
