//! The compaction event: an overlay appended to a conversation that tells the projection how
//! to present a range of turns. Nothing is ever rewritten: compacting appends one of these,
//! and withdrawing one appends a revocation.
//!
//! A compaction names its range twice: as turn numbers (for people) and as the ids of the
//! first and last events it covers (for the projection), so a fork or an import that shifts
//! turn numbers cannot move it onto other events. It also records the per-tool hints that
//! were in force, so its projection never changes when config changes later.

pub mod digest;
pub mod range;
pub mod summary;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::event::{Draft, Event, Kind};

/// What a compaction does to reasoning events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReasoningPolicy {
    Strip,
}

/// What a compaction does to tool call pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "policy", rename_all = "lowercase")]
pub enum ToolCallPolicy {
    /// Empty the request's arguments and/or replace the response with a status line;
    /// name, call id and error flag stay.
    Strip { request: bool, response: bool },
    /// Drop call and result together.
    Omit,
}

/// A tool's own say over how its calls are stripped (`tools.NAME.compaction`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FieldMode {
    Keep,
    Strip,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolHint {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<FieldMode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<FieldMode>,
    /// The arguments a stripped call of this tool keeps (short string values only), in
    /// place of the compaction's `keep_args`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_args: Option<Vec<String>>,
}

/// A summary replacing every provider-visible event of the range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Summary {
    pub text: String,
    /// Who wrote it: `user`, or the model (`provider/model`).
    pub by: String,
    /// The tokens the provider reported for writing it (all calls, when chunked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<TokenUsage>,
    /// What the agent that compacted sends in place of the range, as it recorded it (Codex's
    /// `replacement_history`): `convo resume` writes it back so the agent resumes as it would
    /// from its own file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_history: Option<serde_json::Value>,
}

/// Tokens a provider reported for a call (records written before usage was normalised,
/// with `input_tokens` and `output_tokens` only, read the same).
pub type TokenUsage = crate::event::Usage;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Compaction {
    /// First and last turn covered, inclusive, as numbered when it was made.
    pub from_turn: u64,
    pub to_turn: u64,
    /// Ids of the first and last event covered: what the projection goes by.
    pub from_event: String,
    pub to_event: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<Summary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<ReasoningPolicy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<ToolCallPolicy>,
    /// Micro-compaction: only tool requests and results larger than this many bytes are
    /// stripped or truncated. Small ones cost little and may still matter to the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_bytes: Option<u64>,
    /// Tool results the policy leaves in place are cut to this many lines, the first and
    /// last kept around one marker line, for output the agent may still need in part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_lines: Option<u64>,
    /// Per-tool hints in force when it was made.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tools: BTreeMap<String, ToolHint>,
    /// Placeholders keep the trail: a stripped call keeps its short arguments with these
    /// keys (a tool's own `keep_args` hint first), a stripped result reads its outcome
    /// (exit status, error line, commits) and the id of the event it stands for; a part
    /// whose placeholder would be no shorter stays as it is. Absent from a compaction made
    /// before (`[compacted] Bash: success`), whose view stays as it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_args: Option<Vec<String>>,
    /// The profile it came from, for people reading the log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Estimated tokens of the projected view just before and just after it was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<Tokens>,
    /// The compaction laid on top of this one in the same commit (a budget's summary over
    /// the oldest part of the range, this the cheaper step under it): undone with it. Not
    /// read by the projection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub laid_with: Option<String>,
}

/// A view's estimated size around a compaction (chars/4), recorded when it was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tokens {
    pub before: u64,
    pub after: u64,
}

/// A stored `compaction` event: an overlay, or the withdrawal of one.
// A conversation holds a handful of records, never arrays of them: boxing would only add
// noise to every match.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    Apply(Compaction),
    Revoke { target: String },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RevokeFields {
    revokes: String,
}

/// Why a stored `compaction` event is not a record.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// Its fields are not those of a compaction or a revocation.
    #[error("{0}")]
    Fields(#[from] serde_json::Error),
    #[error("from_turn {from} is after to_turn {to}")]
    Backwards { from: u64, to: u64 },
}

/// A malformed compaction event of a conversation, by id.
#[derive(Debug, thiserror::Error)]
#[error("compaction {id}: {source}")]
pub struct MalformedCompaction {
    pub id: String,
    #[source]
    pub source: RecordError,
}

impl Record {
    /// Read the record out of a stored `compaction` event.
    pub fn from_event(event: &Event) -> Result<Record, RecordError> {
        let fields = Value::Object(event.extra.clone());
        if event.extra.contains_key("revokes") {
            let r: RevokeFields = serde_json::from_value(fields)?;
            return Ok(Record::Revoke { target: r.revokes });
        }
        let c: Compaction = serde_json::from_value(fields)?;
        if c.from_turn > c.to_turn {
            return Err(RecordError::Backwards { from: c.from_turn, to: c.to_turn });
        }
        Ok(Record::Apply(c))
    }

    /// The event to append for this record.
    pub fn to_draft(&self) -> Draft {
        let value = match self {
            Record::Apply(c) => serde_json::to_value(c),
            Record::Revoke { target } => serde_json::to_value(RevokeFields { revokes: target.clone() }),
        };
        let extra = match value {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        };
        Draft { extra, ..Draft::new(Kind::Compaction) }
    }
}

impl Compaction {
    /// Whether it says anything about tool calls, so that it wins over older ones for them.
    pub fn has_tool_policy(&self) -> bool {
        self.tool_calls.is_some() || self.max_lines.is_some()
    }

    /// `[strip reasoning, strip tool calls]`: the policies in words, for subjects and output.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(summary) = &self.summary {
            parts.push(format!("summary by {}", summary.by));
        }
        if self.reasoning == Some(ReasoningPolicy::Strip) {
            parts.push("strip reasoning".to_owned());
        }
        match self.tool_calls {
            Some(ToolCallPolicy::Strip { request: true, response: true }) => parts.push("strip tool calls".into()),
            Some(ToolCallPolicy::Strip { request: true, response: false }) => parts.push("strip tool requests".into()),
            Some(ToolCallPolicy::Strip { request: false, response: true }) => parts.push("strip tool responses".into()),
            Some(ToolCallPolicy::Strip { request: false, response: false }) => {}
            Some(ToolCallPolicy::Omit) => parts.push("omit tool calls".into()),
            None => {}
        }
        if let Some(n) = self.max_lines {
            parts.push(format!("truncate tool output to {n} lines"));
        }
        if let Some(b) = self.min_bytes
            && (self.tool_calls.is_some() || self.max_lines.is_some())
        {
            parts.push(format!("over {b} bytes"));
        }
        format!("[{}]", parts.join(", "))
    }
}

/// Every compaction record of a conversation, with its event, in stream order. A malformed
/// one is an error naming the event.
pub fn records(events: &[Event]) -> Result<Vec<(&Event, Record)>, MalformedCompaction> {
    let compactions: Vec<&Event> = events.iter().filter(|e| matches!(e.kind, Kind::Compaction)).collect();
    records_of(&compactions)
}

/// [`records`] of a conversation's compaction events alone, in stream order.
pub fn records_of<'e>(events: &[&'e Event]) -> Result<Vec<(&'e Event, Record)>, MalformedCompaction> {
    events
        .iter()
        .copied()
        .filter(|e| matches!(e.kind, Kind::Compaction))
        .map(|e| {
            Record::from_event(e).map(|r| (e, r)).map_err(|source| MalformedCompaction { id: e.id.clone(), source })
        })
        .collect()
}

/// Ids of compactions that have been withdrawn.
pub fn revoked(records: &[(&Event, Record)]) -> std::collections::HashSet<String> {
    records
        .iter()
        .filter_map(|(_, r)| match r {
            Record::Revoke { target } => Some(target.clone()),
            Record::Apply(_) => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_through_events() {
        let c = Compaction {
            from_turn: 0,
            to_turn: 2,
            from_event: "a".into(),
            to_event: "b".into(),
            summary: None,
            reasoning: Some(ReasoningPolicy::Strip),
            tool_calls: Some(ToolCallPolicy::Strip { request: true, response: true }),
            tools: BTreeMap::from([(
                "fs_read_file".into(),
                ToolHint { request: Some(FieldMode::Keep), response: None, keep_args: Some(vec!["path".into()]) },
            )]),
            keep_args: Some(vec!["command".into()]),
            profile: Some("default".into()),
            min_bytes: Some(800),
            max_lines: Some(20),
            tokens: Some(Tokens { before: 10, after: 5 }),
            laid_with: Some("c".into()),
        };
        for record in [Record::Apply(c), Record::Revoke { target: "x".into() }] {
            let event = record.to_draft().into_event("id".into(), "2026-01-01T00:00:00Z".into());
            let line = event.to_line();
            assert!(line.contains("\"type\":\"compaction\""));
            let parsed = crate::event::parse_stored(&line).unwrap();
            assert_eq!(Record::from_event(&parsed[0]).unwrap(), record);
        }
    }

    #[test]
    fn tool_call_policy_is_tagged() {
        let v = serde_json::to_value(ToolCallPolicy::Strip { request: false, response: true }).unwrap();
        assert_eq!(v, serde_json::json!({"policy": "strip", "request": false, "response": true}));
        assert_eq!(serde_json::to_value(ToolCallPolicy::Omit).unwrap(), serde_json::json!({"policy": "omit"}));
    }
}
