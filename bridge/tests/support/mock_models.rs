//! A loopback mock of the three model APIs the real agent CLIs call (docs/agents.md, 17.6,
//! driving the CLIs offline): Anthropic Messages (`POST /v1/messages`, SSE or JSON), OpenAI Responses
//! (`POST /v1/responses`, SSE) and Gemini (`POST /v1beta/models/<model>:streamGenerateContent
//! ?alt=sse`, and `:generateContent` for the CLI's own side calls such as the model router).
//!
//! Every request is recorded with its JSON body. Each API's *main* requests (the ones that
//! carry the conversation: Claude's streamed requests with tools, every Codex request but those
//! asking for JSON output (the session title), Gemini's streamed ones) get the [`Answer`] scripted for that API; side requests get a short, valid
//! answer of their own. [`Answer::ToolThenText`] makes the model call a tool, in each API's
//! shape, and answer text once the tool's result comes back (docs/acp-adapters.md). The server runs on a runtime of its own, so a test may be sync or
//! async, and it stops when the mock is dropped.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{header, Method, StatusCode, Uri};
use axum::response::Response;
use serde_json::{json, Value};

/// The three APIs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    Claude,
    Codex,
    Gemini,
}

/// What an API answers its main requests with.
#[derive(Clone, Debug)]
pub enum Answer {
    /// This text, streamed in a few chunks (at most 16 KiB each), with [`usage`].
    Text(String),
    /// This HTTP status, with an error body in the API's own shape.
    Status(u16),
    /// No answer at all: the request stays open until the mock stops.
    Hang,
    /// A well-formed, finished stream with no text in it.
    Empty,
    /// A main request whose conversation ends with a tool's result (allowed, failed or
    /// refused alike) gets `text` as [`Answer::Text`] does; any other main request gets a call
    /// of `tool`, with [`usage`].
    ToolThenText { tool: Tool, text: String },
}

/// A tool call the mock model makes, named and shaped for the tools each request offers
/// (a name `X` also matches an MCP-style `mcp__server__X`).
#[derive(Clone, Debug)]
pub enum Tool {
    /// Create `path` holding `content`: Claude `Write {file_path, content}`, Codex
    /// `apply_patch` (an `*** Add File` patch), Gemini `write_file {file_path, content}`.
    Write { path: String, content: String },
    /// Read `path`: Claude `Read {file_path}`, Gemini `read_file {file_path}`, Codex (which
    /// has no read tool) the shell command `cat <path>`.
    Read { path: String },
    /// Run `command`: Claude `Bash {command}`, Gemini `run_shell_command {command}`, Codex
    /// `exec_command {cmd}` (or `shell {command: [bash, -lc, …]}` where that is offered).
    Shell { command: String },
}

/// One recorded request.
#[derive(Clone, Debug)]
pub struct Request {
    /// `None` for a path no API serves (answered 404).
    pub api: Option<Api>,
    pub method: String,
    /// Path and query, as sent.
    pub uri: String,
    /// The body as JSON (a non-JSON body as one JSON string).
    pub body: Value,
    /// Whether it carried the conversation (and so got the scripted answer).
    pub main: bool,
}

/// The usage each API reports with a [`Answer::Text`] (in its own shape), so tests can check
/// what the bridge records.
pub fn usage(api: Api) -> Value {
    match api {
        Api::Claude => json!({"input_tokens": 1201, "cache_creation_input_tokens": 11,
            "cache_read_input_tokens": 301, "output_tokens": 41}),
        Api::Codex => json!({"input_tokens": 1202, "input_tokens_details": {"cached_tokens": 302},
            "output_tokens": 42, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 1244}),
        Api::Gemini => json!({"promptTokenCount": 1203, "cachedContentTokenCount": 303,
            "candidatesTokenCount": 43, "totalTokenCount": 1246}),
    }
}

#[derive(Default)]
struct Script {
    claude: Option<Answer>,
    codex: Option<Answer>,
    gemini: Option<Answer>,
    requests: Vec<Request>,
}

impl Script {
    fn answer(&self, api: Api) -> Answer {
        let answer = match api {
            Api::Claude => &self.claude,
            Api::Codex => &self.codex,
            Api::Gemini => &self.gemini,
        };
        answer
            .clone()
            .unwrap_or_else(|| Answer::Text(format!("{api:?} (mock) has nothing to say.")))
    }
}

type Shared = Arc<Mutex<Script>>;

/// The running mock.
pub struct MockModels {
    pub port: u16,
    script: Shared,
    runtime: Option<tokio::runtime::Runtime>,
}

impl MockModels {
    /// Starts the mock on a free loopback port.
    pub fn start() -> MockModels {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let script: Shared = Arc::default();
        let app = axum::Router::new()
            .fallback(handle)
            .layer(axum::extract::DefaultBodyLimit::disable())
            .with_state(script.clone());
        // Bound here, served there: `start` may be called from inside another runtime.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        runtime.spawn(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let _ = axum::serve(listener, app).await;
        });
        MockModels {
            port,
            script,
            runtime: Some(runtime),
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// What `api` answers its main requests with from now on.
    pub fn answer(&self, api: Api, answer: Answer) {
        let mut script = self.script.lock().unwrap();
        match api {
            Api::Claude => script.claude = Some(answer),
            Api::Codex => script.codex = Some(answer),
            Api::Gemini => script.gemini = Some(answer),
        }
    }

    /// Every request so far, in order of arrival.
    pub fn requests(&self) -> Vec<Request> {
        self.script.lock().unwrap().requests.clone()
    }

    /// The main requests `api` received so far.
    pub fn main_requests(&self, api: Api) -> Vec<Request> {
        self.requests()
            .into_iter()
            .filter(|r| r.main && r.api == Some(api))
            .collect()
    }

    /// Waits (up to `within`) until `api` has received a main request; returns the first.
    pub fn wait_for_main(&self, api: Api, within: Duration) -> Option<Request> {
        let deadline = Instant::now() + within;
        loop {
            if let Some(first) = self.main_requests(api).into_iter().next() {
                return Some(first);
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// One line per request (method, path, API, main), for failure messages.
    pub fn summary(&self) -> String {
        self.requests()
            .iter()
            .map(|r| format!("{} {} {:?} main={}", r.method, r.uri, r.api, r.main))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for MockModels {
    fn drop(&mut self) {
        // Requests left hanging are dropped with the runtime; allowed inside async tests too.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// The texts of every user turn of a main request, in order: Claude's `messages[role=user]`
/// text blocks, Codex's `input[role=user]` `input_text` parts, Gemini's `contents[role=user]`
/// text parts.
pub fn user_texts(request: &Request) -> Vec<String> {
    let body = &request.body;
    let mut texts = Vec::new();
    let mut push_blocks = |content: &Value, kinds: &[&str]| match content {
        Value::String(s) => texts.push(s.clone()),
        Value::Array(blocks) => {
            for block in blocks {
                let kind = block["type"].as_str().unwrap_or("text");
                if kinds.contains(&kind) {
                    if let Some(text) = block["text"].as_str() {
                        texts.push(text.to_string());
                    }
                }
            }
        }
        _ => {}
    };
    match request.api {
        Some(Api::Claude) => {
            for m in body["messages"].as_array().into_iter().flatten() {
                if m["role"] == "user" {
                    push_blocks(&m["content"], &["text"]);
                }
            }
        }
        Some(Api::Codex) => {
            for item in body["input"].as_array().into_iter().flatten() {
                if item["role"] == "user" {
                    push_blocks(&item["content"], &["input_text"]);
                }
            }
        }
        Some(Api::Gemini) => {
            for c in body["contents"].as_array().into_iter().flatten() {
                if c["role"] == "user" {
                    push_blocks(&c["parts"], &["text"]);
                }
            }
        }
        None => {}
    }
    texts
}

/// Claude's `system` field as one text (its text blocks joined with nothing between them).
pub fn claude_system(request: &Request) -> String {
    match &request.body["system"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect(),
        _ => String::new(),
    }
}

async fn handle(State(script): State<Shared>, method: Method, uri: Uri, body: Bytes) -> Response {
    let path = uri.path().to_string();
    let body: Value = serde_json::from_slice(&body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()));
    let api = if method != Method::POST {
        None
    } else if path == "/v1/messages" {
        Some(Api::Claude)
    } else if path == "/v1/responses" {
        Some(Api::Codex)
    } else if path.starts_with("/v1beta/models/") {
        Some(Api::Gemini)
    } else {
        None
    };
    let main = match api {
        // Claude Code's side calls (titles, quota probes, …) carry no tools and may not stream.
        Some(Api::Claude) => {
            body["stream"] == true && body["tools"].as_array().is_some_and(|t| !t.is_empty())
        }
        // codex-acp asks for a session title with `text.format` a JSON schema.
        Some(Api::Codex) => request_schema(Api::Codex, &body).is_none(),
        Some(Api::Gemini) => path.ends_with(":streamGenerateContent"),
        None => false,
    };
    let answer = {
        let mut script = script.lock().unwrap();
        script.requests.push(Request {
            api,
            method: method.to_string(),
            uri: uri.to_string(),
            body: body.clone(),
            main,
        });
        api.map(|api| script.answer(api))
    };
    let Some(api) = api else {
        return plain(StatusCode::NOT_FOUND, "application/json", "{}".to_string());
    };
    let answer = if main {
        answer.unwrap()
    } else {
        Answer::Text(side_text(api, &body))
    };
    match answer {
        Answer::Hang => {
            std::future::pending::<()>().await;
            unreachable!()
        }
        Answer::Status(code) => {
            let status = StatusCode::from_u16(code).unwrap();
            plain(status, "application/json", error_body(api, code))
        }
        Answer::Text(text) => reply(api, &body, main, Some(&text)),
        Answer::Empty => reply(api, &body, main, None),
        Answer::ToolThenText { text, .. } if ends_with_tool_result(api, &body) => {
            reply(api, &body, main, Some(&text))
        }
        Answer::ToolThenText { tool, .. } => tool_call(api, &body, &tool),
    }
}

/// Whether the conversation of a main request ends with a tool's result: Claude's last
/// message holds a `tool_result` block, Codex's input has a `*_output` item after its last
/// user message, Gemini's last content holds a `functionResponse` part.
fn ends_with_tool_result(api: Api, request: &Value) -> bool {
    let last = |key: &str| request[key].as_array().and_then(|a| a.last()).cloned();
    match api {
        Api::Claude => last("messages").is_some_and(|m| {
            m["content"]
                .as_array()
                .is_some_and(|c| c.iter().any(|b| b["type"] == "tool_result"))
        }),
        Api::Codex => {
            let items = request["input"].as_array().cloned().unwrap_or_default();
            let position = |f: &dyn Fn(&Value) -> bool| items.iter().rposition(f);
            let output = position(&|i| i["type"].as_str().is_some_and(|t| t.ends_with("_output")));
            let user = position(&|i| i["role"] == "user");
            output.is_some_and(|o| user.is_none_or(|u| o > u))
        }
        Api::Gemini => last("contents").is_some_and(|c| {
            c["parts"]
                .as_array()
                .is_some_and(|p| p.iter().any(|p| p.get("functionResponse").is_some()))
        }),
    }
}

/// The tools a request offers, as `(name, declaration)`: Claude's `tools`, Codex's `tools`
/// and the namespaces of its `additional_tools` input items, Gemini's
/// `tools[].functionDeclarations`.
fn offered_tools(api: Api, request: &Value) -> Vec<(String, Value)> {
    let list = |v: &Value| v.as_array().cloned().unwrap_or_default();
    let tools = list(&request["tools"]);
    let declarations: Vec<Value> = match api {
        Api::Claude => tools,
        Api::Codex => {
            let additional = list(&request["input"])
                .into_iter()
                .filter(|item| item["type"] == "additional_tools")
                .flat_map(|item| list(&item["tools"]));
            tools
                .into_iter()
                .chain(additional)
                .flat_map(|t| match t["type"].as_str() {
                    Some("namespace") => list(&t["tools"]),
                    _ => vec![t],
                })
                .collect()
        }
        Api::Gemini => tools
            .iter()
            .flat_map(|t| list(&t["functionDeclarations"]))
            .collect(),
    };
    declarations
        .into_iter()
        .filter_map(|d| Some((d["name"].as_str()?.to_string(), d)))
        .collect()
}

/// The offered tool named `name` (or `mcp__<server>__<name>`), with its declaration.
fn find_tool(offered: &[(String, Value)], name: &str) -> Option<(String, Value)> {
    let suffix = format!("__{name}");
    offered
        .iter()
        .find(|(n, _)| n == name)
        .or_else(|| offered.iter().find(|(n, _)| n.ends_with(&suffix)))
        .cloned()
}

/// Which of `names` a Gemini declaration's parameters have (`file_path` unless another is).
fn param_name(declaration: &Value, names: &[&'static str]) -> &'static str {
    let schema = &declaration["parametersJsonSchema"];
    let schema = if schema.is_object() {
        schema
    } else {
        &declaration["parameters"]
    };
    names
        .iter()
        .find(|n| schema["properties"].get(**n).is_some())
        .copied()
        .unwrap_or(names[0])
}

/// A model answer that calls `tool`, in `api`'s streaming shape.
fn tool_call(api: Api, request: &Value, tool: &Tool) -> Response {
    let offered = offered_tools(api, request);
    match api {
        Api::Claude => {
            let (name, input) = match tool {
                Tool::Write { path, content } => {
                    ("Write", json!({"file_path": path, "content": content}))
                }
                Tool::Read { path } => ("Read", json!({"file_path": path})),
                Tool::Shell { command } => (
                    "Bash",
                    json!({"command": command, "description": "Run a command"}),
                ),
            };
            let name = find_tool(&offered, name).map_or(name.to_string(), |(n, _)| n);
            let model = request["model"].as_str().unwrap_or("mock-model");
            let mut start_usage = usage(Api::Claude);
            start_usage["output_tokens"] = json!(1);
            sse(&[
                (
                    Some("message_start"),
                    json!({"type": "message_start", "message": {"id": "msg_mock_tool",
                        "type": "message", "role": "assistant", "model": model, "content": [],
                        "stop_reason": null, "stop_sequence": null, "usage": start_usage}}),
                ),
                (
                    Some("content_block_start"),
                    json!({"type": "content_block_start", "index": 0, "content_block":
                        {"type": "tool_use", "id": "toolu_mock", "name": name, "input": {}}}),
                ),
                (
                    Some("content_block_delta"),
                    json!({"type": "content_block_delta", "index": 0, "delta":
                        {"type": "input_json_delta", "partial_json": input.to_string()}}),
                ),
                (
                    Some("content_block_stop"),
                    json!({"type": "content_block_stop", "index": 0}),
                ),
                (
                    Some("message_delta"),
                    json!({"type": "message_delta",
                        "delta": {"stop_reason": "tool_use", "stop_sequence": null},
                        "usage": {"output_tokens": usage(Api::Claude)["output_tokens"]}}),
                ),
                (Some("message_stop"), json!({"type": "message_stop"})),
            ])
        }
        Api::Codex => {
            let item = codex_tool_item(&offered, tool);
            sse(&[
                (
                    Some("response.created"),
                    json!({"type": "response.created", "response": {"id": "resp_mock_tool"}}),
                ),
                (
                    Some("response.output_item.added"),
                    json!({"type": "response.output_item.added", "output_index": 0,
                        "item": item}),
                ),
                (
                    Some("response.output_item.done"),
                    json!({"type": "response.output_item.done", "output_index": 0,
                        "item": item}),
                ),
                (
                    Some("response.completed"),
                    json!({"type": "response.completed",
                        "response": {"id": "resp_mock_tool", "usage": usage(Api::Codex)}}),
                ),
            ])
        }
        Api::Gemini => {
            let (name, args) = match tool {
                Tool::Write { path, content } => {
                    let decl = find_tool(&offered, "write_file").map(|(_, d)| d);
                    let key = decl.map_or("file_path", |d| param_name(&d, &["file_path", "path"]));
                    ("write_file", json!({key: path, "content": content}))
                }
                Tool::Read { path } => {
                    let decl = find_tool(&offered, "read_file").map(|(_, d)| d);
                    let key = decl.map_or("file_path", |d| {
                        param_name(&d, &["file_path", "absolute_path", "path"])
                    });
                    ("read_file", json!({key: path}))
                }
                Tool::Shell { command } => (
                    "run_shell_command",
                    json!({"command": command, "description": "Run a command"}),
                ),
            };
            let name = find_tool(&offered, name).map_or(name.to_string(), |(n, _)| n);
            let chunk = json!({"candidates": [{"content": {"role": "model",
                    "parts": [{"functionCall": {"name": name, "args": args}}]},
                    "finishReason": "STOP", "index": 0}],
                "usageMetadata": usage(Api::Gemini), "modelVersion": model_name(request)});
            sse(&[(None, chunk)])
        }
    }
}

/// Codex's output item calling `tool` with what the request offers. Codex 0.166+ offers one
/// custom tool `exec` running JavaScript: the call is `tools.apply_patch(<patch>)` for a write,
/// `tools.exec_command({cmd})` otherwise. Else `apply_patch` (custom: the patch text; function:
/// `{input}`) for a write, and `exec_command {cmd}` or `shell {command}` for a command.
fn codex_tool_item(offered: &[(String, Value)], tool: &Tool) -> Value {
    let call = |name: &str, arguments: Value| {
        json!({"type": "function_call", "id": "fc_mock", "call_id": "call_mock",
            "name": name, "arguments": arguments.to_string(), "status": "completed"})
    };
    let custom = |name: &str, input: &str| {
        json!({"type": "custom_tool_call", "id": "ctc_mock", "call_id": "call_mock",
            "name": name, "input": input, "status": "completed"})
    };
    let patch = match tool {
        Tool::Write { path, content } => {
            let mut patch = format!("*** Begin Patch\n*** Add File: {path}\n");
            for line in content.lines() {
                patch.push_str(&format!("+{line}\n"));
            }
            patch.push_str("*** End Patch\n");
            Some(patch)
        }
        _ => None,
    };
    let command = match tool {
        Tool::Write { path, content } => {
            format!(
                "printf '%s' '{}' > '{path}'",
                content.replace('\'', "'\\''")
            )
        }
        Tool::Read { path } => format!("cat '{path}'"),
        Tool::Shell { command } => command.clone(),
    };
    if let Some((name, declaration)) = find_tool(offered, "exec") {
        if declaration["type"] == "custom" {
            // A JSON string is a JavaScript string literal.
            let script = match &patch {
                Some(patch) => format!("text(await tools.apply_patch({}));", json!(patch)),
                None => format!(
                    "const r = await tools.exec_command({{cmd: {}}});\ntext(r.output);",
                    json!(command)
                ),
            };
            return custom(&name, &script);
        }
    }
    if let (Some(patch), Some((name, declaration))) = (&patch, find_tool(offered, "apply_patch")) {
        return if declaration["type"] == "custom" {
            custom(&name, patch)
        } else {
            call(&name, json!({"input": patch}))
        };
    }
    match find_tool(offered, "exec_command") {
        Some((name, _)) => call(&name, json!({"cmd": command})),
        None => {
            let name = find_tool(offered, "shell").map_or("shell".to_string(), |(n, _)| n);
            call(&name, json!({"command": ["bash", "-lc", command]}))
        }
    }
}

/// The answer to a side call: JSON in the schema the request asks for (Gemini's model router,
/// next-speaker and loop checks; Codex's session title); otherwise a short text.
fn side_text(api: Api, request: &Value) -> String {
    match request_schema(api, request) {
        Some(schema) => from_schema(schema).to_string(),
        None => "mock side answer".to_string(),
    }
}

/// The JSON schema a request asks its answer to follow: Gemini's
/// `generationConfig.responseJsonSchema`, Codex's `text.format.schema`.
fn request_schema(api: Api, request: &Value) -> Option<&Value> {
    let schema = match api {
        Api::Gemini => &request["generationConfig"]["responseJsonSchema"],
        Api::Codex if request["text"]["format"]["type"] == "json_schema" => {
            &request["text"]["format"]["schema"]
        }
        _ => return None,
    };
    schema.is_object().then_some(schema)
}

/// A value of JSON schema `schema`: every property filled, the lowest numbers (a loop check's
/// confidence 0, a complexity score 1), `user` where an enum allows it (the next speaker).
fn from_schema(schema: &Value) -> Value {
    if let Some(options) = schema["enum"].as_array() {
        let user = json!("user");
        return if options.contains(&user) {
            user
        } else {
            options.first().cloned().unwrap_or(Value::Null)
        };
    }
    match schema["type"]
        .as_str()
        .unwrap_or("object")
        .to_ascii_lowercase()
        .as_str()
    {
        "object" => Value::Object(
            schema["properties"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.clone(), from_schema(v)))
                .collect(),
        ),
        "array" => json!([]),
        "integer" => json!(1),
        "number" => json!(0),
        "boolean" => json!(false),
        _ => json!("mock"),
    }
}

fn plain(status: StatusCode, content_type: &str, body: String) -> Response {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, content_type)
        .body(Body::from(body))
        .unwrap()
}

fn error_body(api: Api, code: u16) -> String {
    let message = format!("mock: HTTP {code}");
    match api {
        Api::Claude => json!({"type": "error", "error": {"type": "api_error", "message": message}}),
        Api::Codex => json!({"error": {"message": message, "type": "server_error"}}),
        Api::Gemini => {
            json!({"error": {"code": code, "message": message, "status": "INTERNAL"}})
        }
    }
    .to_string()
}

/// `text` cut into a few chunks at character boundaries: thirds, at most 16 KiB each.
fn chunks(text: &str) -> Vec<&str> {
    let size = text.len().div_ceil(3).clamp(1, 16 * 1024);
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut end = size.min(rest.len());
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        out.push(&rest[..end]);
        rest = &rest[end..];
    }
    out
}

/// A server-sent-events body of `(event name, data)` pairs (no `event:` line when unnamed).
fn sse(events: &[(Option<&str>, Value)]) -> Response {
    let mut body = String::new();
    for (name, data) in events {
        if let Some(name) = name {
            body.push_str(&format!("event: {name}\n"));
        }
        body.push_str(&format!("data: {data}\n\n"));
    }
    plain(StatusCode::OK, "text/event-stream", body)
}

/// A successful answer: `text`, or nothing at all (`None`).
fn reply(api: Api, request: &Value, main: bool, text: Option<&str>) -> Response {
    let model = request["model"]
        .as_str()
        .unwrap_or("mock-model")
        .to_string();
    let parts = text.map(chunks).unwrap_or_default();
    match api {
        Api::Claude if request["stream"] != true => {
            let content: Vec<Value> = text
                .map(|t| json!({"type": "text", "text": t}))
                .into_iter()
                .collect();
            let body = json!({"id": "msg_mock", "type": "message", "role": "assistant",
                "model": model, "content": content, "stop_reason": "end_turn",
                "stop_sequence": null, "usage": usage(Api::Claude)});
            plain(StatusCode::OK, "application/json", body.to_string())
        }
        Api::Claude => {
            let mut start_usage = usage(Api::Claude);
            start_usage["output_tokens"] = json!(1);
            let mut events = vec![(
                Some("message_start"),
                json!({"type": "message_start", "message": {"id": "msg_mock", "type": "message",
                    "role": "assistant", "model": model, "content": [], "stop_reason": null,
                    "stop_sequence": null, "usage": start_usage}}),
            )];
            if text.is_some() {
                events.push((
                    Some("content_block_start"),
                    json!({"type": "content_block_start", "index": 0,
                        "content_block": {"type": "text", "text": ""}}),
                ));
                for part in &parts {
                    events.push((
                        Some("content_block_delta"),
                        json!({"type": "content_block_delta", "index": 0,
                            "delta": {"type": "text_delta", "text": part}}),
                    ));
                }
                events.push((
                    Some("content_block_stop"),
                    json!({"type": "content_block_stop", "index": 0}),
                ));
            }
            events.push((
                Some("message_delta"),
                json!({"type": "message_delta",
                    "delta": {"stop_reason": "end_turn", "stop_sequence": null},
                    "usage": {"output_tokens": usage(Api::Claude)["output_tokens"]}}),
            ));
            events.push((Some("message_stop"), json!({"type": "message_stop"})));
            sse(&events)
        }
        Api::Codex => {
            let mut events = vec![(
                Some("response.created"),
                json!({"type": "response.created", "response": {"id": "resp_mock"}}),
            )];
            if let Some(text) = text {
                let item = |status: &str, content: Value| {
                    json!({"type": "message", "id": "msg_mock", "role": "assistant",
                        "status": status, "content": content})
                };
                events.push((
                    Some("response.output_item.added"),
                    json!({"type": "response.output_item.added", "output_index": 0,
                        "item": item("in_progress", json!([]))}),
                ));
                for part in &parts {
                    events.push((
                        Some("response.output_text.delta"),
                        json!({"type": "response.output_text.delta", "item_id": "msg_mock",
                            "output_index": 0, "content_index": 0, "delta": part}),
                    ));
                }
                events.push((
                    Some("response.output_item.done"),
                    json!({"type": "response.output_item.done", "output_index": 0,
                        "item": item("completed",
                            json!([{"type": "output_text", "text": text, "annotations": []}]))}),
                ));
            }
            events.push((
                Some("response.completed"),
                json!({"type": "response.completed",
                    "response": {"id": "resp_mock", "usage": usage(Api::Codex)}}),
            ));
            sse(&events)
        }
        Api::Gemini => {
            let chunk = |text: &str, last: bool| {
                let mut candidate = json!({"content": {"parts": [{"text": text}], "role": "model"},
                    "index": 0});
                if text.is_empty() {
                    candidate["content"]["parts"] = json!([]);
                }
                let mut chunk =
                    json!({"candidates": [candidate], "modelVersion": model_name(request)});
                if last {
                    chunk["candidates"][0]["finishReason"] = json!("STOP");
                    if main {
                        chunk["usageMetadata"] = usage(Api::Gemini);
                    }
                }
                chunk
            };
            if !main {
                return plain(
                    StatusCode::OK,
                    "application/json",
                    chunk(text.unwrap_or(""), true).to_string(),
                );
            }
            let mut events: Vec<(Option<&str>, Value)> = parts
                .iter()
                .enumerate()
                .map(|(i, part)| (None, chunk(part, i + 1 == parts.len())))
                .collect();
            if events.is_empty() {
                events.push((None, chunk("", true)));
            }
            sse(&events)
        }
    }
}

/// Gemini's model is in the path (`/v1beta/models/<model>:…`), not the body.
fn model_name(_request: &Value) -> &'static str {
    "gemini-mock"
}
