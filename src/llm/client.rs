//! HTTP clients for OpenAI-compatible Chat Completions and Anthropic Messages, over reqwest
//! (blocking, rustls), with server-sent-event streaming.
//!
//! The API key is handed in by the caller (read from the environment at call time), kept in a
//! [`Secret`] that never prints, and scrubbed from every error message. Retries: a 429 is
//! retried up to three times, waiting what `Retry-After` says (capped) or backing off.

use std::io::{BufRead, BufReader};
use std::time::Duration;

use serde_json::{Value, json};

/// Which wire protocol a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    Openai,
    Anthropic,
}

/// An API key. Its `Debug` and `Display` never show it.
#[derive(Clone)]
pub struct Secret(String);

impl Secret {
    pub fn new(key: String) -> Secret {
        Secret(key)
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[redacted]")
    }
}

/// Where and how to send a request.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// For messages: `provider/model`.
    pub label: String,
    pub kind: ProviderKind,
    pub base_url: String,
    pub key: Option<Secret>,
    pub timeout: Duration,
}

/// What the model answered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reply {
    pub text: String,
    pub reasoning: String,
    /// `(call id, tool name, arguments)`.
    pub tool_calls: Vec<(String, String, Value)>,
    pub usage: Usage,
    /// The stream ended (or was stopped) before the provider said it was done.
    pub interrupted: bool,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// A piece of a streamed answer, as it arrives.
pub enum Delta<'a> {
    Text(&'a str),
    Reasoning(&'a str),
}

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("{endpoint}: cannot connect ({message})")]
    Connect { endpoint: String, message: String },
    #[error("{endpoint}: no answer in time ({message})")]
    Timeout { endpoint: String, message: String },
    #[error("{endpoint}: HTTP {status}{}", message.as_ref().map(|m| format!(": {m}")).unwrap_or_default())]
    Http { endpoint: String, status: u16, message: Option<String> },
    #[error("{endpoint}: malformed answer ({message})")]
    Malformed { endpoint: String, message: String },
    /// A redirect to another scheme, host or port: not followed, so the key stays here.
    #[error(
        "{endpoint}: redirected to another origin ({location}); not followed, the key is never sent across origins"
    )]
    Redirect { endpoint: String, location: String },
}

const MAX_ATTEMPTS: u32 = 3;
/// Tool calls one answer may carry: a bound on what a stream's `index` can make us allocate.
const MAX_TOOL_CALLS: usize = 1024;
const MAX_RETRY_WAIT: Duration = Duration::from_secs(20);

/// Redirects within one origin (scheme, host and port) are followed, ten at most; one to
/// another origin is not, and its 3xx answer comes back to `send`. reqwest itself drops
/// `Authorization` across hosts but keeps `x-api-key`, so it must never get the chance.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let same_origin = attempt.previous().last().is_some_and(|prev| {
            let next = attempt.url();
            prev.scheme() == next.scheme()
                && prev.host_str() == next.host_str()
                && prev.port_or_known_default() == next.port_or_known_default()
        });
        if attempt.previous().len() > 10 {
            attempt.error("too many redirects")
        } else if same_origin {
            attempt.follow()
        } else {
            attempt.stop()
        }
    })
}

/// The lines of a streamed body, read on a thread of their own so the caller can stop
/// waiting (Ctrl-C) even while the server is silent. `None` marks the end of the body.
fn stream_lines(response: reqwest::blocking::Response) -> std::sync::mpsc::Receiver<Option<String>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(response).lines() {
            match line {
                Ok(line) => {
                    if tx.send(Some(line)).is_err() {
                        return;
                    }
                }
                Err(_) => break,
            }
        }
        let _ = tx.send(None);
    });
    rx
}

/// The next line of a stream, or `None` at its end or when `stop` says so.
fn next_line(rx: &std::sync::mpsc::Receiver<Option<String>>, stop: &dyn Fn() -> bool) -> Option<String> {
    loop {
        if stop() {
            return None;
        }
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(line) => return line,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => continue,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return None,
        }
    }
}

impl Endpoint {
    fn url(&self) -> String {
        let base = self.base_url.trim_end_matches('/');
        match self.kind {
            ProviderKind::Openai => format!("{base}/chat/completions"),
            ProviderKind::Anthropic => format!("{base}/messages"),
        }
    }

    /// Where errors say they came from: the model and the URL, never the key.
    fn describe(&self) -> String {
        format!("{} at {}", self.label, self.url())
    }

    /// Remove the key from text that came back from the server or the HTTP stack.
    fn scrub(&self, text: String) -> String {
        match &self.key {
            Some(Secret(key)) if !key.is_empty() => text.replace(key.as_str(), "[redacted]"),
            _ => text,
        }
    }

    fn malformed(&self, message: impl Into<String>) -> LlmError {
        LlmError::Malformed { endpoint: self.describe(), message: self.scrub(message.into()) }
    }

    /// Send `body`. A streaming body (`"stream": true`) is read event by event, each piece of
    /// text passed to `on_delta`; `stop` is polled between events (Ctrl-C).
    pub fn complete(
        &self,
        body: &Value,
        on_delta: &mut dyn FnMut(Delta),
        stop: &dyn Fn() -> bool,
    ) -> Result<Reply, LlmError> {
        let response = self.send(body)?;
        if body.get("stream").and_then(Value::as_bool) == Some(true) {
            match self.kind {
                ProviderKind::Openai => self.read_openai_stream(response, on_delta, stop),
                ProviderKind::Anthropic => self.read_anthropic_stream(response, on_delta, stop),
            }
        } else {
            let text = response.text().map_err(|e| self.malformed(e.to_string()))?;
            let value: Value = serde_json::from_str(&text).map_err(|e| self.malformed(format!("not JSON: {e}")))?;
            match self.kind {
                ProviderKind::Openai => self.parse_openai(&value),
                ProviderKind::Anthropic => self.parse_anthropic(&value),
            }
        }
    }

    fn send(&self, body: &Value) -> Result<reqwest::blocking::Response, LlmError> {
        let client = reqwest::blocking::Client::builder()
            .redirect(same_origin_redirects())
            .timeout(self.timeout)
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| self.malformed(e.to_string()))?;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut request = client.post(self.url()).header("content-type", "application/json").body(body.to_string());
            match (self.kind, &self.key) {
                (ProviderKind::Openai, Some(Secret(key))) => request = request.bearer_auth(key),
                (ProviderKind::Anthropic, Some(Secret(key))) => request = request.header("x-api-key", key),
                _ => {}
            }
            if self.kind == ProviderKind::Anthropic {
                request = request.header("anthropic-version", "2023-06-01");
            }
            let response = request.send().map_err(|e| {
                // Drop the URL from reqwest's message: `describe` already has it.
                let timeout = e.is_timeout();
                let message = self.scrub(e.without_url().to_string());
                if timeout {
                    LlmError::Timeout { endpoint: self.describe(), message }
                } else {
                    LlmError::Connect { endpoint: self.describe(), message }
                }
            })?;
            let status = response.status();
            if status.is_success() {
                return Ok(response);
            }
            if status.is_redirection() {
                let location = response
                    .headers()
                    .get("location")
                    .and_then(|v| v.to_str().ok())
                    .map(|l| self.scrub(l.to_owned()))
                    .unwrap_or_else(|| format!("HTTP {}", status.as_u16()));
                return Err(LlmError::Redirect { endpoint: self.describe(), location });
            }
            if status.as_u16() == 429 && attempt < MAX_ATTEMPTS {
                let wait = response
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .map(Duration::from_secs)
                    .unwrap_or(Duration::from_secs(1 << (attempt - 1)))
                    .min(MAX_RETRY_WAIT);
                std::thread::sleep(wait);
                continue;
            }
            let text = response.text().unwrap_or_default();
            let message = serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|v| {
                    v.pointer("/error/message").or_else(|| v.get("error")).or_else(|| v.get("message")).map(|m| match m
                    {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    })
                })
                .or_else(|| Some(text.trim().chars().take(200).collect::<String>()).filter(|t| !t.is_empty()))
                .map(|m| self.scrub(m));
            return Err(LlmError::Http { endpoint: self.describe(), status: status.as_u16(), message });
        }
    }

    fn parse_openai(&self, v: &Value) -> Result<Reply, LlmError> {
        let message = v.pointer("/choices/0/message").ok_or_else(|| self.malformed("no choices[0].message"))?;
        let mut reply = Reply {
            text: message.get("content").and_then(Value::as_str).unwrap_or("").to_owned(),
            reasoning: message.get("reasoning_content").and_then(Value::as_str).unwrap_or("").to_owned(),
            ..Default::default()
        };
        for call in message.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
            reply.tool_calls.push(self.openai_call(
                call.get("id").and_then(Value::as_str).unwrap_or(""),
                call.pointer("/function/name").and_then(Value::as_str).unwrap_or(""),
                call.pointer("/function/arguments").and_then(Value::as_str).unwrap_or("{}"),
            )?);
        }
        reply.usage = Usage {
            input_tokens: v.pointer("/usage/prompt_tokens").and_then(Value::as_u64).unwrap_or(0),
            output_tokens: v.pointer("/usage/completion_tokens").and_then(Value::as_u64).unwrap_or(0),
        };
        Ok(reply)
    }

    fn openai_call(&self, id: &str, name: &str, arguments: &str) -> Result<(String, String, Value), LlmError> {
        let args = if arguments.trim().is_empty() {
            json!({})
        } else {
            serde_json::from_str(arguments)
                .map_err(|e| self.malformed(format!("tool call arguments are not JSON: {e}")))?
        };
        Ok((id.to_owned(), name.to_owned(), args))
    }

    fn parse_anthropic(&self, v: &Value) -> Result<Reply, LlmError> {
        let content = v.get("content").and_then(Value::as_array).ok_or_else(|| self.malformed("no content"))?;
        let mut reply = Reply::default();
        for block in content {
            match block.get("type").and_then(Value::as_str) {
                Some("text") => reply.text.push_str(block.get("text").and_then(Value::as_str).unwrap_or("")),
                Some("thinking") => {
                    reply.reasoning.push_str(block.get("thinking").and_then(Value::as_str).unwrap_or(""))
                }
                Some("tool_use") => reply.tool_calls.push((
                    block.get("id").and_then(Value::as_str).unwrap_or("").to_owned(),
                    block.get("name").and_then(Value::as_str).unwrap_or("").to_owned(),
                    block.get("input").cloned().unwrap_or_else(|| json!({})),
                )),
                _ => {}
            }
        }
        reply.usage = Usage {
            input_tokens: v.pointer("/usage/input_tokens").and_then(Value::as_u64).unwrap_or(0),
            output_tokens: v.pointer("/usage/output_tokens").and_then(Value::as_u64).unwrap_or(0),
        };
        Ok(reply)
    }

    /// `data: {...}` lines until `data: [DONE]`; anything else ending the body early marks
    /// the reply interrupted.
    fn read_openai_stream(
        &self,
        response: reqwest::blocking::Response,
        on_delta: &mut dyn FnMut(Delta),
        stop: &dyn Fn() -> bool,
    ) -> Result<Reply, LlmError> {
        let mut reply = Reply { interrupted: true, ..Default::default() };
        // Tool calls arrive in pieces, by index.
        let mut calls: Vec<(String, String, String)> = Vec::new();
        let mut events = 0;
        let lines = stream_lines(response);
        while let Some(line) = next_line(&lines, stop) {
            let Some(data) = line.strip_prefix("data:").map(str::trim) else { continue };
            events += 1;
            if data == "[DONE]" {
                reply.interrupted = false;
                break;
            }
            let chunk: Value =
                serde_json::from_str(data).map_err(|e| self.malformed(format!("stream event is not JSON: {e}")))?;
            if let Some(err) = chunk.get("error") {
                return Err(LlmError::Http {
                    endpoint: self.describe(),
                    status: 200,
                    message: Some(self.scrub(err.to_string())),
                });
            }
            if let Some(usage) = chunk.get("usage").filter(|u| !u.is_null()) {
                reply.usage.input_tokens = usage.get("prompt_tokens").and_then(Value::as_u64).unwrap_or(0);
                reply.usage.output_tokens = usage.get("completion_tokens").and_then(Value::as_u64).unwrap_or(0);
            }
            let Some(delta) = chunk.pointer("/choices/0/delta") else { continue };
            if let Some(text) = delta.get("content").and_then(Value::as_str) {
                reply.text.push_str(text);
                on_delta(Delta::Text(text));
            }
            if let Some(text) = delta.get("reasoning_content").and_then(Value::as_str) {
                reply.reasoning.push_str(text);
                on_delta(Delta::Reasoning(text));
            }
            if chunk.pointer("/choices/0/finish_reason").is_some_and(|r| !r.is_null()) {
                // Some servers end the stream after the finish reason, without `[DONE]`.
                reply.interrupted = false;
            }
            for call in delta.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
                let index = call.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
                if index >= MAX_TOOL_CALLS {
                    return Err(
                        self.malformed(format!("tool call index {index} (at most {MAX_TOOL_CALLS} calls an answer)"))
                    );
                }
                while calls.len() <= index {
                    calls.push(Default::default());
                }
                let slot = &mut calls[index];
                if let Some(id) = call.get("id").and_then(Value::as_str) {
                    slot.0.push_str(id);
                }
                if let Some(name) = call.pointer("/function/name").and_then(Value::as_str) {
                    slot.1.push_str(name);
                }
                if let Some(args) = call.pointer("/function/arguments").and_then(Value::as_str) {
                    slot.2.push_str(args);
                }
            }
        }
        if events == 0 && !stop() {
            return Err(self.malformed("no stream events in the answer"));
        }
        for (id, name, args) in calls {
            if id.is_empty() && name.is_empty() && args.is_empty() {
                // A slot the server skipped over (indexes need not be dense).
                continue;
            }
            match self.openai_call(&id, &name, &args) {
                Ok(call) => reply.tool_calls.push(call),
                // A call cut off mid-arguments is dropped with the rest of an interrupted reply.
                Err(_) if reply.interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(reply)
    }

    /// `event:`/`data:` pairs until `message_stop`.
    fn read_anthropic_stream(
        &self,
        response: reqwest::blocking::Response,
        on_delta: &mut dyn FnMut(Delta),
        stop: &dyn Fn() -> bool,
    ) -> Result<Reply, LlmError> {
        let mut reply = Reply { interrupted: true, ..Default::default() };
        let mut blocks: Vec<(String, String, String, String)> = Vec::new(); // type, id, name, json
        let mut events = 0;
        let lines = stream_lines(response);
        while let Some(line) = next_line(&lines, stop) {
            let Some(data) = line.strip_prefix("data:").map(str::trim) else { continue };
            events += 1;
            let event: Value =
                serde_json::from_str(data).map_err(|e| self.malformed(format!("stream event is not JSON: {e}")))?;
            match event.get("type").and_then(Value::as_str) {
                Some("message_start") => {
                    reply.usage.input_tokens =
                        event.pointer("/message/usage/input_tokens").and_then(Value::as_u64).unwrap_or(0);
                }
                Some("content_block_start") => {
                    let block = event.get("content_block").cloned().unwrap_or_default();
                    let field = |k: &str| block.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
                    blocks.push((field("type"), field("id"), field("name"), String::new()));
                }
                Some("content_block_delta") => {
                    let delta = event.get("delta").cloned().unwrap_or_default();
                    match delta.get("type").and_then(Value::as_str) {
                        Some("text_delta") => {
                            let text = delta.get("text").and_then(Value::as_str).unwrap_or("");
                            reply.text.push_str(text);
                            on_delta(Delta::Text(text));
                        }
                        Some("thinking_delta") => {
                            let text = delta.get("thinking").and_then(Value::as_str).unwrap_or("");
                            reply.reasoning.push_str(text);
                            on_delta(Delta::Reasoning(text));
                        }
                        Some("input_json_delta") => {
                            if let Some(last) = blocks.last_mut() {
                                last.3.push_str(delta.get("partial_json").and_then(Value::as_str).unwrap_or(""));
                            }
                        }
                        _ => {}
                    }
                }
                Some("message_delta") => {
                    reply.usage.output_tokens =
                        event.pointer("/usage/output_tokens").and_then(Value::as_u64).unwrap_or(0);
                }
                Some("message_stop") => {
                    reply.interrupted = false;
                    break;
                }
                Some("error") => {
                    let message =
                        event.pointer("/error/message").and_then(Value::as_str).map(|m| self.scrub(m.to_owned()));
                    return Err(LlmError::Http { endpoint: self.describe(), status: 200, message });
                }
                _ => {}
            }
        }
        if events == 0 && !stop() {
            return Err(self.malformed("no stream events in the answer"));
        }
        for (kind, id, name, json) in blocks {
            if kind != "tool_use" {
                continue;
            }
            let input = if json.trim().is_empty() { Ok(json!({})) } else { serde_json::from_str(&json) };
            match input {
                Ok(input) => reply.tool_calls.push((id, name, input)),
                Err(_) if reply.interrupted => {}
                Err(e) => return Err(self.malformed(format!("tool input is not JSON: {e}"))),
            }
        }
        Ok(reply)
    }
}
