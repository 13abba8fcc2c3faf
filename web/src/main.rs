//! The prompt inspector (docs/architecture.md §13): mounts [`app::App`]; everything else lives in
//! the modules.

mod app;
mod attention;
mod browser;
mod components;
mod compression;
mod erased;
mod files;
mod host;
mod library;
mod output;
mod patch;
mod share;
mod shared_case;
mod state;
mod status;
mod storage;

fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(app::App);
}
