//! The conversation pane (docs/architecture.md §13): the conversation's head, its messages
//! (virtualised) and routing status, the running agent or the one due, notices, retrying a
//! failed run, and the composer.

pub mod approval_panel;
pub mod composer;
pub mod conversation_view;
pub mod due_agent;
pub mod marked_text;
pub mod message_list;
pub mod notices;
pub mod reply_controls;
pub mod retry_failed;
pub mod routing_status;
pub mod running_agent;
pub mod running_mark;
pub mod timeline;
pub mod timeline_head;
pub mod timeline_row;
