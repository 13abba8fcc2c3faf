//! The team pane (docs/architecture.md §13): the team's name, its members (one row each, with
//! how a bridge runs them and their extra sections) and the settings.

pub mod agent_status;
pub mod context_meter;
pub mod extra_sections_editor;
pub mod member_edit;
pub mod member_row;
pub mod member_status;
pub mod run_settings;
pub mod settings_form;
pub mod team_editor;
