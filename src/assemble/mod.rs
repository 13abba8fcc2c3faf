//! Per-agent prompt formats (DESIGN §8), built as data and rendered once.
