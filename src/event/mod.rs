//! Conversation events: the typed model, the JSONL wire format, and validation of input lines.
//!
//! One JSON object per line, the same schema for input (`convo append`) and output
//! (`convo show --format jsonl`). Unknown fields are kept verbatim and written back after the
//! known ones; an unknown `type` in a *stored* file is carried through as [`Kind::Other`], while
//! input is held to the known types so a typo cannot enter the store. This module knows nothing
//! of files or git.

use serde_json::{Map, Value};

pub mod outline;
pub mod short;
pub mod title;
pub mod trail;
pub mod who;
pub use outline::{Outline, Shape};

/// The event types input may carry (every known type but `compaction`, which only convo
/// writes), in the order help text lists them.
pub const INPUT_TYPES: &[&str] = &["system", "user", "assistant", "reasoning", "tool_call", "tool_result", "config"];

#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub id: String,
    /// RFC 3339, kept as written so a round trip is byte-stable.
    pub ts: String,
    pub kind: Kind,
    /// Fields convo does not know, in input order.
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    System {
        content: String,
    },
    User {
        content: String,
    },
    Assistant {
        content: String,
    },
    Reasoning {
        content: String,
    },
    ToolCall {
        call_id: String,
        name: String,
        arguments: Value,
    },
    ToolResult {
        call_id: String,
        content: String,
        is_error: bool,
    },
    Config {
        set: Map<String, Value>,
    },
    /// Written by convo's compaction; its fields stay in `extra` until compaction types them.
    Compaction,
    /// A type this version does not know (a newer convo wrote it): passed through untouched.
    Other(String),
}

impl Kind {
    /// Whether this is what a conversation says (a message, a call, a result), not a record
    /// about it (a compaction, a config change): the end of a line of these is where a
    /// session that continues it carries on from.
    pub fn is_said(&self) -> bool {
        !matches!(self, Kind::Config { .. } | Kind::Compaction)
    }

    pub fn type_name(&self) -> &str {
        match self {
            Kind::System { .. } => "system",
            Kind::User { .. } => "user",
            Kind::Assistant { .. } => "assistant",
            Kind::Reasoning { .. } => "reasoning",
            Kind::ToolCall { .. } => "tool_call",
            Kind::ToolResult { .. } => "tool_result",
            Kind::Config { .. } => "config",
            Kind::Compaction => "compaction",
            Kind::Other(name) => name,
        }
    }
}

/// An event as given to `append`: `id` and `ts` may still be missing.
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    pub id: Option<String>,
    pub ts: Option<String>,
    pub kind: Kind,
    pub extra: Map<String, Value>,
    /// 1-based line of the input this came from, for error messages after parsing.
    pub line: usize,
}

impl Draft {
    pub fn new(kind: Kind) -> Self {
        Draft { id: None, ts: None, kind, extra: Map::new(), line: 1 }
    }

    pub fn into_event(self, id: String, ts: String) -> Event {
        Event { id, ts, kind: self.kind, extra: self.extra }
    }
}

/// What is wrong with one line, and where.
#[derive(Debug, thiserror::Error)]
#[error("line {line}{}: {kind}", field.as_ref().map(|f| format!(", field `{f}`")).unwrap_or_default())]
pub struct LineError {
    pub line: usize,
    pub field: Option<String>,
    #[source]
    pub kind: LineErrorKind,
}

/// What is wrong with a line or one of its fields.
#[derive(Debug, thiserror::Error)]
pub enum LineErrorKind {
    #[error("not valid JSON ({0})")]
    NotJson(#[source] serde_json::Error),
    #[error("expected a JSON object")]
    NotAnObject,
    #[error("missing")]
    Missing,
    #[error("must be a string")]
    NotAString,
    #[error("must not be empty")]
    Empty,
    #[error("must be true or false")]
    NotABool,
    #[error("must be an object")]
    FieldNotAnObject,
    #[error(transparent)]
    Id(#[from] IdError),
    #[error("not an RFC 3339 timestamp ({0})")]
    Timestamp(#[source] chrono::ParseError),
    #[error("`compaction` events are written by convo only (use `convo compact`)")]
    CompactionInput,
    #[error("unknown event type `{0}` (expected one of {types})", types = INPUT_TYPES.join(", "))]
    UnknownType(String),
    #[error("torn last line (no trailing newline)")]
    TornLastLine,
}

/// An event or call id outside the safe alphabet.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    #[error("must be 1 to 128 characters")]
    Length,
    #[error("invalid character {0:?} (allowed: letters, digits, - _ . :)")]
    Character(char),
}

impl LineError {
    fn new(line: usize, field: Option<&str>, kind: impl Into<LineErrorKind>) -> Self {
        LineError { line, field: field.map(str::to_owned), kind: kind.into() }
    }
}

/// Whether a line comes from a user (strict) or from a stored file (tolerant of newer types).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Input,
    Stored,
}

/// Parse JSONL input for `append`. Blank lines are skipped; the first bad line fails the
/// whole input, so nothing of it is written.
pub fn parse_input(text: &str) -> Result<Vec<Draft>, LineError> {
    let mut drafts = Vec::new();
    for (index, line) in text.lines().enumerate() {
        drafts.extend(parse_input_line(line, index + 1)?);
    }
    Ok(drafts)
}

/// One line of [`parse_input`], line `n` of the input (`None`: a blank line).
pub fn parse_input_line(line: &str, n: usize) -> Result<Option<Draft>, LineError> {
    if line.trim().is_empty() {
        return Ok(None);
    }
    parse_line(line, n, Source::Input).map(Some)
}

/// Parse JSONL whose lines may carry any type (an export of a conversation, compactions
/// included), as input: `id` and `ts` may be missing, unknown types are kept.
pub fn parse_input_any(text: &str) -> Result<Vec<Draft>, LineError> {
    let mut drafts = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        drafts.push(parse_line(line, index + 1, Source::Stored).or_else(|e| match e.field.as_deref() {
            // Stored parsing insists on id and ts; here they may be filled in later.
            Some("id") | Some("ts") if matches!(e.kind, LineErrorKind::Missing) => {
                parse_line(line, index + 1, Source::Input)
            }
            _ => Err(e),
        })?);
    }
    Ok(drafts)
}

/// Parse a stored event file. Every line must be a complete event with `id` and `ts`; a file
/// that does not end in a newline has a torn last line, which is reported, not guessed at.
pub fn parse_stored(text: &str) -> Result<Vec<Event>, LineError> {
    let mut events = Vec::new();
    let line_count = text.lines().count();
    if !text.is_empty() && !text.ends_with('\n') {
        return Err(LineError::new(line_count, None, LineErrorKind::TornLastLine));
    }
    for (index, line) in text.lines().enumerate() {
        let draft = parse_line(line, index + 1, Source::Stored)?;
        let (Some(id), Some(ts)) = (draft.id.clone(), draft.ts.clone()) else {
            unreachable!("stored parsing requires id and ts");
        };
        events.push(draft.into_event(id, ts));
    }
    Ok(events)
}

/// Check that a stored segment is lines convo could have written (each one JSON object,
/// no raw control character, a newline at the end) without building its events: what
/// copying stored lines through as they are needs, at several times the speed of
/// [`parse_stored`]. Field-level checks are `fsck`'s and the full parse's.
pub fn check_stored(text: &str) -> Result<(), LineError> {
    if !text.is_empty() && !text.ends_with('\n') {
        return Err(LineError::new(text.lines().count(), None, LineErrorKind::TornLastLine));
    }
    for (index, line) in text.lines().enumerate() {
        let n = index + 1;
        // serde_json writes no raw control character, but JSON allows tabs and carriage
        // returns between tokens, which would reach a terminal as they are.
        if !line.starts_with('{') || line.bytes().any(|b| b < 0x20) {
            return Err(LineError::new(n, None, LineErrorKind::NotAnObject));
        }
        serde_json::from_str::<serde::de::IgnoredAny>(line)
            .map_err(|e| LineError::new(n, None, LineErrorKind::NotJson(e)))?;
    }
    Ok(())
}

fn parse_line(line: &str, n: usize, source: Source) -> Result<Draft, LineError> {
    let value: Value = serde_json::from_str(line).map_err(|e| LineError::new(n, None, LineErrorKind::NotJson(e)))?;
    let Value::Object(mut map) = value else {
        return Err(LineError::new(n, None, LineErrorKind::NotAnObject));
    };
    let required = source == Source::Stored;
    let id = take_opt_string(&mut map, "id", n)?;
    if let Some(id) = &id {
        validate_event_id(id).map_err(|m| LineError::new(n, Some("id"), m))?;
    } else if required {
        return Err(LineError::new(n, Some("id"), LineErrorKind::Missing));
    }
    let ts = take_opt_string(&mut map, "ts", n)?;
    if let Some(ts) = &ts {
        chrono::DateTime::parse_from_rfc3339(ts)
            .map_err(|e| LineError::new(n, Some("ts"), LineErrorKind::Timestamp(e)))?;
    } else if required {
        return Err(LineError::new(n, Some("ts"), LineErrorKind::Missing));
    }
    let type_name = take_string(&mut map, "type", n)?;
    let kind = match type_name.as_str() {
        "system" => Kind::System { content: take_string(&mut map, "content", n)? },
        "user" => Kind::User { content: take_string(&mut map, "content", n)? },
        "assistant" => Kind::Assistant { content: take_string(&mut map, "content", n)? },
        "reasoning" => Kind::Reasoning { content: take_string(&mut map, "content", n)? },
        "tool_call" => {
            let call_id = take_string(&mut map, "call_id", n)?;
            validate_event_id(&call_id).map_err(|m| LineError::new(n, Some("call_id"), m))?;
            let name = take_string(&mut map, "name", n)?;
            if name.is_empty() {
                return Err(LineError::new(n, Some("name"), LineErrorKind::Empty));
            }
            let arguments = map.shift_remove("arguments").unwrap_or_else(|| Value::Object(Map::new()));
            Kind::ToolCall { call_id, name, arguments }
        }
        "tool_result" => {
            let call_id = take_string(&mut map, "call_id", n)?;
            let content = take_string(&mut map, "content", n)?;
            let is_error = match map.shift_remove("is_error") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(b)) => b,
                Some(_) => {
                    return Err(LineError::new(n, Some("is_error"), LineErrorKind::NotABool));
                }
            };
            Kind::ToolResult { call_id, content, is_error }
        }
        "config" => match map.shift_remove("set") {
            Some(Value::Object(set)) => Kind::Config { set },
            Some(_) => return Err(LineError::new(n, Some("set"), LineErrorKind::FieldNotAnObject)),
            None => return Err(LineError::new(n, Some("set"), LineErrorKind::Missing)),
        },
        "compaction" if source == Source::Stored => Kind::Compaction,
        "compaction" => {
            return Err(LineError::new(n, Some("type"), LineErrorKind::CompactionInput));
        }
        other if source == Source::Stored => Kind::Other(other.to_owned()),
        other => {
            return Err(LineError::new(n, Some("type"), LineErrorKind::UnknownType(other.to_owned())));
        }
    };
    Ok(Draft { id, ts, kind, extra: map, line: n })
}

fn take_opt_string(map: &mut Map<String, Value>, key: &str, n: usize) -> Result<Option<String>, LineError> {
    match map.shift_remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(LineError::new(n, Some(key), LineErrorKind::NotAString)),
    }
}

fn take_string(map: &mut Map<String, Value>, key: &str, n: usize) -> Result<String, LineError> {
    take_opt_string(map, key, n)?.ok_or_else(|| LineError::new(n, Some(key), LineErrorKind::Missing))
}

/// Event and call ids travel into commit trailers and filters: keep them to a safe alphabet.
pub fn validate_event_id(id: &str) -> Result<(), IdError> {
    if id.is_empty() || id.len() > 128 {
        return Err(IdError::Length);
    }
    if let Some(c) = id.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'))) {
        return Err(IdError::Character(c));
    }
    Ok(())
}

/// A set of event or call ids at 16 bytes an id rather than the id's text: an import of a
/// million events holds several, and their strings were most of its memory. Ids are told
/// apart by a 128-bit SipHash pair; two that collide (odds about n²/2¹²⁹) would read as a
/// repeated id, which renames or refuses input and never loses it.
#[derive(Debug, Default)]
pub struct IdSet(std::collections::HashSet<u128>);

impl IdSet {
    /// The 128 bits an id is told apart by (also the key of the Gemini CLI importer's own
    /// maps of message ids, which must tell ids apart exactly as this set does).
    pub(crate) fn key(id: &str) -> u128 {
        use std::hash::{DefaultHasher, Hash, Hasher};
        // DefaultHasher::new() has fixed keys, so the two halves are independent but stable.
        let half = |salt: u8| {
            let mut h = DefaultHasher::new();
            salt.hash(&mut h);
            id.hash(&mut h);
            h.finish()
        };
        (u128::from(half(0)) << 64) | u128::from(half(1))
    }

    /// Add an id; `false` when it was already there.
    pub fn insert(&mut self, id: &str) -> bool {
        self.0.insert(Self::key(id))
    }

    pub fn contains(&self, id: &str) -> bool {
        self.0.contains(&Self::key(id))
    }
}

impl Event {
    /// The stored form: `id`, `ts`, `type`, the type's fields, then unknown fields.
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        map.insert("id".into(), Value::String(self.id.clone()));
        map.insert("ts".into(), Value::String(self.ts.clone()));
        map.insert("type".into(), Value::String(self.kind.type_name().to_owned()));
        match &self.kind {
            Kind::System { content }
            | Kind::User { content }
            | Kind::Assistant { content }
            | Kind::Reasoning { content } => {
                map.insert("content".into(), Value::String(content.clone()));
            }
            Kind::ToolCall { call_id, name, arguments } => {
                map.insert("call_id".into(), Value::String(call_id.clone()));
                map.insert("name".into(), Value::String(name.clone()));
                map.insert("arguments".into(), arguments.clone());
            }
            Kind::ToolResult { call_id, content, is_error } => {
                map.insert("call_id".into(), Value::String(call_id.clone()));
                map.insert("content".into(), Value::String(content.clone()));
                map.insert("is_error".into(), Value::Bool(*is_error));
            }
            Kind::Config { set } => {
                map.insert("set".into(), Value::Object(set.clone()));
            }
            Kind::Compaction | Kind::Other(_) => {}
        }
        for (key, value) in &self.extra {
            map.entry(key.clone()).or_insert_with(|| value.clone());
        }
        Value::Object(map)
    }

    /// One JSONL line, newline included.
    pub fn to_line(&self) -> String {
        let mut line = self.to_value().to_string();
        line.push('\n');
        line
    }

    /// Characters a provider would be sent for this event: the basis of the chars/4 estimate.
    pub fn visible_chars(&self) -> u64 {
        let chars = match &self.kind {
            Kind::System { content }
            | Kind::User { content }
            | Kind::Assistant { content }
            | Kind::Reasoning { content }
            | Kind::ToolResult { content, .. } => content.chars().count(),
            Kind::ToolCall { name, arguments, .. } => name.chars().count() + arguments.to_string().chars().count(),
            Kind::Config { .. } | Kind::Compaction | Kind::Other(_) => 0,
        };
        chars as u64
    }
}

/// convo's one token estimate: characters / 4, rounded up (no tokenizer is configured).
/// Everything that prints an estimate uses this and says "~" and "(chars/4)".
pub fn tokens(chars: u64) -> u64 {
    chars.div_ceil(4)
}

/// Tokens a provider reported for a call, the same for every kind: `input_tokens` is the
/// prompt neither read from nor written to a cache (Anthropic's meaning; from OpenAI's
/// `prompt_tokens` the `cached_tokens` are taken out), so the whole prompt is input + cache
/// read + cache write. A field is present only when the provider reported it: unknown is
/// absent, never zero. Stored as an answer's `usage` (its provider's own object beside it
/// as `usage_raw`) and a model summary's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Usage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_tokens: Option<u64>,
    /// Of the output, what the model spent thinking (where the provider says).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
}

impl Usage {
    /// Anthropic's `usage` object (Claude Code's `message.usage`): `input_tokens` is the
    /// prompt outside the cache, `cache_read_input_tokens` and `cache_creation_input_tokens`
    /// the rest. `None` when it holds no count.
    pub fn from_anthropic(usage: &serde_json::Value) -> Option<Usage> {
        let n = |key: &str| usage.get(key).and_then(serde_json::Value::as_u64);
        let u = Usage {
            input_tokens: n("input_tokens"),
            output_tokens: n("output_tokens"),
            cache_read_tokens: n("cache_read_input_tokens"),
            cache_write_tokens: n("cache_creation_input_tokens"),
            reasoning_tokens: None,
        };
        (!u.is_empty()).then_some(u)
    }

    /// A Codex (OpenAI Responses) token count: `input_tokens` is the whole prompt, of which
    /// `cached_input_tokens` were read from the cache and `cache_write_input_tokens` (Codex
    /// 0.16x) written to it, so convo's input is what is left; `reasoning_output_tokens` are
    /// part of `output_tokens`. `None` when it holds no count.
    pub fn from_openai(usage: &serde_json::Value) -> Option<Usage> {
        let n = |key: &str| usage.get(key).and_then(serde_json::Value::as_u64);
        let (read, write) = (n("cached_input_tokens"), n("cache_write_input_tokens"));
        let u = Usage {
            input_tokens: n("input_tokens")
                .map(|i| i.saturating_sub(read.unwrap_or(0)).saturating_sub(write.unwrap_or(0))),
            output_tokens: n("output_tokens"),
            cache_read_tokens: read,
            cache_write_tokens: write,
            reasoning_tokens: n("reasoning_output_tokens"),
        };
        (!u.is_empty()).then_some(u)
    }

    /// A Gemini CLI message's `tokens` (`input`, `output`, `cached`, `thoughts`, `tool`,
    /// from the API's `usageMetadata`): the prompt (`input`, with the tool-use prompt
    /// `tool` beside it) includes what was read from the cache (`cached`), so convo's input
    /// is the rest; the output (`output`) leaves the thoughts out, which convo counts in it.
    /// `None` when it holds no count.
    pub fn from_gemini(tokens: &serde_json::Value) -> Option<Usage> {
        let n = |key: &str| tokens.get(key).and_then(serde_json::Value::as_u64);
        let (input, tool, cached) = (n("input"), n("tool"), n("cached"));
        let prompt = (input.is_some() || tool.is_some()).then(|| input.unwrap_or(0) + tool.unwrap_or(0));
        let thoughts = n("thoughts").filter(|t| *t > 0);
        let output = match (n("output"), thoughts) {
            (None, None) => None,
            (o, t) => Some(o.unwrap_or(0) + t.unwrap_or(0)),
        };
        let u = Usage {
            input_tokens: prompt.map(|p| p.saturating_sub(cached.unwrap_or(0))),
            output_tokens: output,
            cache_read_tokens: cached.filter(|c| *c > 0),
            cache_write_tokens: None,
            reasoning_tokens: thoughts,
        };
        (!u.is_empty()).then_some(u)
    }

    /// The usage `event` records (its `usage` field), if any.
    pub fn recorded(event: &Event) -> Option<Usage> {
        serde_json::from_value(event.extra.get("usage")?.clone()).ok()
    }

    /// Nothing reported.
    pub fn is_empty(&self) -> bool {
        *self == Usage::default()
    }

    /// The whole prompt, as context accounting counts it: input + cache read + cache write,
    /// when any of them was reported.
    pub fn prompt_tokens(&self) -> Option<u64> {
        let parts = [self.input_tokens, self.cache_read_tokens, self.cache_write_tokens];
        parts.iter().any(Option::is_some).then(|| parts.iter().flatten().sum())
    }

    /// Add `other`'s counts to these (several calls of one summary); a field neither
    /// reported stays absent.
    pub fn add(&mut self, other: &Usage) {
        let sum = |a: &mut Option<u64>, b: Option<u64>| {
            if let Some(b) = b {
                *a = Some(a.unwrap_or(0) + b);
            }
        };
        sum(&mut self.input_tokens, other.input_tokens);
        sum(&mut self.output_tokens, other.output_tokens);
        sum(&mut self.cache_read_tokens, other.cache_read_tokens);
        sum(&mut self.cache_write_tokens, other.cache_write_tokens);
        sum(&mut self.reasoning_tokens, other.reasoning_tokens);
    }
}

/// The tokens the providers reported for `events`, summed: each event's `usage`, except that
/// the events of one API message (`message_id`, Claude Code's lines of one message, each
/// recording the message's usage as it streamed) count once, by the last of them.
pub fn usage_of(events: &[Event]) -> Usage {
    let mut total = Usage::default();
    calls(events).iter().for_each(|(_, u)| total.add(u));
    total
}

/// The model calls `events` recorded usage for, in order, each with its usage: every event
/// with a `usage`, except that the events of one API message count once, by the last.
pub fn calls(events: &[Event]) -> Vec<(&Event, Usage)> {
    let mut calls = ByMessage::default();
    for e in events {
        if let Some(usage) = Usage::recorded(e) {
            calls.add(e, (e, usage));
        }
    }
    calls.out
}

/// A model call as a tally keeps it: when, by which model, what it used.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub ts: String,
    pub model: Option<String>,
    pub usage: Usage,
}

/// [`calls`] fed one event at a time, for a reader that holds one segment at a time.
#[derive(Debug, Default)]
pub struct CallLog(ByMessage<Call>);

impl CallLog {
    pub fn add(&mut self, event: &Event) {
        if let Some(usage) = Usage::recorded(event) {
            let model = event.extra.get("model").and_then(Value::as_str).map(str::to_owned);
            self.0.add(event, Call { ts: event.ts.clone(), model, usage });
        }
    }

    pub fn into_calls(self) -> Vec<Call> {
        self.0.out
    }
}

/// Calls in order, the events of one API message (`message_id`) counting once, by the last.
#[derive(Debug)]
struct ByMessage<T> {
    out: Vec<T>,
    /// Where each message's call is in `out`.
    last_of: std::collections::HashMap<String, usize>,
}

impl<T> Default for ByMessage<T> {
    fn default() -> Self {
        ByMessage { out: Vec::new(), last_of: Default::default() }
    }
}

impl<T> ByMessage<T> {
    fn add(&mut self, event: &Event, call: T) {
        match event.extra.get("message_id").and_then(Value::as_str) {
            Some(message) => match self.last_of.get(message) {
                Some(&i) => self.out[i] = call,
                None => {
                    self.last_of.insert(message.to_owned(), self.out.len());
                    self.out.push(call);
                }
            },
            None => self.out.push(call),
        }
    }
}

/// The field marking an event as its agent's scaffolding (`"meta": true`): text the agent
/// wrote into its own session (its environment, its instructions, a placeholder reply),
/// not the user's words or the model's. Importers set it; `"meta": false` says an event that
/// looks like scaffolding is not.
pub const META: &str = "meta";

/// Claude Code's `isMeta` on a line that is not scaffolding: a slash command's expanded
/// template, the instructions the model then follows. Another agent is handed it as the
/// user's words; Claude Code gets it back marked `isMeta`, as it wrote it.
pub const CLAUDE_META: &str = "claude_meta";

/// How Claude Code starts the line it writes before a local command's output (`isMeta`,
/// sometimes inside `<local-command-caveat>`): scaffolding.
const CLAUDE_CAVEATS: &[&str] = &[
    "Caveat: The messages below were generated by the user while running local commands.",
    "<local-command-caveat>Caveat: The messages below were generated by the user while running local commands.",
];

/// The texts Codex writes into its own session as messages, by the tag they start with
/// (exactly: Codex finds its blocks again the same way): its environment (a user message),
/// its permissions, skills and instructions (developer messages, older versions' user
/// messages).
const CODEX_BLOCKS: &[&str] = &[
    "<environment_context>",
    "<permissions instructions>",
    "<skills_instructions>",
    "<user_instructions>",
    "# AGENTS.md instructions for ",
];

/// The model Claude Code names on an assistant line it wrote itself ("No response
/// requested.", an API error) rather than the model.
pub(crate) const CLAUDE_SYNTHETIC_MODEL: &str = "<synthetic>";

/// Whether `text` starts as one of Codex's own context blocks does.
pub fn is_codex_block(text: &str) -> bool {
    CODEX_BLOCKS.iter().any(|tag| text.starts_with(tag))
}

/// Whether an event of `kind` with fields `extra` is its agent's scaffolding: marked so
/// ([`META`]), else recognised by its exact shape, so events imported before the mark
/// existed read the same: a user or system message that starts with one of Codex's block
/// tags, Claude Code's caveat before a local command's output, an assistant message of
/// Claude Code's `<synthetic>` model. Only an event of the agent that writes the shape (or
/// of no agent known) is recognised. Scaffolding starts no turn, is handed only to its own
/// agent, and takes no side in a view.
pub fn scaffolding(kind: &Kind, extra: &Map<String, Value>) -> bool {
    if let Some(Value::Bool(marked)) = extra.get(META) {
        return *marked;
    }
    // `interop::AGENT`, which this module may not name.
    let agent = extra.get("agent").and_then(Value::as_str);
    match kind {
        Kind::User { content } | Kind::System { content } => {
            (agent.is_none_or(|a| a == "codex") && is_codex_block(content))
                || (agent.is_none_or(|a| a == "claude-code")
                    && matches!(kind, Kind::User { .. })
                    && CLAUDE_CAVEATS.iter().any(|c| content.starts_with(c)))
        }
        Kind::Assistant { .. } => {
            agent.is_none_or(|a| a == "claude-code")
                && extra.get("model").and_then(Value::as_str) == Some(CLAUDE_SYNTHETIC_MODEL)
        }
        _ => false,
    }
}

/// Whether an event of `kind` with fields `extra` starts a turn: a user message that is not
/// scaffolding. The one rule of turn numbers, counts, plans and titles.
pub fn starts_turn(kind: &Kind, extra: &Map<String, Value>) -> bool {
    matches!(kind, Kind::User { .. }) && !scaffolding(kind, extra)
}

impl Event {
    /// See [`scaffolding`].
    pub fn is_scaffolding(&self) -> bool {
        scaffolding(&self.kind, &self.extra)
    }

    /// See [`starts_turn`].
    pub fn starts_turn(&self) -> bool {
        starts_turn(&self.kind, &self.extra)
    }
}

/// Counts derived from a sequence of events. Turns are never stored as truth: a `user` event
/// that is not scaffolding ([`starts_turn`]) starts the next turn, numbered from 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Stats {
    pub turns: u64,
    pub events: u64,
    pub chars: u64,
}

impl Stats {
    /// Which rule counted `turns`, kept beside counts cached on disk so that counts an older
    /// convo cached under another rule are counted again: 1, scaffolding starts no turn.
    pub const TURN_RULE: u32 = 1;

    pub fn of<'a>(events: impl IntoIterator<Item = &'a Event>) -> Stats {
        let mut stats = Stats::default();
        for event in events {
            stats.add(event);
        }
        stats
    }

    pub fn add(&mut self, event: &Event) {
        self.events += 1;
        self.chars += event.visible_chars();
        if event.starts_turn() {
            self.turns += 1;
        }
    }

    /// The token estimate of these events, see [`tokens`].
    pub fn tokens(&self) -> u64 {
        tokens(self.chars)
    }

    /// The 0-based number of the turn the last event belongs to, if any turn has started.
    pub fn current_turn(&self) -> Option<u64> {
        self.turns.checked_sub(1)
    }
}

/// The turn of each event: `None` before the first turn (a system prompt, an agent's
/// environment).
pub fn turn_numbers(events: &[Event]) -> Vec<Option<u64>> {
    let mut turn: Option<u64> = None;
    events
        .iter()
        .map(|event| {
            if event.starts_turn() {
                turn = Some(turn.map_or(0, |t| t + 1));
            }
            turn
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_counts_an_api_message_once_by_its_last_event() {
        let event = |message: Option<&str>, output: u64| {
            let mut e = Draft::new(Kind::Assistant { content: "x".into() }).into_event("e".into(), "t".into());
            if let Some(m) = message {
                e.extra.insert("message_id".into(), serde_json::json!(m));
            }
            e.extra.insert("usage".into(), serde_json::json!({"input_tokens": 10, "output_tokens": output}));
            e
        };
        let events = [event(Some("m1"), 5), event(Some("m1"), 140), event(None, 7), event(Some("m2"), 1)];
        let total = usage_of(&events);
        assert_eq!((total.input_tokens, total.output_tokens), (Some(30), Some(148)));
        assert!(usage_of(&[]).is_empty());
    }

    #[test]
    fn id_set_tells_a_million_ids_apart_and_catches_repeats() {
        let mut set = IdSet::default();
        for n in 0..1_000_000 {
            assert!(set.insert(&format!("toolu_{n:012}")), "{n} read as a repeat");
        }
        assert!(set.contains("toolu_000000000042"));
        assert!(!set.contains("toolu_000001000000"));
        assert!(!set.insert("toolu_000000000042"));
    }

    #[test]
    fn unknown_fields_survive_a_round_trip_in_order() {
        let line =
            r#"{"id":"e1","ts":"2026-01-01T00:00:00Z","type":"user","content":"hi","zeta":1,"alpha":{"x":[1,2]}}"#;
        let events = parse_stored(&format!("{line}\n")).unwrap();
        assert_eq!(events[0].to_line(), format!("{line}\n"));
    }

    #[test]
    fn unknown_type_in_stored_file_is_carried_through() {
        let line = r#"{"id":"e1","ts":"2026-01-01T00:00:00Z","type":"hologram","beam":"on"}"#;
        let events = parse_stored(&format!("{line}\n")).unwrap();
        assert_eq!(events[0].kind, Kind::Other("hologram".into()));
        assert_eq!(events[0].to_line().trim_end(), line);
    }

    #[test]
    fn input_rejects_unknown_type_and_names_line_and_field() {
        let err = parse_input("{\"type\":\"user\",\"content\":\"a\"}\n{\"type\":\"usr\"}").unwrap_err();
        assert_eq!(err.line, 2);
        assert_eq!(err.field.as_deref(), Some("type"));
    }

    #[test]
    fn input_rejects_missing_content() {
        let err = parse_input(r#"{"type":"assistant"}"#).unwrap_err();
        assert_eq!(err.to_string(), "line 1, field `content`: missing");
    }

    #[test]
    fn exports_may_leave_out_id_and_ts_but_no_other_field() {
        let drafts = parse_input_any(r#"{"type":"user","content":"hi"}"#).unwrap();
        assert_eq!((drafts[0].id.as_deref(), drafts[0].ts.as_deref()), (None, None));
        let err = parse_input_any(r#"{"id":"a","ts":"2026-01-01T00:00:00Z","type":"user"}"#).unwrap_err();
        assert!(matches!(err.kind, LineErrorKind::Missing), "{err}");
        assert_eq!(err.field.as_deref(), Some("content"));
    }

    #[test]
    fn input_rejects_non_object_and_bad_json() {
        assert!(matches!(parse_input("[1]").unwrap_err().kind, LineErrorKind::NotAnObject));
        assert!(parse_input("{nope").unwrap_err().to_string().starts_with("line 1: not valid JSON"));
    }

    #[test]
    fn input_rejects_path_like_ids() {
        let err = parse_input(r#"{"id":"../x","type":"user","content":"a"}"#).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("id"));
    }

    #[test]
    fn torn_last_line_is_reported() {
        let err = parse_stored(
            "{\"id\":\"e1\",\"ts\":\"2026-01-01T00:00:00Z\",\"type\":\"user\",\"content\":\"a\"}\n{\"id\":",
        )
        .unwrap_err();
        assert_eq!(err.line, 2);
        assert_eq!(err.to_string(), "line 2: torn last line (no trailing newline)");
    }

    fn with(kind: Kind, extra: serde_json::Value) -> Event {
        let mut e = Draft::new(kind).into_event("e".into(), "2026-01-01T00:00:00Z".into());
        if let Value::Object(map) = extra {
            e.extra = map;
        }
        e
    }

    #[test]
    fn scaffolding_is_recognised_by_its_exact_shapes_and_marks() {
        use serde_json::json;
        let user = |text: &str| Kind::User { content: text.into() };
        let system = |text: &str| Kind::System { content: text.into() };
        let said = |text: &str| Kind::Assistant { content: text.into() };
        for (kind, extra) in [
            (user("<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"), json!({"agent": "codex"})),
            (user("<environment_context>\n</environment_context>"), json!({})),
            (user("# AGENTS.md instructions for /w\n\n<INSTRUCTIONS>x</INSTRUCTIONS>"), json!({})),
            (user("<user_instructions>\nBe brief.\n</user_instructions>"), json!({})),
            (
                system("<permissions instructions>\nsandbox\n</permissions instructions>"),
                json!({"codex_role": "developer"}),
            ),
            (system("<skills_instructions>\n## Skills\n</skills_instructions>\n<permissions instructions>"), json!({})),
            (said("No response requested."), json!({"agent": "claude-code", "model": "<synthetic>"})),
            (
                user("Caveat: The messages below were generated by the user while running local commands."),
                json!({"meta": true}),
            ),
            (
                user(
                    "Caveat: The messages below were generated by the user while running local commands. DO NOT respond",
                ),
                json!({"claude_meta": true}),
            ),
        ] {
            assert!(with(kind.clone(), extra.clone()).is_scaffolding(), "{kind:?} {extra}");
            assert!(!with(kind, extra).starts_turn());
        }
        for (kind, extra) in [
            (user("what is in notes.txt?"), json!({"agent": "codex"})),
            // Not at the start, or another agent's: the user's own words.
            (user("see <environment_context> above"), json!({})),
            // A command's expanded template: what the model was asked.
            (user("Split complex tasks into independent subtasks"), json!({"claude_meta": true})),
            (user(" <environment_context>"), json!({})),
            (user("<environment_context>"), json!({"agent": "claude-code"})),
            (user("Caveat: The messages below were generated by the user"), json!({"agent": "claude-code"})),
            (said("No response requested."), json!({"agent": "claude-code", "model": "claude-opus-4-1"})),
            (said("x"), json!({"agent": "codex", "model": "<synthetic>"})),
            (user("<environment_context>"), json!({"meta": false})),
        ] {
            assert!(!with(kind.clone(), extra.clone()).is_scaffolding(), "{kind:?} {extra}");
        }
    }

    #[test]
    fn scaffolding_starts_no_turn() {
        use serde_json::json;
        let events = [
            with(Kind::System { content: "<permissions instructions>".into() }, json!({"agent": "codex"})),
            with(
                Kind::User { content: "<environment_context></environment_context>".into() },
                json!({"agent": "codex"}),
            ),
            with(Kind::User { content: "hi".into() }, json!({})),
            with(Kind::User { content: "Caveat: …".into() }, json!({"meta": true})),
            with(Kind::Assistant { content: "No response requested.".into() }, json!({"model": "<synthetic>"})),
            with(Kind::User { content: "again".into() }, json!({})),
        ];
        assert_eq!(turn_numbers(&events), [None, None, Some(0), Some(0), Some(0), Some(1)]);
        assert_eq!(Stats::of(&events).turns, 2);
        let outlined = outline::Outlined::of(&events);
        assert_eq!(outlined.turns(), turn_numbers(&events));
    }

    #[test]
    fn turns_start_at_user_events() {
        let text = [
            r#"{"id":"a","ts":"2026-01-01T00:00:00Z","type":"system","content":"s"}"#,
            r#"{"id":"b","ts":"2026-01-01T00:00:00Z","type":"user","content":"u"}"#,
            r#"{"id":"c","ts":"2026-01-01T00:00:00Z","type":"assistant","content":"a"}"#,
            r#"{"id":"d","ts":"2026-01-01T00:00:00Z","type":"user","content":"u2"}"#,
        ]
        .join("\n")
            + "\n";
        let events = parse_stored(&text).unwrap();
        assert_eq!(turn_numbers(&events), vec![None, Some(0), Some(0), Some(1)]);
        let stats = Stats::of(&events);
        assert_eq!((stats.turns, stats.events, stats.current_turn()), (2, 4, Some(1)));
    }
}
