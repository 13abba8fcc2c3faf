//! Scenario files and `preview` (DESIGN §11b).
