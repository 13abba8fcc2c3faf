//! The exact prompt (`prompt-text`: its text content is the bytes the agent gets) with its
//! sections coloured from the core's section ranges, and the system flag
//! (`system-flag-text`); copy and save give the exact bytes.

use leptos::prelude::*;

use crate::browser;
use crate::components::when::When;
use crate::erased::handler;
use crate::state::use_state;

/// The inspector's prompt as the view shows it: the text cut into pieces by section (each
/// with its class), the system flag and the note on what the view cannot show.
#[derive(Clone, PartialEq)]
struct Shown {
    text: String,
    /// `(class, byte range of text)`, in order, covering the whole text.
    pieces: Vec<(String, std::ops::Range<usize>)>,
    flag: Option<String>,
    hidden: Option<String>,
}

impl Shown {
    fn of(p: &agent_chatter::context::Prompt) -> Self {
        let text = &p.prompt;
        let mut pieces = Vec::new();
        let mut at = 0;
        for r in p.explain.section_ranges(text) {
            if r.range.start > at {
                pieces.push((String::new(), at..r.range.start));
            }
            pieces.push((format!("sec sec-{}", r.name), r.range.clone()));
            at = r.range.end;
        }
        if at < text.len() {
            pieces.push((String::new(), at..text.len()));
        }
        // What the agent reads but this view cannot show (tags, bidi controls, zero-width).
        let hidden = [Some(text.as_str()), p.system_flag.as_deref()]
            .into_iter()
            .flatten()
            .map(agent_chatter::text::hidden_chars)
            .fold((0, None), |(n, first), (m, f)| (n + m, first.or(f)));
        let hidden = match hidden {
            (0, _) => None,
            (n, first) => Some(format!(
                "⚠ {n} invisible or direction-changing character(s){}: the agent reads them; this view cannot show them (copy or save gives the exact bytes)",
                first.map(|(_, c)| format!(", the first U+{:04X}", c as u32)).unwrap_or_default()
            )),
        };
        Shown {
            text: text.clone(),
            pieces,
            flag: p.system_flag.clone(),
            hidden,
        }
    }
}

#[component]
pub fn PromptView() -> impl IntoView {
    let state = use_state();
    let prompt = Memo::new(move |_| {
        state.preview.with(|p| match p {
            Some(Ok(p)) => Some(Shown::of(p)),
            _ => None,
        })
    });
    // Each part its own memo: an edit re-renders only the parts it changed.
    let any = Memo::new(move |_| prompt.with(Option::is_some));
    let flag = Memo::new(move |_| prompt.with(|p| p.as_ref().and_then(|p| p.flag.clone())));
    let hidden = Memo::new(move |_| prompt.with(|p| p.as_ref().and_then(|p| p.hidden.clone())));
    let has_flag = Memo::new(move |_| flag.with(Option::is_some));
    let flag_text = move || flag.get().unwrap_or_default();
    let flag_bytes = move || flag.with(|f| f.as_ref().map_or(0, String::len));
    let bytes = move || prompt.with(|p| p.as_ref().map_or(0, |p| p.text.len()));
    // The exact prompt is written into its `<pre>` by hand, one `<span>` per piece, reusing
    // the spans already there: an edit costs the pieces it changed, not a rebuild of the view
    // (docs/architecture.md §13).
    let pre = NodeRef::<leptos::html::Pre>::new();
    let written = StoredValue::new(Vec::<(String, String)>::new());
    crate::erased::effect(move || {
        let Some(pre) = pre.get() else {
            return;
        };
        prompt.with(|p| {
            if let Some(p) = p {
                written.update_value(|written| write_pieces(&pre, p, written));
            }
        });
    });
    // A what-if prompt is saved under a name that says so, never as the real one's.
    let file_stem = move || {
        format!(
            "prompt-{}-{}{}",
            state.shown_recipient.get().unwrap_or_default(),
            state.shown_at.get().map_or(0, |a| a + 1),
            if state.shown_whatif.get().is_empty() {
                ""
            } else {
                "-whatif"
            }
        )
    };
    // The exact bytes of the prompt, or of the system flag.
    let exact_bytes = move |flag: bool| {
        prompt.with_untracked(|p| {
            p.as_ref().map(|p| {
                if flag {
                    p.flag.clone().unwrap_or_default()
                } else {
                    p.text.clone()
                }
            })
        })
    };
    let copy = move |flag: bool| {
        move |_| {
            let text = exact_bytes(flag);
            if let Some(text) = text {
                browser::copy(text, move |e| state.report(e));
            }
        }
    };
    let save = move |flag: bool| {
        move |_| {
            let text = exact_bytes(flag);
            let name = format!("{}{}.txt", file_stem(), if flag { "-system" } else { "" });
            if let Some(text) = text {
                if let Err(e) = browser::download(&name, "text/plain;charset=utf-8", &text) {
                    state.report(e);
                }
            }
        }
    };
    view! {
        <When when=any>
            // Built while there is a flag; another message or recipient changes its text only.
            <When when=has_flag>
                <div class="prompt-box">
                    <div class="prompt-head">"system flag (--append-system-prompt) · "{flag_bytes}" B"
                        <button on:click=handler(copy(true))>"copy"</button><button on:click=handler(save(true))>"save"</button></div>
                    <pre class="system-flag sec-system" data-testid="system-flag-text">{flag_text}</pre>
                </div>
            </When>
            {move || hidden.get().map(|text| view! { <p class="message-cut" data-testid="hidden-chars">{text}</p> })}
            <div class="prompt-box">
                <div class="prompt-head">"exact prompt (stdin) · "{bytes}" B"
                    <button data-testid="copy-prompt" on:click=handler(copy(false))>"copy"</button>
                    <button data-testid="save-prompt" on:click=handler(save(false))>"save"</button></div>
                // Focusable: a long prompt scrolls, and the keyboard must reach it (axe).
                <pre class="prompt" data-testid="prompt-text" tabindex="0" role="region" aria-label="exact prompt" node_ref=pre></pre>
            </div>
        </When>
    }
}

/// Makes `pre` hold `shown`'s pieces, one `<span>` each, touching only the spans whose class
/// or text changed since `written` (what was written last, kept in step).
fn write_pieces(pre: &web_sys::Element, shown: &Shown, written: &mut Vec<(String, String)>) {
    let document = pre.owner_document();
    // Another `<pre>` (the view was built again) holds nothing of what was written.
    if pre.child_element_count() as usize != written.len() {
        pre.set_text_content(None);
        written.clear();
    }
    for (i, (class, range)) in shown.pieces.iter().enumerate() {
        let text = &shown.text[range.clone()];
        let span = match pre.children().item(i as u32) {
            Some(span) => span,
            None => {
                let Some(span) = document
                    .as_ref()
                    .and_then(|d| d.create_element("span").ok())
                else {
                    return;
                };
                let _ = pre.append_child(&span);
                written.push((String::new(), String::new()));
                span
            }
        };
        let (was_class, was_text) = &mut written[i];
        if was_class != class {
            span.set_class_name(class);
            class.clone_into(was_class);
        }
        if was_text != text {
            span.set_text_content(Some(text));
            text.clone_into(was_text);
        }
    }
    while written.len() > shown.pieces.len() {
        if let Some(last) = pre.last_element_child() {
            last.remove();
        }
        written.pop();
    }
}
