//! Provider request bodies built from a projected view: OpenAI-compatible Chat Completions
//! and Anthropic Messages. Pure functions of the view; `show --format openai|anthropic`
//! prints exactly what `query` sends.
//!
//! Both keep the provider's rules: assistant-side events of a turn (text, tool calls) form
//! one assistant message, every tool result follows its call, and reasoning is dropped
//! (neither API takes unsigned reasoning back as input).

use serde_json::{Map, Value, json};

use crate::event::{Event, Kind};

/// Options of a request body that do not come from the conversation.
#[derive(Debug, Clone, Default)]
pub struct BodyOptions {
    /// The model name as the provider knows it (without the `provider/` prefix).
    pub model: Option<String>,
    pub stream: bool,
    /// The cap on the answer, sent as `max_tokens` by both kinds (Anthropic requires it;
    /// without it an OpenAI-compatible server such as llama.cpp writes until its window is
    /// full). `0` sends none (`show --format` with no model to take it from).
    pub max_tokens: u64,
}

/// `POST /chat/completions` body.
pub fn openai(view: &[Event], options: &BodyOptions) -> Value {
    let mut messages: Vec<Value> = Vec::new();
    // The assistant message being built from consecutive assistant-side events.
    let mut open: Option<(String, Vec<Value>)> = None;
    let flush = |open: &mut Option<(String, Vec<Value>)>, messages: &mut Vec<Value>| {
        if let Some((text, calls)) = open.take() {
            let mut m = Map::new();
            m.insert("role".into(), "assistant".into());
            m.insert("content".into(), if text.is_empty() { Value::Null } else { Value::String(text) });
            if !calls.is_empty() {
                m.insert("tool_calls".into(), Value::Array(calls));
            }
            messages.push(Value::Object(m));
        }
    };
    for event in view {
        match &event.kind {
            Kind::System { content } => {
                flush(&mut open, &mut messages);
                messages.push(json!({"role": "system", "content": content}));
            }
            Kind::User { content } => {
                flush(&mut open, &mut messages);
                messages.push(json!({"role": "user", "content": content}));
            }
            Kind::Assistant { content } => {
                let (text, calls) = open.get_or_insert_with(Default::default);
                if !calls.is_empty() {
                    // Text after tool calls starts a new assistant message (results come between).
                    flush(&mut open, &mut messages);
                    open = Some((content.clone(), Vec::new()));
                } else {
                    if !text.is_empty() {
                        text.push('\n');
                    }
                    text.push_str(content);
                }
            }
            Kind::ToolCall { call_id, name, arguments } => {
                let (_, calls) = open.get_or_insert_with(Default::default);
                calls.push(json!({
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": arguments.to_string()},
                }));
            }
            Kind::ToolResult { call_id, content, .. } => {
                flush(&mut open, &mut messages);
                messages.push(json!({"role": "tool", "tool_call_id": call_id, "content": content}));
            }
            Kind::Reasoning { .. } | Kind::Config { .. } | Kind::Compaction | Kind::Other(_) => {}
        }
    }
    flush(&mut open, &mut messages);
    let mut body = Map::new();
    if let Some(model) = &options.model {
        body.insert("model".into(), model.clone().into());
    }
    body.insert("messages".into(), Value::Array(messages));
    if options.max_tokens > 0 {
        // `max_tokens`, not OpenAI's newer `max_completion_tokens`: every compatible server
        // (llama.cpp, Ollama, vLLM, OpenRouter) reads it.
        body.insert("max_tokens".into(), options.max_tokens.into());
    }
    if options.stream {
        body.insert("stream".into(), true.into());
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    Value::Object(body)
}

/// `POST /messages` body.
pub fn anthropic(view: &[Event], options: &BodyOptions) -> Value {
    let mut system: Vec<&str> = Vec::new();
    let mut messages: Vec<(&'static str, Vec<Value>)> = Vec::new();
    // Anthropic refuses `tool_use` blocks in a request that declares no tools: every tool
    // named in the view is declared, by name, with a schema that takes any input (convo
    // does not know the real one; the model is not asked to call them anew).
    let mut tools: Vec<&str> = Vec::new();
    // Consecutive blocks of one role share a message: Anthropic requires strict alternation.
    let mut push = |role: &'static str, block: Value| match messages.last_mut() {
        Some((r, blocks)) if *r == role => blocks.push(block),
        _ => messages.push((role, vec![block])),
    };
    for event in view {
        match &event.kind {
            Kind::System { content } => system.push(content),
            Kind::User { content } => push("user", json!({"type": "text", "text": content})),
            Kind::Assistant { content } if !content.is_empty() => {
                push("assistant", json!({"type": "text", "text": content}));
            }
            Kind::ToolCall { call_id, name, arguments } => {
                if !tools.contains(&name.as_str()) {
                    tools.push(name);
                }
                let input = if arguments.is_object() { arguments.clone() } else { json!({"value": arguments}) };
                push("assistant", json!({"type": "tool_use", "id": call_id, "name": name, "input": input}));
            }
            Kind::ToolResult { call_id, content, is_error } => push(
                "user",
                json!({"type": "tool_result", "tool_use_id": call_id, "content": content, "is_error": is_error}),
            ),
            _ => {}
        }
    }
    let mut body = Map::new();
    if let Some(model) = &options.model {
        body.insert("model".into(), model.clone().into());
    }
    body.insert("max_tokens".into(), options.max_tokens.max(1).into());
    if !system.is_empty() {
        body.insert("system".into(), system.join("\n\n").into());
    }
    body.insert(
        "messages".into(),
        Value::Array(messages.into_iter().map(|(role, content)| json!({"role": role, "content": content})).collect()),
    );
    if !tools.is_empty() {
        let declared = tools
            .iter()
            .map(|name| json!({"name": name, "input_schema": {"type": "object", "additionalProperties": true}}))
            .collect();
        body.insert("tools".into(), Value::Array(declared));
    }
    if options.stream {
        body.insert("stream".into(), true.into());
    }
    Value::Object(body)
}
