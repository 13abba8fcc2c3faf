//! Team configs: ours and the peer's `cli-config` 1.1/1.2 (DESIGN §11).
