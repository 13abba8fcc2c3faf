//! The page as a mirror of a bridge session (DESIGN §14b): when opened from the URL the bridge
//! prints (`…/#token=…`), the page connects to `/api/ws`, says hello with the token, and from
//! then on applies the facts the bridge commits, in order, to its own `Session`. It computes
//! every preview itself and checks each delivery's digest against its own ("verified"). It
//! sends only human, team, settings and loaded-history (`loadScenario`) facts; replies come
//! from the agents the bridge runs.

use std::cell::RefCell;

use agent_chatter::session::{Fact, Session};
use leptos::prelude::*;
use serde_json::{json, Value};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{MessageEvent, WebSocket};

use crate::host;
use crate::state::{AppState, Mode, SessionEntry, Verification};

thread_local! {
    static SOCKET: RefCell<Option<WebSocket>> = const { RefCell::new(None) };
    /// The launch token, to put back in the address bar when a share link replaced it.
    static TOKEN: RefCell<Option<String>> = const { RefCell::new(None) };
    /// A shared case to load into the new session the bridge is about to open.
    static PENDING_SHARE: RefCell<Option<crate::share::Shared>> = const { RefCell::new(None) };
}

/// Opens a shared case in bridge mode: in a new session of the bridge (the one shown keeps
/// its log), after asking if an agent runs.
pub fn open_shared(state: &AppState, shared: crate::share::Shared) {
    if !may_leave_session(state) {
        return;
    }
    PENDING_SHARE.with(|p| *p.borrow_mut() = Some(shared));
    if !send(json!({"v": 1, "type": "newSession"})) {
        PENDING_SHARE.with(|p| p.borrow_mut().take());
        state.report("not connected to the bridge: the shared case was not opened");
    }
}

/// Puts the launch token back in the address bar (a share link's fragment replaced it), so a
/// reload stays connected.
pub fn restore_token_in_url() {
    let Some(token) = TOKEN.with(|t| t.borrow().clone()) else {
        return;
    };
    if let Some(window) = web_sys::window() {
        let path = window.location().pathname().unwrap_or_else(|_| "/".into());
        if let Ok(history) = window.history() {
            let url = format!("{path}#token={token}");
            let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url));
        }
    }
}

/// The launch token in the page's URL fragment (`#token=…`), when opened from a bridge.
pub fn token_in_url() -> Option<String> {
    let hash = web_sys::window()?.location().hash().ok()?;
    let token = hash.strip_prefix("#token=")?;
    (!token.is_empty()).then(|| token.to_string())
}

/// Connects to the bridge that served this page.
pub fn connect(state: AppState, token: String) {
    TOKEN.with(|t| *t.borrow_mut() = Some(token.clone()));
    state.mode.set(Mode::Bridge { connected: false });
    let Some(location) = web_sys::window().map(|w| w.location()) else {
        return;
    };
    let host = location.host().unwrap_or_default();
    let socket = match WebSocket::new(&format!("ws://{host}/api/ws")) {
        Ok(socket) => socket,
        Err(_) => {
            state.report("could not open the bridge's WebSocket: the page stays in simulation");
            state.mode.set(Mode::Simulation);
            return;
        }
    };
    let hello = json!({"v": 1, "type": "hello", "token": token}).to_string();
    let on_open = {
        let socket = socket.clone();
        Closure::<dyn FnMut()>::new(move || {
            let _ = socket.send_with_str(&hello);
            state.mode.set(Mode::Bridge { connected: true });
        })
    };
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        if let Some(text) = e.data().as_string() {
            receive(&state, &text);
        }
    });
    let on_close = Closure::<dyn FnMut()>::new(move || {
        state.mode.set(Mode::Bridge { connected: false });
        state.report(
            "the bridge closed the connection: reload the page from the URL the bridge printed",
        );
    });
    socket.set_onopen(Some(on_open.as_ref().unchecked_ref()));
    socket.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    socket.set_onclose(Some(on_close.as_ref().unchecked_ref()));
    // The handlers live as long as the page.
    on_open.forget();
    on_message.forget();
    on_close.forget();
    SOCKET.with(|s| *s.borrow_mut() = Some(socket));
}

/// Sends a command frame; false when there is no open connection.
pub fn send(frame: Value) -> bool {
    SOCKET.with(|s| {
        s.borrow()
            .as_ref()
            .filter(|s| s.ready_state() == WebSocket::OPEN)
            .is_some_and(|s| s.send_with_str(&frame.to_string()).is_ok())
    })
}

/// Asks the bridge to apply `fact`; it comes back as a `fact` event once committed.
pub fn apply(state: &AppState, fact: &Fact) -> bool {
    let Ok(fact) = serde_json::to_value(fact) else {
        return false;
    };
    let sent = send(json!({"v": 1, "type": "apply", "fact": fact}));
    if !sent {
        state.report("not connected to the bridge: the message was not sent");
    }
    sent
}

/// Whether the user agrees to leave the session shown: asked only while an agent runs in it,
/// since leaving stops that agent (its delivery is made again when the session is opened).
pub fn may_leave_session(state: &AppState) -> bool {
    let running = state
        .session
        .with_untracked(|s| s.conversation().in_flight().map(|f| f.to.clone()));
    let Some(to) = running else {
        return true;
    };
    web_sys::window()
        .and_then(|w| {
            w.confirm_with_message(&format!(
                "{to} is running in this session. Leaving it stops {to}; the delivery is made \
                 again when you open this session again. Leave anyway?"
            ))
            .ok()
        })
        .unwrap_or(false)
}

/// Switches every page of the bridge to session `id`.
pub fn open_session(id: i64) -> bool {
    send(json!({"v": 1, "type": "openSession", "id": id}))
}

/// Asks the bridge to stop the running agent `to`.
pub fn cancel(to: &str) -> bool {
    send(json!({"v": 1, "type": "cancel", "to": to}))
}

fn receive(state: &AppState, text: &str) {
    let Ok(event) = serde_json::from_str::<Value>(text) else {
        return state.report("the bridge sent a frame that is not JSON");
    };
    let str_of = |key: &str| {
        event
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    match event
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
    {
        "session" => {
            state
                .bridge_session
                .set(event.get("id").and_then(Value::as_i64));
            let sent = event["sent"]
                .as_array()
                .map_or_else(Default::default, |list| {
                    list.iter()
                        .filter_map(|d| {
                            Some((
                                (
                                    d["message"].as_str()?.to_string(),
                                    d["to"].as_str()?.to_string(),
                                ),
                                d["promptSha256"].as_str()?.to_string(),
                            ))
                        })
                        .collect()
                });
            state.sent.set(sent);
            // The list may have grown (a new session): ask again.
            send(json!({"v": 1, "type": "listSessions"}));
            let facts: Result<Vec<Fact>, _> = serde_json::from_value(event["facts"].clone());
            match facts
                .map_err(|e| e.to_string())
                .and_then(|f| Session::replay(f).map_err(|e| e.to_string()))
            {
                Ok(session) => {
                    host::adopt(state, session);
                    // The new session a share link asked for: the case goes in as its fact.
                    if let Some(shared) = PENDING_SHARE.with(|p| p.borrow_mut().take()) {
                        state.recipient.set(shared.member);
                        apply(
                            state,
                            &Fact::LoadScenario {
                                scenario: Box::new(shared.scenario),
                            },
                        );
                    }
                }
                Err(e) => state.report(format!("the bridge's session does not replay here: {e}")),
            }
        }
        "fact" => {
            // Facts are applied in `seq` order (DESIGN §14b): one already held is skipped, and
            // a gap is never papered over (the bridge resends the whole log to a page that
            // fell behind; anything else is a bug worth seeing).
            let held = state.session.with_untracked(|s| s.facts().len()) as u64;
            match event.get("seq").and_then(Value::as_u64) {
                Some(seq) if seq <= held => return,
                Some(seq) if seq == held + 1 => {}
                seq => {
                    return state.report(format!(
                        "the bridge sent fact #{} while this page holds {held}: reload the page \
                         to get the whole log",
                        seq.map_or_else(|| "?".to_string(), |s| s.to_string())
                    ))
                }
            }
            match serde_json::from_value::<Fact>(event["fact"].clone()) {
                Ok(fact) => {
                    state.output.set(String::new());
                    // A fact a page caused was taken: an earlier refusal is no longer news.
                    let from_a_page = !matches!(fact, Fact::Replied { .. } | Fact::Failed { .. });
                    if host::apply_local(state, fact) && from_a_page {
                        state.error.set(None);
                    }
                }
                Err(e) => {
                    state.report(format!("the bridge sent a fact this page cannot read: {e}"))
                }
            }
        }
        "delivering" => {
            let to = str_of("to");
            state.sent.update(|sent| {
                sent.insert((str_of("message"), to.clone()), str_of("promptSha256"));
            });
            let previewed = state.due.with_untracked(|d| {
                d.as_ref()
                    .filter(|d| d.to == to)
                    .map(|d| d.prompt.sha256_hex())
            });
            state.verification.set(Some(Verification {
                to,
                sent: str_of("promptSha256"),
                previewed,
            }));
        }
        "sessions" => {
            let list = event["list"].as_array().map_or_else(Vec::new, |list| {
                list.iter()
                    .map(|s| SessionEntry {
                        id: s["id"].as_i64().unwrap_or_default(),
                        title: s["title"].as_str().unwrap_or_default().to_string(),
                        facts: s["facts"].as_i64().unwrap_or_default(),
                    })
                    .collect()
            });
            state.bridge_sessions.set(list);
        }
        "agents" => {
            let list = event["list"]
                .as_array()
                .map_or_else(Default::default, |list| {
                    list.iter()
                        .map(|a| {
                            let member = a["member"].as_str().unwrap_or_default().to_string();
                            let command = a["command"].as_str().unwrap_or("no command").to_string();
                            (member, (a["runs"].as_bool().unwrap_or(false), command))
                        })
                        .collect()
                });
            state.agent_status.set(list);
        }
        "output" => state.output.update(|o| o.push_str(&str_of("delta"))),
        "error" => state.report(format!("bridge: {}", str_of("message"))),
        _ => {}
    }
}
