//! Sessions an agent's own `--resume` reads, written from a conversation: Claude Code's
//! session JSONL (`claude_code`), Codex's rollout JSONL (`codex`), Gemini CLI's chat
//! session JSONL (`gemini`) and opencode's session rows in its SQLite database (`opencode`).
//!
//! What is written is a sequence of [`Part`]s the caller chose: the raw events, or the view
//! an LLM is sent. A compaction the agent can read as its own (a summary at the start of
//! the view, or the agent's own compaction in a raw hand-over) becomes the agent's own
//! compaction record, so its later `/compact` and its resume logic keep working.
//!
//! Tool calls and reasoning are written as the agent's own records only when the
//! conversation came from that agent ([`Session::native`]): another agent's tools are not
//! ones it has, and reasoning is signed (Claude) or encrypted (Codex) by the provider that
//! made it. Otherwise a call and its result become text the model reads, and reasoning is
//! left out. System events are left out for Claude Code, whose system prompt is its own. An
//! agent's scaffolding (Codex's environment and instructions, Claude Code's `isMeta` lines
//! and synthetic replies) is handed back to that agent only ([`Part::is_sent_to`]).
//!
//! Nothing here decides where a file goes: the caller names the session id and the
//! working directory, never the conversation.

pub mod claude_code;
pub mod codex;
pub mod gemini;
pub mod opencode;

use std::collections::HashMap;

use serde_json::Value;

use crate::event::{Event, Kind};

/// An agent convo hands conversations to, as a name: what importers stamp on the events
/// they make ([`crate::interop::AGENT`]) and writers ask of them ([`Session::native_for`]).
/// Everything else about an agent (where its sessions live, its writer, the command that
/// carries a session on) is in its module under `agents`, a layer above this one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Agent {
    ClaudeCode,
    Codex,
    GeminiCli,
    Opencode,
}

impl Agent {
    pub const ALL: [Agent; 4] = [Agent::ClaudeCode, Agent::Codex, Agent::GeminiCli, Agent::Opencode];

    pub fn name(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
            Agent::GeminiCli => "gemini-cli",
            Agent::Opencode => "opencode",
        }
    }

    pub fn parse(name: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|a| a.name() == name)
    }

    /// What the agent's compactions are recorded as (`Summary::by`) when imported.
    pub fn summary_by(self) -> &'static str {
        self.name()
    }
}

/// One piece of a hand-over.
#[derive(Debug, Clone, Copy)]
pub enum Part<'a> {
    Event(&'a Event),
    /// A compaction the agent reads as its own: its summary, and for Codex what it replaces
    /// the history with, as it recorded it.
    Compacted {
        summary: &'a str,
        agent_history: Option<&'a Value>,
        ts: &'a str,
    },
}

/// The session being written, as the caller decided it.
#[derive(Debug, Clone, Copy)]
pub struct Session<'a> {
    /// The session id: also in the file's name, which the caller chose.
    pub id: &'a str,
    /// The working directory the agent is to run in (absolute).
    pub cwd: &'a str,
    /// When the session file is made (RFC 3339).
    pub created: &'a str,
    pub title: Option<&'a str>,
    /// The conversation came from this agent: its tool calls and reasoning are the agent's own.
    pub native: bool,
    /// Codex: the provider its config uses (`model_provider`), which it checks on resume.
    pub provider: &'a str,
}

impl Session<'_> {
    /// Whether `event` is `agent`'s own, to be written back as the agent recorded it (its
    /// tool calls, reasoning and records): the agent it was read from ([`origin`]), or, for
    /// an event no agent is known for, whether the conversation came from `agent`.
    pub fn native_for(&self, agent: Agent, event: &Event) -> bool {
        match origin(event) {
            Some(from) => from == agent,
            None => self.native && !event.extra.contains_key(crate::interop::AGENT),
        }
    }
}

/// The agent whose session `event` was read from: the importer's mark
/// ([`crate::interop::AGENT`]); for an event stored before importers marked them, the fields
/// only that agent's importer keeps (Claude Code's `claude_*` and signed thinking, Codex's
/// `codex_*` and encrypted reasoning, Gemini CLI's `gemini_*`, the shape of the records
/// held with it). `None` when nothing says: an event typed with `convo append`, a summary.
pub fn origin(event: &Event) -> Option<Agent> {
    if let Some(name) = event.extra.get(crate::interop::AGENT) {
        return name.as_str().and_then(Agent::parse);
    }
    for key in event.extra.keys() {
        if key.starts_with("claude_") || key == "signature" {
            return Some(Agent::ClaudeCode);
        }
        if key.starts_with("codex_") || key == "encrypted_content" {
            return Some(Agent::Codex);
        }
        if key.starts_with("gemini_") {
            return Some(Agent::GeminiCli);
        }
    }
    let records = event.extra.get(crate::interop::AGENT_RECORDS)?.as_array()?;
    records.iter().find_map(|r| {
        if r.get("payload").is_some() {
            Some(Agent::Codex)
        } else if r.get("uuid").is_some() || r.get("parentUuid").is_some() {
            Some(Agent::ClaudeCode)
        } else {
            None
        }
    })
}

/// A UUID made from a ULID's 128 bits, with the version and variant bits set: fresh ids
/// from the injected clock (so sealed tests are repeatable). Version 7 keeps the ULID's
/// millisecond time where UUIDv7 has it; version 4 is what Claude Code makes.
pub fn uuid_from_ulid(ulid: &str, version: u8) -> String {
    let n = ulid::Ulid::from_string(ulid).map(u128::from).unwrap_or_default();
    uuid_of(n, version)
}

/// A version 4 UUID made from a ULID's bits mixed (by an odd multiplier, one to one), so
/// that its first eight characters differ between ids made in the same minute: Gemini CLI
/// names a session's file by its minute and those eight.
pub fn uuid_mixed_from_ulid(ulid: &str) -> String {
    const ODD: u128 = 0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835;
    let n = ulid::Ulid::from_string(ulid).map(u128::from).unwrap_or_default();
    uuid_of(n.wrapping_mul(ODD), 4)
}

fn uuid_of(n: u128, version: u8) -> String {
    let mut bytes = n.to_be_bytes();
    bytes[6] = (bytes[6] & 0x0f) | (version << 4);
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let hex: String =
        bytes.iter().flat_map(|b| [HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]).map(char::from).collect();
    format!("{}-{}-{}-{}-{}", &hex[0..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32])
}

/// A session file being written a part at a time, in the order the conversation has them,
/// so a long conversation is handed over in bounded memory. Each agent of session files
/// has one (its module under `agents` makes it); opencode's rows are written by
/// [`opencode::Stream`] inside the database's transaction.
pub trait Writer {
    fn part(&mut self, part: Part<'_>) -> std::io::Result<()>;

    /// Finish the file. Returns how many events convo's importer makes of what was
    /// written: what a capture of the file, when the agent has added to it, skips if it
    /// reads the file whole.
    fn finish(self: Box<Self>) -> std::io::Result<u64>;
}

impl Writer for claude_code::Stream<'_> {
    fn part(&mut self, part: Part<'_>) -> std::io::Result<()> {
        claude_code::Stream::part(self, part)
    }

    fn finish(self: Box<Self>) -> std::io::Result<u64> {
        claude_code::Stream::finish(*self)
    }
}

impl Writer for codex::Stream<'_> {
    fn part(&mut self, part: Part<'_>) -> std::io::Result<()> {
        codex::Stream::part(self, part)
    }

    fn finish(self: Box<Self>) -> std::io::Result<u64> {
        codex::Stream::finish(*self)
    }
}

impl Writer for gemini::Stream<'_> {
    fn part(&mut self, part: Part<'_>) -> std::io::Result<()> {
        gemini::Stream::part(self, part)
    }

    fn finish(self: Box<Self>) -> std::io::Result<u64> {
        gemini::Stream::finish(*self)
    }
}

/// The id a call is written with: the source's own when the importer had to rename it
/// (`source_call_id`), so the agent sees the ids its provider made.
pub(crate) fn written_call_id(event: &Event, call_id: &str) -> String {
    event.extra.get("source_call_id").and_then(Value::as_str).unwrap_or(call_id).to_owned()
}

/// Who said a message being gathered by a writer that groups events into messages.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    User,
    Model,
}

/// Tool calls and results as text, for an agent that does not have the tools: what was
/// called with what, and what came back, in words the model reads.
#[derive(Default)]
pub(crate) struct AsText {
    names: HashMap<String, String>,
}

impl AsText {
    pub fn call(&mut self, call_id: &str, name: &str, arguments: &Value) -> String {
        self.names.insert(call_id.to_owned(), name.to_owned());
        match arguments {
            Value::Object(o) if o.is_empty() => format!("[tool call: {name}]"),
            Value::String(s) => format!("[tool call: {name}] {s}"),
            other => format!("[tool call: {name}] {other}"),
        }
    }

    pub fn result(&self, call_id: &str, content: &str, is_error: bool) -> String {
        let name = self.names.get(call_id).map(String::as_str).unwrap_or("tool");
        let error = if is_error { " (error)" } else { "" };
        format!("[tool result: {name}{error}]\n{content}")
    }
}

impl Part<'_> {
    /// Whether this is part of what a model is sent: a compaction's summary, or an event
    /// that is not config, a compaction record or of a type convo does not know.
    pub fn is_sent(&self) -> bool {
        match self {
            Part::Compacted { .. } => true,
            Part::Event(event) => !matches!(event.kind, Kind::Config { .. } | Kind::Compaction | Kind::Other(_)),
        }
    }

    /// [`is_sent`](Self::is_sent), and handed to `agent` in `session` at all: an agent's
    /// scaffolding ([`crate::event::scaffolding`]: its environment, its instructions, its
    /// placeholder replies) goes back to that agent as it wrote it, and to no other, whose
    /// own scaffolding stands in its place.
    pub fn is_sent_to(&self, agent: Agent, session: &Session<'_>) -> bool {
        match self {
            Part::Event(event) if event.is_scaffolding() => self.is_sent() && session.native_for(agent, event),
            _ => self.is_sent(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixed_uuids_of_ids_made_together_differ_in_their_first_eight_characters() {
        let a = uuid_mixed_from_ulid("01J00000000000000000000001");
        let b = uuid_mixed_from_ulid("01J00000000000000000000002");
        assert_ne!(a[..8], b[..8]);
        assert_eq!(&a[14..15], "4");
    }

    #[test]
    fn a_uuid_from_a_ulid_has_the_version_and_variant_asked_for() {
        let u = uuid_from_ulid("01J00000000000000000000001", 4);
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
        assert!(matches!(&u[19..20], "8" | "9" | "a" | "b"), "{u}");
        let v7 = uuid_from_ulid("01J00000000000000000000001", 7);
        assert_eq!(&v7[14..15], "7");
        // The ULID's time is kept in the first 48 bits, as UUIDv7 keeps it.
        assert_eq!(&v7[..8], &u[..8]);
    }
}
