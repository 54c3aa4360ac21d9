//! Import from and export to other tools' formats. Importers turn a file into drafts of
//! convo events (and the compactions the source tool had made), with a report of what was
//! taken and what was skipped; they never touch git. Exporters render events or views.

pub mod claude_code;
pub mod codex;
pub mod export;
pub mod messages;
pub mod openhands;

use std::collections::{BTreeMap, HashSet};

use serde_json::{Map, Value};

use crate::clock::Clock;
use crate::compaction::{Compaction, Record, Summary};
use crate::event::{Draft, Kind, validate_event_id};

/// A format convo can read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// convo's own JSONL (`show --format jsonl`, `export --format jsonl`).
    Convo,
    ClaudeCode,
    Codex,
    /// A Chat Completions body, a bare `messages` array, or a SWE-agent trajectory.
    Openai,
    /// A Messages body or a bare `messages` array.
    Anthropic,
    Openhands,
}

impl Format {
    pub const ALL: [Format; 6] =
        [Format::Convo, Format::ClaudeCode, Format::Codex, Format::Openhands, Format::Openai, Format::Anthropic];

    pub fn name(self) -> &'static str {
        match self {
            Format::Convo => "jsonl",
            Format::ClaudeCode => "claude-code",
            Format::Codex => "codex",
            Format::Openai => "openai",
            Format::Anthropic => "anthropic",
            Format::Openhands => "openhands",
        }
    }

    pub fn parse(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// What an import took and left.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Lines (or array items) read.
    pub records: usize,
    pub events: BTreeMap<&'static str, usize>,
    /// Why records or parts of them were not imported, and how many.
    pub skipped: BTreeMap<String, usize>,
    pub compactions: usize,
}

/// One conversation from a file.
#[derive(Debug, Clone)]
pub struct Conversation {
    pub title: Option<String>,
    pub drafts: Vec<Draft>,
    /// For a subagent's conversation: the index (in [`Imported::conversations`]) of its parent.
    pub parent: Option<usize>,
}

#[derive(Debug, Clone)]
pub struct Imported {
    pub format: Format,
    /// The main conversation first, then subagents' (Claude Code sidechains).
    pub conversations: Vec<Conversation>,
    pub report: Report,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImportError {
    #[error("{0}")]
    Invalid(String),
    #[error("not a format convo reads ({})", tried.iter().map(|(f, why)| format!("{}: {why}", f.name())).collect::<Vec<_>>().join("; "))]
    Unknown { tried: Vec<(Format, String)> },
}

/// Read `text` as `format`, or as the first format that fits.
pub fn import(text: &str, format: Option<Format>, clock: &Clock) -> Result<Imported, ImportError> {
    if text.trim().is_empty() {
        return Err(ImportError::Invalid("the file is empty".into()));
    }
    if text.contains('\0') {
        return Err(ImportError::Invalid("the file is binary, not text".into()));
    }
    match format {
        Some(format) => parse(format, text, clock).map_err(ImportError::Invalid),
        None => {
            let mut tried = Vec::new();
            for format in Format::ALL {
                match parse(format, text, clock) {
                    Ok(imported) => return Ok(imported),
                    Err(why) => tried.push((format, why)),
                }
            }
            Err(ImportError::Unknown { tried })
        }
    }
}

fn parse(format: Format, text: &str, clock: &Clock) -> Result<Imported, String> {
    match format {
        Format::Convo => convo_jsonl(text),
        Format::ClaudeCode => claude_code::parse(text, clock),
        Format::Codex => codex::parse(text, clock),
        Format::Openai => messages::openai(text, clock),
        Format::Anthropic => messages::anthropic(text, clock),
        Format::Openhands => openhands::parse(text, clock),
    }
}

/// JSONL lines as JSON values; the error names the first bad line.
pub(crate) fn jsonl_values(text: &str) -> Result<Vec<Value>, String> {
    if text.trim_start().starts_with('[') {
        return Err("a JSON array, not JSON lines".into());
    }
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| format!("line {}: not valid JSON ({e})", i + 1)))
        .collect()
}

fn convo_jsonl(text: &str) -> Result<Imported, String> {
    let drafts = crate::event::parse_input_any(text).map_err(|e| e.to_string())?;
    if drafts.iter().any(|d| d.id.is_none()) {
        return Err("events without ids (plain input belongs in `convo append`)".into());
    }
    let mut report = Report { records: drafts.len(), ..Default::default() };
    for d in &drafts {
        *report.events.entry(kind_name(&d.kind)).or_default() += 1;
    }
    report.compactions = drafts.iter().filter(|d| matches!(d.kind, Kind::Compaction)).count();
    Ok(Imported {
        format: Format::Convo,
        conversations: vec![Conversation { title: None, drafts, parent: None }],
        report,
    })
}

fn kind_name(kind: &Kind) -> &'static str {
    match kind {
        Kind::System { .. } => "system",
        Kind::User { .. } => "user",
        Kind::Assistant { .. } => "assistant",
        Kind::Reasoning { .. } => "reasoning",
        Kind::ToolCall { .. } => "tool_call",
        Kind::ToolResult { .. } => "tool_result",
        Kind::Config { .. } => "config",
        Kind::Compaction => "compaction",
        Kind::Other(_) => "other",
    }
}

/// Builds one conversation's drafts: keeps source ids and timestamps where they fit, keeps
/// every tool result with its call, and counts what it takes.
pub(crate) struct Builder<'c> {
    clock: &'c Clock,
    pub drafts: Vec<Draft>,
    ids: HashSet<String>,
    calls: HashSet<String>,
    /// Source call ids that are not valid convo ids, and the ids given instead.
    renamed_calls: std::collections::HashMap<String, String>,
    turns: u64,
}

impl<'c> Builder<'c> {
    pub fn new(clock: &'c Clock) -> Self {
        Builder {
            clock,
            drafts: Vec::new(),
            ids: HashSet::new(),
            calls: HashSet::new(),
            renamed_calls: Default::default(),
            turns: 0,
        }
    }

    /// Add an event; `source_id` and `ts` are kept when they are valid (else as extra
    /// fields). A result whose call is unknown is not added: `false` tells the caller to count it.
    pub fn push(&mut self, report: &mut Report, mut kind: Kind, source_id: Option<&str>, ts: Option<&str>) -> bool {
        let mut extra = Map::new();
        match &mut kind {
            Kind::ToolCall { call_id, name, .. } => {
                if validate_event_id(call_id).is_err() || self.calls.contains(call_id.as_str()) {
                    let new = format!("call_{}", self.clock.new_id());
                    extra.insert("source_call_id".into(), Value::String(call_id.clone()));
                    self.renamed_calls.insert(call_id.clone(), new.clone());
                    *call_id = new;
                }
                if name.trim().is_empty() {
                    *name = "unknown".into();
                }
                self.calls.insert(call_id.clone());
            }
            Kind::ToolResult { call_id, .. } => {
                if let Some(new) = self.renamed_calls.get(call_id.as_str()) {
                    *call_id = new.clone();
                }
                if !self.calls.contains(call_id.as_str()) {
                    return false;
                }
            }
            _ => {}
        }
        let id = match source_id {
            Some(s) if validate_event_id(s).is_ok() && !self.ids.contains(s) => s.to_owned(),
            other => {
                if let Some(s) = other {
                    extra.insert("source_id".into(), Value::String(s.to_owned()));
                }
                self.clock.new_id()
            }
        };
        self.ids.insert(id.clone());
        let ts = match ts {
            Some(t) if chrono::DateTime::parse_from_rfc3339(t).is_ok() => Some(t.to_owned()),
            Some(t) => {
                extra.insert("source_ts".into(), Value::String(t.to_owned()));
                None
            }
            None => None,
        };
        if matches!(kind, Kind::User { .. }) {
            self.turns += 1;
        }
        *report.events.entry(kind_name(&kind)).or_default() += 1;
        self.drafts.push(Draft { id: Some(id), ts, kind, extra, line: self.drafts.len() + 1 });
        true
    }

    /// The source tool compacted here: a convo compaction of every turn so far with its
    /// summary, so `show --compacted` sends what the tool sent. `false` if there is nothing
    /// to cover yet.
    pub fn compaction(&mut self, report: &mut Report, summary: &str, by: &str, ts: Option<&str>) -> bool {
        let first = self.drafts.iter().find(|d| matches!(d.kind, Kind::User { .. })).and_then(|d| d.id.clone());
        let (Some(first), Some(last)) = (first, self.drafts.last().and_then(|d| d.id.clone())) else { return false };
        if summary.trim().is_empty() || self.turns == 0 {
            return false;
        }
        let record = Record::Apply(Compaction {
            from_turn: 0,
            to_turn: self.turns - 1,
            from_event: first,
            to_event: last,
            summary: Some(Summary { text: summary.trim().to_owned(), by: by.to_owned(), usage: None }),
            reasoning: None,
            tool_calls: None,
            tools: Default::default(),
            profile: None,
        });
        let mut draft = record.to_draft();
        draft.id = Some(self.clock.new_id());
        draft.ts = ts.filter(|t| chrono::DateTime::parse_from_rfc3339(t).is_ok()).map(str::to_owned);
        self.drafts.push(draft);
        report.compactions += 1;
        true
    }
}

/// Count one skipped record or part, with its reason.
pub(crate) fn skip(report: &mut Report, why: impl Into<String>) {
    *report.skipped.entry(why.into()).or_default() += 1;
}

/// Text of a content value: a string, or the `text` of an array of parts.
pub(crate) fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| match p {
                Value::String(s) => Some(s.clone()),
                Value::Object(o) => o.get("text").and_then(Value::as_str).map(str::to_owned),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Arguments as JSON when they parse, kept as a string when they do not.
pub(crate) fn arguments(value: Option<&Value>) -> Value {
    match value {
        Some(Value::String(s)) => serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone())),
        Some(v) => v.clone(),
        None => Value::Object(Map::new()),
    }
}
