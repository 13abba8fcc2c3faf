//! The page's components, one per file (docs/architecture.md §13), in a folder per pane they
//! draw, as the screen reads: the header (and the banners under it), the team, the
//! conversation, the deliveries, the inspector; and the library (the sessions popover). The
//! pieces every pane uses stand alone here: a keyed list, a virtual list's arithmetic, `When`.
//! The page's state ([`crate::state::AppState`]) and its host ([`crate::host::Host`]) come by
//! context; what a component shows that the host alone knows, or that is its own, comes as
//! props.

pub mod conversation;
pub mod cost;
pub mod deliveries;
pub mod header;
pub mod inspector;
pub mod keyed_list;
pub mod library;
pub mod team;
pub mod virtual_list;
pub mod when;
