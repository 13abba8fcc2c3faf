//! The library (docs/architecture.md §13): the sessions a user keeps, as the header's
//! "sessions" popover shows them — switch, search, rename, delete.

pub mod sessions_menu;
