//! One component per file (docs/architecture.md §13). The page's state
//! ([`crate::state::AppState`]) and its host ([`crate::host::Host`]) come by context; what a
//! component shows that the host alone knows, or that is its own, comes as props.

pub mod composer;
pub mod conversation_view;
pub mod deliveries;
pub mod delivery_run;
pub mod diff_view;
pub mod due_agent;
pub mod error_banner;
pub mod extra_sections;
pub mod extra_sections_editor;
pub mod fate_list;
pub mod files_menu;
pub mod header;
pub mod help;
pub mod inspector;
pub mod keyed_list;
pub mod marked_text;
pub mod member_edit;
pub mod member_row;
pub mod member_status;
pub mod notices;
pub mod notify_toggle;
pub mod popover;
pub mod prompt_view;
pub mod reply_controls;
pub mod retry_failed;
pub mod run_settings;
pub mod running_agent;
pub mod running_mark;
pub mod section_bars;
pub mod sessions_menu;
pub mod settings_form;
pub mod share_link;
pub mod shared_banner;
pub mod side_by_side;
pub mod team_editor;
pub mod timeline;
pub mod timeline_row;
pub mod usage_total;
pub mod whatif_panel;
pub mod when;
