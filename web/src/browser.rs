//! The few browser services the page needs: the clock, download a file, copy text, read a
//! chosen file.

use agent_chatter::message::Millis;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// The wall clock in milliseconds (the core never reads it: time comes in with each fact).
pub fn now() -> Millis {
    Millis(js_sys::Date::now() as u64)
}

/// Saves `text` as a file named `name` (exact bytes, UTF-8).
pub fn download(name: &str, mime: &str, text: &str) -> Result<(), String> {
    let fail = |what: &str| format!("could not save {name}: {what}");
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options)
        .map_err(|_| fail("the browser refused to build the file"))?;
    let url =
        web_sys::Url::create_object_url_with_blob(&blob).map_err(|_| fail("no object URL"))?;
    let document = web_sys::window()
        .and_then(|w| w.document())
        .ok_or_else(|| fail("no document"))?;
    let anchor: web_sys::HtmlAnchorElement = document
        .create_element("a")
        .map_err(|_| fail("no link element"))?
        .unchecked_into();
    anchor.set_href(&url);
    anchor.set_download(name);
    anchor.click();
    let _ = web_sys::Url::revoke_object_url(&url);
    Ok(())
}

/// Copies `text` to the clipboard (asynchronously; errors are reported to `on_error`).
pub fn copy(text: String, on_error: impl FnOnce(String) + 'static) {
    copy_then(text, move |done| {
        if let Err(e) = done {
            on_error(format!("{e}; use save instead"));
        }
    });
}

/// Copies `text` to the clipboard and calls `done` once the browser wrote it, or refused:
/// a confirmation shown before then could be a false one.
pub fn copy_then(text: String, done: impl FnOnce(Result<(), String>) + 'static) {
    let Some(window) = web_sys::window() else {
        return done(Err("no window to copy from".to_string()));
    };
    let promise = window.navigator().clipboard().write_text(&text);
    leptos::task::spawn_local(async move {
        let written = JsFuture::from(promise).await;
        done(
            written
                .map(|_| ())
                .map_err(|_| "the browser refused clipboard access".to_string()),
        );
    });
}

/// The text of the first file chosen in `input`, with its name; `None` when none was chosen.
pub async fn read_chosen_file(
    input: &web_sys::HtmlInputElement,
) -> Option<Result<(String, String), String>> {
    let file = input.files()?.get(0)?;
    let name = file.name();
    let text = JsFuture::from(file.text()).await;
    // Let the same file be chosen again after it is fixed.
    input.set_value("");
    Some(match text.ok().and_then(|t| t.as_string()) {
        Some(text) => Ok((name, text)),
        None => Err(format!("{name}: the file could not be read as text")),
    })
}

/// Milliseconds since the page started (performance marks for the e2e timing).
pub fn mark(name: &str) {
    if let Some(performance) = web_sys::window().and_then(|w| w.performance()) {
        let _ = performance.mark(name);
    }
}

/// Asks the user `question` (the browser's confirm dialog); `true` when there is no window to
/// ask in.
pub fn confirm(question: &str) -> bool {
    web_sys::window().is_none_or(|w| w.confirm_with_message(question).unwrap_or(true))
}

/// Sets the tab's title.
pub fn set_title(title: &str) {
    if let Some(document) = web_sys::window().and_then(|w| w.document()) {
        if document.title() != title {
            document.set_title(title);
        }
    }
}

/// Whether the page's tab is hidden (another tab in front, the window minimised).
pub fn hidden() -> bool {
    web_sys::window()
        .and_then(|w| w.document())
        .is_some_and(|d| d.hidden())
}

/// Whether this browser has notifications at all.
pub fn notifications_supported() -> bool {
    web_sys::window().is_some_and(|w| {
        js_sys::Reflect::has(&w, &JsValue::from_str("Notification")).unwrap_or(false)
    })
}

/// Whether the user let this page show notifications.
pub fn notifications_granted() -> bool {
    notifications_supported()
        && web_sys::Notification::permission() == web_sys::NotificationPermission::Granted
}

/// Asks the user to let this page show notifications (only ever on a click of theirs);
/// `on_answer` gets whether they did.
pub fn ask_for_notifications(on_answer: impl FnOnce(bool) + 'static) {
    if !notifications_supported() {
        return on_answer(false);
    }
    if notifications_granted() {
        return on_answer(true);
    }
    let Ok(promise) = web_sys::Notification::request_permission() else {
        return on_answer(false);
    };
    leptos::task::spawn_local(async move {
        let answer = JsFuture::from(promise)
            .await
            .ok()
            .and_then(|a| a.as_string());
        on_answer(answer.as_deref() == Some("granted"));
    });
}

/// Shows a notification `title` with `body`, when the user allowed them.
pub fn notify(title: &str, body: &str) {
    if !notifications_granted() {
        return;
    }
    let options = web_sys::NotificationOptions::new();
    options.set_body(body);
    options.set_tag("agent-chatter");
    let _ = web_sys::Notification::new_with_options(title, &options);
}
