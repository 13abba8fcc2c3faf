//! History window (DESIGN §7.1, seed 002 pin-first).
