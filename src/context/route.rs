//! Route context for the `parent` delivery policy (DESIGN §7.4).
