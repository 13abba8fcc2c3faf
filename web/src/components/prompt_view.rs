//! The exact prompt (`prompt-text`: its text content is the bytes the agent gets) with its
//! sections coloured from the core's section ranges, and the system flag
//! (`system-flag-text`); copy and save give the exact bytes.

use leptos::prelude::*;

use crate::browser;
use crate::erased::handler;
use crate::state::use_state;

#[component]
pub fn PromptView() -> impl IntoView {
    let state = use_state();
    let prompt = Memo::new(move |_| {
        state.preview.with(|p| match p {
            Some(Ok(p)) => Some((p.prompt.clone(), p.system_flag.clone(), p.explain.clone())),
            _ => None,
        })
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
            p.as_ref().map(|(prompt, f, _)| {
                if flag {
                    f.clone().unwrap_or_default()
                } else {
                    prompt.clone()
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
        {move || prompt.get().map(|(text, flag, explain)| {
            let ranges = explain.section_ranges(&text);
            let mut pieces = Vec::new();
            let mut at = 0;
            for r in &ranges {
                if r.range.start > at {
                    pieces.push(view! { <span>{text[at..r.range.start].to_string()}</span> }.into_any());
                }
                pieces.push(view! { <span class=format!("sec sec-{}", r.name)>{text[r.range.clone()].to_string()}</span> }.into_any());
                at = r.range.end;
            }
            if at < text.len() {
                pieces.push(view! { <span>{text[at..].to_string()}</span> }.into_any());
            }
            // What the agent reads but this view cannot show (tags, bidi controls, zero-width).
            let hidden = [Some(text.as_str()), flag.as_deref()]
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
            view! {
                {flag.map(|flag| view! {
                    <div class="prompt-box">
                        <div class="prompt-head">"system flag (--append-system-prompt) · "{flag.len()}" B"
                            <button on:click=handler(copy(true))>"copy"</button><button on:click=handler(save(true))>"save"</button></div>
                        <pre class="system-flag sec-system" data-testid="system-flag-text">{flag}</pre>
                    </div>
                })}
                {hidden.map(|text| view! { <p class="message-cut" data-testid="hidden-chars">{text}</p> })}
                <div class="prompt-box">
                    <div class="prompt-head">"exact prompt (stdin) · "{text.len()}" B"
                        <button data-testid="copy-prompt" on:click=handler(copy(false))>"copy"</button>
                        <button data-testid="save-prompt" on:click=handler(save(false))>"save"</button></div>
                    <pre class="prompt" data-testid="prompt-text">{pieces}</pre>
                </div>
            }
        })}
    }
}
