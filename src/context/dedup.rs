//! AI→AI deduplication (DESIGN §7.3, seed 000 D3).
