//! One component per file (DESIGN §13); each reads the shared [`crate::state::AppState`].

pub mod composer;
pub mod diff_view;
pub mod due_agent;
pub mod error_banner;
pub mod fate_list;
pub mod files_menu;
pub mod header;
pub mod inspector;
pub mod marked_text;
pub mod member_row;
pub mod notices;
pub mod prompt_view;
pub mod section_bars;
pub mod sessions_menu;
pub mod settings_form;
pub mod share_link;
pub mod side_by_side;
pub mod team_editor;
pub mod timeline;
pub mod timeline_row;
pub mod whatif_panel;
