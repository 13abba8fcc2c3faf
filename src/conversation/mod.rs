//! The conversation: a sans-IO routing state machine (DESIGN §6).
