//! An event's outline: everything the projection and compaction planning need to know about
//! it (id, time, type, call id and tool name, sizes) without its text.
//!
//! A 55 MB conversation outlines to a few MB, so planning a compaction or projecting the
//! view can read the outlines (kept by the store per segment) instead of every event. What
//! an outline cannot answer (the text itself: a digest, a model summary, a truncation to
//! N lines) still needs the events.
//!
//! Outlines of stored lines come from a borrowing parse that skips the text; a line that
//! parse does not take is outlined from the full parse instead ([`parse_stored`]), so a
//! segment is outlined exactly when it parses, and the same way.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::short::Short;
use super::trail::{Outcome, short_args};
use super::{Event, Kind, LineError, parse_stored, validate_event_id};

/// An event's type, with the fields the projection matches on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    System,
    User,
    Assistant,
    Reasoning,
    ToolCall { call_id: Short, name: Short },
    ToolResult { call_id: Short, is_error: bool },
    Config,
    Compaction,
    Other,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outline {
    pub id: Short,
    pub ts: Short,
    pub shape: Shape,
    /// [`Event::visible_chars`].
    pub chars: u64,
    /// Bytes a compaction's `min_bytes` is compared with: a result's content, a call's
    /// arguments as sent (an empty object counts 0).
    pub size: u64,
    /// Where, in the stored line, the value a compaction may replace (a result's `content`,
    /// a call's `arguments`) starts and ends; `None` when the line was not outlined from its
    /// bytes (it came from an [`Event`], or only the full parse took it).
    pub span: Option<(u32, u32)>,
    /// What a compaction's placeholder tells of a call or a result (see [`Brief`]); `None`
    /// when there is nothing to tell.
    pub brief: Option<Box<Brief>>,
    /// The event is its agent's scaffolding ([`super::scaffolding`]).
    pub meta: bool,
}

/// The trail an event leaves in a placeholder, read once when it is outlined (and kept in
/// the outline index), so a view is decided and measured without the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Brief {
    /// A call's [`short_args`].
    Call(Vec<(String, String)>),
    /// A result's [`Outcome`].
    Result(Outcome),
}

impl Brief {
    fn of_call(arguments: &serde_json::Value) -> Option<Box<Brief>> {
        let args = short_args(arguments);
        (!args.is_empty()).then(|| Box::new(Brief::Call(args)))
    }

    fn of_result(content: &str, is_error: bool) -> Option<Box<Brief>> {
        let outcome = Outcome::of(content, is_error);
        (outcome != Outcome::default()).then(|| Box::new(Brief::Result(outcome)))
    }

    /// A call's short arguments (none for anything else).
    pub fn args(brief: &Option<Box<Brief>>) -> &[(String, String)] {
        match brief.as_deref() {
            Some(Brief::Call(args)) => args,
            _ => &[],
        }
    }

    /// A result's outcome (the empty one for anything else).
    pub fn outcome(brief: &Option<Box<Brief>>) -> Option<&Outcome> {
        match brief.as_deref() {
            Some(Brief::Result(outcome)) => Some(outcome),
            _ => None,
        }
    }
}

/// Whether a result's content, as a JSON string literal, may have an [`Outcome`] to read:
/// every word the outcome looks for, or an escape that could hide one. The rest (most
/// results) are not decoded at all.
fn may_tell(raw: &str) -> bool {
    static WORDS: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?i)error|failed|panic|traceback|exception|exit|commit|[0-9a-f]{7}\]|\\u")
            .expect("a valid regex")
    });
    WORDS.is_match(raw)
}

impl Outline {
    /// The outline of an event held in memory.
    pub fn of(event: &Event) -> Outline {
        let mut brief = None;
        let (shape, size) = match &event.kind {
            Kind::System { .. } => (Shape::System, 0),
            Kind::User { .. } => (Shape::User, 0),
            Kind::Assistant { .. } => (Shape::Assistant, 0),
            Kind::Reasoning { .. } => (Shape::Reasoning, 0),
            Kind::ToolCall { call_id, name, arguments } => {
                let size = match arguments {
                    serde_json::Value::Object(map) if map.is_empty() => 0,
                    other => other.to_string().len() as u64,
                };
                brief = Brief::of_call(arguments);
                (Shape::ToolCall { call_id: Short::new(call_id), name: Short::new(name) }, size)
            }
            Kind::ToolResult { call_id, is_error, content } => {
                brief = Brief::of_result(content, *is_error);
                (Shape::ToolResult { call_id: Short::new(call_id), is_error: *is_error }, content.len() as u64)
            }
            Kind::Config { .. } => (Shape::Config, 0),
            Kind::Compaction => (Shape::Compaction, 0),
            Kind::Other(_) => (Shape::Other, 0),
        };
        Outline {
            id: Short::new(&event.id),
            ts: Short::new(&event.ts),
            shape,
            chars: event.visible_chars(),
            size,
            span: None,
            brief,
            meta: event.is_scaffolding(),
        }
    }

    /// Whether the event starts a turn ([`super::starts_turn`]).
    pub fn starts_turn(&self) -> bool {
        self.shape == Shape::User && !self.meta
    }
}

/// A conversation as outlines, with the few events read in full that outlines do not
/// describe: compactions (the projection applies them) and config events (config layers).
#[derive(Debug, Clone, Default)]
pub struct Outlined {
    pub outlines: Vec<Outline>,
    /// Each compaction event, with its index in `outlines`.
    pub compactions: Vec<(usize, Event)>,
    pub configs: Vec<Event>,
    /// Call ids and tool names numbered, made the first time a projection asks.
    calls: std::sync::OnceLock<Calls>,
}

/// The call ids and tool names of a conversation numbered, so a projection pairs calls with
/// results by index: hashing every id string again, in each pass, was most of a
/// projection's time on long conversations.
#[derive(Debug, Clone, Default)]
pub struct Calls {
    /// For each outline, its call id's number (a call or a result), or [`Calls::NONE`].
    pub of: Vec<u32>,
    /// How many distinct call ids there are.
    pub count: usize,
    /// For each outline, its tool name's number in `names` (a call), or [`Calls::NONE`].
    pub name_of: Vec<u32>,
    pub names: Vec<std::sync::Arc<str>>,
}

impl Calls {
    pub const NONE: u32 = u32::MAX;

    fn of(outlines: &[Outline]) -> Calls {
        let mut ids: foldhash::HashMap<&str, u32> = Default::default();
        let mut names: foldhash::HashMap<&str, u32> = Default::default();
        let mut calls = Calls {
            of: Vec::with_capacity(outlines.len()),
            name_of: Vec::with_capacity(outlines.len()),
            ..Calls::default()
        };
        for outline in outlines {
            let (id, name) = match &outline.shape {
                Shape::ToolCall { call_id, name } => (Some(call_id.as_str()), Some(name.as_str())),
                Shape::ToolResult { call_id, .. } => (Some(call_id.as_str()), None),
                _ => (None, None),
            };
            calls.of.push(id.map_or(Calls::NONE, |id| {
                let next = ids.len() as u32;
                *ids.entry(id).or_insert(next)
            }));
            calls.name_of.push(name.map_or(Calls::NONE, |name| {
                *names.entry(name).or_insert_with(|| {
                    calls.names.push(std::sync::Arc::from(name));
                    calls.names.len() as u32 - 1
                })
            }));
        }
        calls.count = ids.len();
        calls
    }
}

impl Outlined {
    pub fn of(events: &[Event]) -> Outlined {
        let mut outlined = Outlined { outlines: Vec::with_capacity(events.len()), ..Outlined::default() };
        for event in events {
            outlined.push(Outline::of(event), || event.clone());
        }
        outlined
    }

    /// Add an event's outline; `event` gives the whole event when the outline alone is not
    /// enough (a compaction or config event).
    pub fn push(&mut self, outline: Outline, event: impl FnOnce() -> Event) {
        // Numbered again, with this one, when next asked.
        self.calls.take();
        match outline.shape {
            Shape::Compaction => self.compactions.push((self.outlines.len(), event())),
            Shape::Config => self.configs.push(event()),
            _ => {}
        }
        self.outlines.push(outline);
    }

    /// The call ids and tool names numbered (made once, then kept).
    pub fn calls(&self) -> &Calls {
        self.calls.get_or_init(|| Calls::of(&self.outlines))
    }

    /// Turn numbers: each user event that is not scaffolding starts the next turn.
    pub fn turns(&self) -> Vec<Option<u64>> {
        let mut turn: Option<u64> = None;
        self.outlines
            .iter()
            .map(|o| {
                if o.starts_turn() {
                    turn = Some(turn.map_or(0, |t| t + 1));
                }
                turn
            })
            .collect()
    }
}

/// The fields of a stored line an outline needs; the rest is skipped unread.
#[derive(Deserialize)]
struct Fields<'a> {
    #[serde(borrow)]
    id: Cow<'a, str>,
    #[serde(borrow)]
    ts: Cow<'a, str>,
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(borrow, default)]
    call_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
    #[serde(default)]
    is_error: Option<bool>,
    #[serde(borrow, default)]
    set: Option<&'a RawValue>,
    // What recognising scaffolding reads ([`super::scaffolding`]).
    #[serde(default)]
    meta: Option<bool>,
    #[serde(borrow, default)]
    agent: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
}

/// The outlines of a stored segment's lines, in order; the full parse's error when a line
/// is not a stored event.
pub fn outline_segment(text: &str) -> Result<Vec<Outline>, LineError> {
    let fast: Option<Vec<Outline>> =
        if text.ends_with('\n') || text.is_empty() { text.lines().map(outline_line).collect() } else { None };
    match fast {
        Some(outlines) => Ok(outlines),
        // The fast parse declined a line: the full parse says why, or outlines what it
        // accepts (a duplicate key, say, which it takes and the fast parse does not).
        None => Ok(parse_stored(text)?.iter().map(Outline::of).collect()),
    }
}

/// One stored line's outline; `None` when it is not exactly what the fast parse expects.
fn outline_line(line: &str) -> Option<Outline> {
    // Only what serde_json writes: a raw control character could be JSON whitespace.
    if !line.starts_with('{') || line.bytes().any(|b| b < 0x20) {
        return None;
    }
    let f: Fields = serde_json::from_str(line).ok()?;
    validate_event_id(&f.id).ok()?;
    chrono::DateTime::parse_from_rfc3339(&f.ts).ok()?;
    let span = |raw: &RawValue| {
        let start = raw.get().as_ptr() as usize - line.as_ptr() as usize;
        Some((u32::try_from(start).ok()?, u32::try_from(start + raw.get().len()).ok()?))
    };
    let text = |raw: Option<&RawValue>| -> Option<(u64, u64)> { decoded_size(raw?.get()) };
    let meta = scaffolding_of(&f)?;
    let mut brief = None;
    let (shape, chars, size, at) = match f.kind.as_ref() {
        kind @ ("system" | "user" | "assistant" | "reasoning") => {
            let (chars, _) = text(f.content)?;
            let shape = match kind {
                "system" => Shape::System,
                "user" => Shape::User,
                "assistant" => Shape::Assistant,
                _ => Shape::Reasoning,
            };
            (shape, chars, 0, None)
        }
        "tool_call" => {
            let call_id = f.call_id?;
            validate_event_id(&call_id).ok()?;
            let name = f.name?;
            if name.is_empty() {
                return None;
            }
            // Without arguments the event holds `{}`, and that is what is sent.
            let (raw_len, raw_chars, at) = match f.arguments {
                Some(raw) if raw.get() != "null" => {
                    (raw.get().len() as u64, raw.get().chars().count() as u64, span(raw)?)
                }
                _ => return None,
            };
            let size = if f.arguments.is_some_and(|a| a.get() == "{}") { 0 } else { raw_len };
            if size > 0 {
                brief = Brief::of_call(&serde_json::from_str(f.arguments?.get()).ok()?);
            }
            let chars = name.chars().count() as u64 + raw_chars;
            (Shape::ToolCall { call_id: Short::new(&call_id), name: Short::new(&name) }, chars, size, Some(at))
        }
        "tool_result" => {
            let call_id = f.call_id?;
            let content = f.content?;
            let (chars, bytes) = decoded_size(content.get())?;
            let is_error = f.is_error.unwrap_or(false);
            if is_error || may_tell(content.get()) {
                brief = Brief::of_result(&serde_json::from_str::<Cow<str>>(content.get()).ok()?, is_error);
            }
            let shape = Shape::ToolResult { call_id: Short::new(&call_id), is_error };
            (shape, chars, bytes, Some(span(content)?))
        }
        // Their fields are read in full where they are needed (config layers, records).
        "config" if f.set?.get().starts_with('{') => (Shape::Config, 0, 0, None),
        "config" => return None,
        "compaction" => (Shape::Compaction, 0, 0, None),
        _ => (Shape::Other, 0, 0, None),
    };
    Some(Outline { id: Short::new(&f.id), ts: Short::new(&f.ts), shape, chars, size, span: at, brief, meta })
}

/// [`super::scaffolding`] of a line read by the fast parse: the same answer from the fields
/// it read (a test holds them to it), the text decoded only when it may start with a
/// Codex block's tag.
fn scaffolding_of(f: &Fields) -> Option<bool> {
    if let Some(marked) = f.meta {
        return Some(marked);
    }
    Some(match f.kind.as_ref() {
        "user" | "system" => {
            let raw = f.content?.get();
            // A Codex tag starts with `<` or `#`, Claude Code's caveat with `C` or `<`, or
            // either with an escape.
            if !["\"<", "\"#", "\"C", "\"\\"].iter().any(|p| raw.starts_with(p)) {
                return Some(false);
            }
            let content = serde_json::from_str::<Cow<str>>(raw).ok()?.into_owned();
            let kind = if f.kind == "user" { super::Kind::User { content } } else { super::Kind::System { content } };
            let mut extra = serde_json::Map::new();
            if let Some(agent) = &f.agent {
                extra.insert("agent".into(), serde_json::Value::String(agent.to_string()));
            }
            super::scaffolding(&kind, &extra)
        }
        "assistant" => {
            let agent_is = |name: &str| f.agent.as_deref().is_none_or(|a| a == name);
            agent_is("claude-code") && f.model.as_deref() == Some(super::CLAUDE_SYNTHETIC_MODEL)
        }
        _ => false,
    })
}

/// Characters and bytes of the string a JSON string literal (quotes included) decodes to;
/// `None` when `raw` is not a string.
fn decoded_size(raw: &str) -> Option<(u64, u64)> {
    let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
    let bytes = inner.as_bytes();
    let (mut chars, mut len, mut i) = (0u64, 0u64, 0usize);
    while i < bytes.len() {
        let b = bytes[i];
        if b != b'\\' {
            // A UTF-8 continuation byte adds a byte, not a character.
            chars += u64::from(b & 0xC0 != 0x80);
            len += 1;
            i += 1;
            continue;
        }
        match bytes.get(i + 1)? {
            b'u' => {
                let unit = u32::from_str_radix(inner.get(i + 2..i + 6)?, 16).ok()?;
                i += 6;
                if (0xD800..0xDC00).contains(&unit) {
                    // A surrogate pair is one character of four bytes (serde_json refuses a
                    // lone surrogate, so a stored line has none).
                    if inner.get(i..i + 2)? != "\\u" {
                        return None;
                    }
                    i += 6;
                    len += 4;
                } else {
                    len += char::from_u32(unit)?.len_utf8() as u64;
                }
                chars += 1;
            }
            _ => {
                chars += 1;
                len += 1;
                i += 2;
            }
        }
    }
    Some((chars, len))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full(line: &str) -> Outline {
        Outline::of(&parse_stored(&format!("{line}\n")).unwrap()[0])
    }

    #[test]
    fn a_stored_line_outlines_as_its_parsed_event_does() {
        let lines = [
            r#"{"id":"a","ts":"2026-01-01T00:00:00Z","type":"user","content":"h\u00e9llo \"x\"\n\ud83d\ude00 ok"}"#,
            r#"{"id":"b","ts":"2026-01-01T00:00:00Z","type":"tool_call","call_id":"c1","name":"B\u00e4sh","arguments":{"cmd":"ls \"é\""}}"#,
            r#"{"id":"c","ts":"2026-01-01T00:00:00Z","type":"tool_call","call_id":"c1","name":"Bash","arguments":{}}"#,
            r#"{"id":"d","ts":"2026-01-01T00:00:00Z","type":"tool_result","call_id":"c1","content":"日本\t語\u0001","is_error":true,"x":1}"#,
            r#"{"id":"d2","ts":"2026-01-01T00:00:00Z","type":"tool_result","call_id":"c1","content":"Exit code 1\nx \u0045rror: y\n[main 1a2b3c4] z","is_error":false}"#,
            r#"{"id":"d3","ts":"2026-01-01T00:00:00Z","type":"tool_call","call_id":"c1","name":"Bash","arguments":{"command":["a","b"],"n":1}}"#,
            r#"{"id":"e","ts":"2026-01-01T00:00:00Z","type":"config","set":{"a":1}}"#,
            r#"{"id":"f","ts":"2026-01-01T00:00:00Z","type":"frobnicate","content":3}"#,
            // Scaffolding, marked or recognised, and what only looks like it.
            r#"{"id":"g","ts":"2026-01-01T00:00:00Z","type":"user","content":"<environment_context>\n</environment_context>","agent":"codex"}"#,
            r#"{"id":"h","ts":"2026-01-01T00:00:00Z","type":"user","content":"\u003cenvironment_context>","meta":true}"#,
            r#"{"id":"i","ts":"2026-01-01T00:00:00Z","type":"user","content":"\u003cenvironment_context>"}"#,
            r##"{"id":"j","ts":"2026-01-01T00:00:00Z","type":"system","content":"# AGENTS.md instructions for /w","agent":"codex"}"##,
            r#"{"id":"k","ts":"2026-01-01T00:00:00Z","type":"user","content":"<environment_context>","agent":"claude-code"}"#,
            r#"{"id":"l","ts":"2026-01-01T00:00:00Z","type":"user","content":"Caveat: x","claude_meta":true}"#,
            r#"{"id":"l2","ts":"2026-01-01T00:00:00Z","type":"user","content":"Caveat: The messages below were generated by the user while running local commands. DO NOT respond.","claude_meta":true}"#,
            r#"{"id":"l3","ts":"2026-01-01T00:00:00Z","type":"user","content":"\u003clocal-command-caveat>Caveat: The messages below were generated by the user while running local commands.</local-command-caveat>","agent":"claude-code"}"#,
            r#"{"id":"l4","ts":"2026-01-01T00:00:00Z","type":"user","content":"Caveat: The messages below were generated by the user while running local commands.","agent":"codex"}"#,
            r#"{"id":"m","ts":"2026-01-01T00:00:00Z","type":"assistant","content":"No response requested.","model":"<synthetic>"}"#,
            r#"{"id":"n","ts":"2026-01-01T00:00:00Z","type":"assistant","content":"x","model":"<synthetic>","agent":"codex"}"#,
            r#"{"id":"o","ts":"2026-01-01T00:00:00Z","type":"user","content":"<environment_context>","meta":false}"#,
            r#"{"id":"p","ts":"2026-01-01T00:00:00Z","type":"tool_call","call_id":"c1","name":"Bash","arguments":{},"meta":true}"#,
        ];
        for line in lines {
            let fast = outline_line(line).unwrap_or_else(|| panic!("fast parse declined {line}"));
            assert_eq!(Outline { span: None, ..fast.clone() }, full(line), "{line}");
            if let Some((a, b)) = fast.span {
                let value: serde_json::Value = serde_json::from_str(&line[a as usize..b as usize]).unwrap();
                assert!(value.is_string() || value.is_object(), "{line}: span {a}..{b}");
            }
        }
    }

    #[test]
    fn lines_the_fast_parse_declines_are_outlined_by_the_full_parse_or_refused() {
        // A duplicate key: the full parse takes the last one.
        let dup =
            "{\"id\":\"a\",\"ts\":\"2026-01-01T00:00:00Z\",\"type\":\"user\",\"content\":\"x\",\"content\":\"yy\"}\n";
        assert_eq!(outline_segment(dup).unwrap()[0].chars, 2);
        // Not an event: the full parse's error, with its line.
        let bad =
            "{\"id\":\"a\",\"ts\":\"2026-01-01T00:00:00Z\",\"type\":\"user\",\"content\":\"x\"}\n{\"id\":\"b\"}\n";
        assert_eq!(outline_segment(bad).unwrap_err().line, 2);
        assert!(outline_segment("{\"id\":\"a\"").is_err());
    }
}
