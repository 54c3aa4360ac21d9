//! HTTP clients for OpenAI-compatible Chat Completions and Anthropic Messages, over reqwest
//! (blocking, rustls), with server-sent-event streaming.
//!
//! The API key is handed in by the caller (read from the environment at call time), kept in a
//! [`Secret`] that never prints, and scrubbed from every error message. Retries: a 429 is
//! retried up to three times, waiting what `Retry-After` says (capped) or backing off.

use std::io::{BufRead, BufReader};
use std::time::Duration;

use serde_json::{Value, json};

use super::answer::{self, AnthropicBlock, AnthropicDelta, AnthropicEvent, OpenaiChunk};

pub use crate::config::ProviderKind;

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
    pub tool_calls: Vec<ToolCall>,
    /// What the provider reported; empty when it reported nothing (an interrupted stream).
    pub usage: Usage,
    /// The provider's own usage object, as it sent it (an Anthropic stream's pieces merged).
    pub usage_raw: Option<Value>,
    /// The stream ended (or was stopped) before the provider said it was done.
    pub interrupted: bool,
    /// Why the provider says it stopped, as it says it (`stop`, `length`, `end_turn`,
    /// `max_tokens`, …), when it says.
    pub finish_reason: Option<String>,
}

impl Reply {
    /// Cut off by the output cap: OpenAI's `finish_reason: "length"`, Anthropic's
    /// `stop_reason: "max_tokens"`.
    pub fn truncated(&self) -> bool {
        matches!(self.finish_reason.as_deref(), Some("length" | "max_tokens"))
    }
}

/// A tool call the model asked for, with the provider's call id (possibly empty).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: Value,
}

/// A tool call of a stream, put together from pieces: the arguments are JSON text until the
/// stream ends.
#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

pub use crate::event::Usage;

/// A piece of a streamed answer, as it arrives.
pub enum Delta<'a> {
    Text(&'a str),
    Reasoning(&'a str),
}

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// Nothing listens at the address (the server is not running, or another port).
    #[error("{endpoint}: connection refused at {address}")]
    Refused { endpoint: String, address: String },
    /// Any other failure to connect (a name that does not resolve, TLS, no route): the
    /// innermost cause, which says most.
    #[error("{endpoint}: cannot connect to {address}: {message}")]
    Connect { endpoint: String, address: String, message: String },
    /// The connection was made and the request sent, then closed with no answer at all.
    #[error("{endpoint}: the server closed the connection before answering")]
    Closed { endpoint: String },
    /// `secs`: the endpoint's timeout (`llm.timeout_secs`).
    #[error("{endpoint}: no answer within {secs} s")]
    Timeout { endpoint: String, secs: u64 },
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

impl LlmError {
    /// The server refused the request as larger than its context: llama.cpp's "exceeds the
    /// available context size", OpenAI's `context_length_exceeded`, Anthropic's "prompt is
    /// too long".
    pub fn is_context_overflow(&self) -> bool {
        let LlmError::Http { status: 400 | 413, message: Some(message), .. } = self else { return false };
        let message = message.to_ascii_lowercase();
        [
            "exceeds the available context size",
            "context_length_exceeded",
            "prompt is too long",
            "maximum context length",
        ]
        .iter()
        .any(|m| message.contains(m))
    }
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

/// Add an Anthropic stream's piece of usage (`message_start`'s, then `message_delta`'s, whose
/// counts are totals so far) to what the reply has: later fields win.
fn merge_usage(reply: &mut Reply, piece: Value) {
    let mut raw = reply.usage_raw.take().unwrap_or_else(|| Value::Object(Default::default()));
    if let (Some(raw), Value::Object(piece)) = (raw.as_object_mut(), piece) {
        raw.extend(piece);
    }
    reply.usage = answer::anthropic_usage(&raw);
    reply.usage_raw = Some(raw);
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

/// `lines`, counting those that arrive: a body that ends before its first line is a server
/// that closed the connection without answering.
struct Counted<'a> {
    rx: std::sync::mpsc::Receiver<Option<String>>,
    stop: &'a dyn Fn() -> bool,
    lines: usize,
}

impl Counted<'_> {
    fn next(&mut self) -> Option<String> {
        let line = next_line(&self.rx, self.stop)?;
        self.lines += 1;
        Some(line)
    }
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

    /// `host:port` of the URL, for messages about the connection.
    fn address(&self) -> String {
        reqwest::Url::parse(&self.url())
            .ok()
            .and_then(|u| Some(format!("{}:{}", u.host_str()?, u.port_or_known_default()?)))
            .unwrap_or_else(|| self.base_url.clone())
    }

    /// What a request that got no response means, from reqwest's error and its causes.
    fn send_error(&self, e: reqwest::Error) -> LlmError {
        let endpoint = self.describe();
        let mut causes: Vec<&(dyn std::error::Error + 'static)> = Vec::new();
        let mut next = std::error::Error::source(&e);
        while let Some(cause) = next {
            causes.push(cause);
            next = cause.source();
        }
        let io_kind = causes.iter().find_map(|c| c.downcast_ref::<std::io::Error>()).map(std::io::Error::kind);
        if e.is_timeout() || io_kind == Some(std::io::ErrorKind::TimedOut) {
            return LlmError::Timeout { endpoint, secs: self.timeout.as_secs() };
        }
        if io_kind == Some(std::io::ErrorKind::ConnectionRefused) {
            return LlmError::Refused { endpoint, address: self.address() };
        }
        let text: Vec<String> = causes.iter().map(|c| c.to_string()).collect();
        // hyper's own word for a connection that closed before the response was whole.
        let incomplete =
            causes.iter().any(|c| c.downcast_ref::<hyper::Error>().is_some_and(hyper::Error::is_incomplete_message));
        if !e.is_connect()
            && (incomplete
                || matches!(io_kind, Some(std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::UnexpectedEof)))
        {
            return LlmError::Closed { endpoint };
        }
        // The innermost cause says most ("dns error: failed to lookup address …").
        let message = text.last().cloned().unwrap_or_else(|| e.without_url().to_string());
        LlmError::Connect { endpoint, address: self.address(), message: self.scrub(message) }
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
            let not_json = |e: serde_json::Error| self.malformed(format!("not JSON: {e}"));
            match self.kind {
                ProviderKind::Openai => self.parse_openai(answer::parse(&text).map_err(not_json)?),
                ProviderKind::Anthropic => self.parse_anthropic(answer::parse(&text).map_err(not_json)?),
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
            let response = request.send().map_err(|e| self.send_error(e))?;
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
            let message = answer::parse::<answer::ErrorBody>(&text)
                .ok()
                .and_then(answer::ErrorBody::message)
                .or_else(|| Some(text.trim().chars().take(200).collect::<String>()).filter(|t| !t.is_empty()))
                .map(|m| self.scrub(m));
            return Err(LlmError::Http { endpoint: self.describe(), status: status.as_u16(), message });
        }
    }

    fn parse_openai(&self, answer: OpenaiChunk) -> Result<Reply, LlmError> {
        let choice = answer.choices.into_iter().next();
        let finish_reason = choice.as_ref().and_then(|c| c.finish_reason.clone());
        let message = choice.and_then(|c| c.message).ok_or_else(|| self.malformed("no choices[0].message"))?;
        let mut reply = Reply {
            text: message.content.unwrap_or_default(),
            reasoning: message.reasoning_content.unwrap_or_default(),
            finish_reason,
            ..Default::default()
        };
        for call in message.tool_calls {
            let function = call.function.unwrap_or_default();
            reply.tool_calls.push(self.openai_call(PartialCall {
                id: call.id.unwrap_or_default(),
                name: function.name.unwrap_or_default(),
                arguments: function.arguments.unwrap_or_default(),
            })?);
        }
        if let Some(usage) = answer.usage {
            reply.usage = answer::openai_usage(&usage);
            reply.usage_raw = Some(usage);
        }
        Ok(reply)
    }

    /// A whole call; its arguments, JSON text, parsed (none at all read as `{}`).
    fn openai_call(&self, call: PartialCall) -> Result<ToolCall, LlmError> {
        let arguments = if call.arguments.trim().is_empty() {
            json!({})
        } else {
            serde_json::from_str(&call.arguments)
                .map_err(|e| self.malformed(format!("tool call arguments are not JSON: {e}")))?
        };
        Ok(ToolCall { id: call.id, name: call.name, arguments })
    }

    fn parse_anthropic(&self, answer: answer::AnthropicMessage) -> Result<Reply, LlmError> {
        let content = answer.content.ok_or_else(|| self.malformed("no content"))?;
        let mut reply = Reply { finish_reason: answer.stop_reason, ..Default::default() };
        for block in content {
            match block {
                AnthropicBlock::Text { text } => reply.text.push_str(&text.unwrap_or_default()),
                AnthropicBlock::Thinking { thinking } => reply.reasoning.push_str(&thinking.unwrap_or_default()),
                AnthropicBlock::ToolUse { id, name, input } => reply.tool_calls.push(ToolCall {
                    id: id.unwrap_or_default(),
                    name: name.unwrap_or_default(),
                    arguments: input.unwrap_or_else(|| json!({})),
                }),
                AnthropicBlock::Other => {}
            }
        }
        if let Some(usage) = answer.usage {
            reply.usage = answer::anthropic_usage(&usage);
            reply.usage_raw = Some(usage);
        }
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
        let mut calls: Vec<PartialCall> = Vec::new();
        let mut events = 0;
        let mut lines = Counted { rx: stream_lines(response), stop, lines: 0 };
        while let Some(line) = lines.next() {
            let Some(data) = line.strip_prefix("data:").map(str::trim) else { continue };
            events += 1;
            if data == "[DONE]" {
                reply.interrupted = false;
                break;
            }
            let chunk: OpenaiChunk =
                answer::parse(data).map_err(|e| self.malformed(format!("stream event is not JSON: {e}")))?;
            if let Some(err) = chunk.error {
                return Err(LlmError::Http {
                    endpoint: self.describe(),
                    status: 200,
                    message: Some(self.scrub(err.to_string())),
                });
            }
            if let Some(usage) = chunk.usage {
                reply.usage = answer::openai_usage(&usage);
                reply.usage_raw = Some(usage);
            }
            let Some(choice) = chunk.choices.into_iter().next() else { continue };
            if choice.finish_reason.is_some() {
                // Some servers end the stream after the finish reason, without `[DONE]`.
                reply.interrupted = false;
                reply.finish_reason = choice.finish_reason.clone();
            }
            let Some(delta) = choice.delta else { continue };
            if let Some(text) = &delta.content {
                reply.text.push_str(text);
                on_delta(Delta::Text(text));
            }
            if let Some(text) = &delta.reasoning_content {
                reply.reasoning.push_str(text);
                on_delta(Delta::Reasoning(text));
            }
            for call in delta.tool_calls {
                let index = call.index.unwrap_or(0) as usize;
                if index >= MAX_TOOL_CALLS {
                    return Err(
                        self.malformed(format!("tool call index {index} (at most {MAX_TOOL_CALLS} calls an answer)"))
                    );
                }
                while calls.len() <= index {
                    calls.push(PartialCall::default());
                }
                let slot = &mut calls[index];
                let function = call.function.unwrap_or_default();
                slot.id.push_str(&call.id.unwrap_or_default());
                slot.name.push_str(&function.name.unwrap_or_default());
                slot.arguments.push_str(&function.arguments.unwrap_or_default());
            }
        }
        if lines.lines == 0 && !stop() {
            return Err(LlmError::Closed { endpoint: self.describe() });
        }
        if events == 0 && !stop() {
            return Err(self.malformed("no stream events in the answer"));
        }
        for call in calls {
            if call.id.is_empty() && call.name.is_empty() && call.arguments.is_empty() {
                // A slot the server skipped over (indexes need not be dense).
                continue;
            }
            match self.openai_call(call) {
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
        // One per content block started: its tool call, if it is one.
        let mut blocks: Vec<Option<PartialCall>> = Vec::new();
        let mut events = 0;
        let mut lines = Counted { rx: stream_lines(response), stop, lines: 0 };
        while let Some(line) = lines.next() {
            let Some(data) = line.strip_prefix("data:").map(str::trim) else { continue };
            events += 1;
            let event: AnthropicEvent =
                answer::parse(data).map_err(|e| self.malformed(format!("stream event is not JSON: {e}")))?;
            match event {
                AnthropicEvent::MessageStart { message } => {
                    if let Some(mut usage) = message.and_then(|m| m.usage) {
                        // Its `output_tokens` is a placeholder until `message_delta` counts them:
                        // an answer cut off before that has no known output.
                        if let Some(fields) = usage.as_object_mut() {
                            fields.shift_remove("output_tokens");
                        }
                        merge_usage(&mut reply, usage);
                    }
                }
                AnthropicEvent::ContentBlockStart { content_block } => blocks.push(match content_block {
                    Some(AnthropicBlock::ToolUse { id, name, .. }) => Some(PartialCall {
                        id: id.unwrap_or_default(),
                        name: name.unwrap_or_default(),
                        arguments: String::new(),
                    }),
                    _ => None,
                }),
                AnthropicEvent::ContentBlockDelta { delta } => match delta {
                    Some(AnthropicDelta::TextDelta { text }) => {
                        let text = text.unwrap_or_default();
                        reply.text.push_str(&text);
                        on_delta(Delta::Text(&text));
                    }
                    Some(AnthropicDelta::ThinkingDelta { thinking }) => {
                        let text = thinking.unwrap_or_default();
                        reply.reasoning.push_str(&text);
                        on_delta(Delta::Reasoning(&text));
                    }
                    Some(AnthropicDelta::InputJsonDelta { partial_json }) => {
                        if let Some(Some(call)) = blocks.last_mut() {
                            call.arguments.push_str(&partial_json.unwrap_or_default());
                        }
                    }
                    Some(AnthropicDelta::Other) | None => {}
                },
                AnthropicEvent::MessageDelta { delta, usage } => {
                    if let Some(reason) = delta.and_then(|d| d.stop_reason) {
                        reply.finish_reason = Some(reason);
                    }
                    if let Some(usage) = usage {
                        merge_usage(&mut reply, usage);
                    }
                }
                AnthropicEvent::MessageStop => {
                    reply.interrupted = false;
                    break;
                }
                AnthropicEvent::Error { error } => {
                    let message = error.and_then(|e| e.message).map(|m| self.scrub(m));
                    return Err(LlmError::Http { endpoint: self.describe(), status: 200, message });
                }
                AnthropicEvent::Other => {}
            }
        }
        if lines.lines == 0 && !stop() {
            return Err(LlmError::Closed { endpoint: self.describe() });
        }
        if events == 0 && !stop() {
            return Err(self.malformed("no stream events in the answer"));
        }
        for call in blocks.into_iter().flatten() {
            let json = &call.arguments;
            let input = if json.trim().is_empty() { Ok(json!({})) } else { serde_json::from_str(json) };
            match input {
                Ok(arguments) => reply.tool_calls.push(ToolCall { id: call.id, name: call.name, arguments }),
                Err(_) if reply.interrupted => {}
                Err(e) => return Err(self.malformed(format!("tool input is not JSON: {e}"))),
            }
        }
        Ok(reply)
    }
}
