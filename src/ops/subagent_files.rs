//! Subagents kept in files of their own, linked to the conversation of the session that ran
//! them. Claude Code 2.1 writes a subagent's work to `<session>/subagents/agent-<id>.jsonl`
//! beside `<session>.jsonl`; Gemini CLI writes `chats/<session id>/<id>.jsonl`, headed
//! `"kind":"subagent"`, beside `chats/session-<time>-<first 8 of the session id>.jsonl`.
//! Claude Code's older sessions keep subagents inside the session's own file (sidechains):
//! those are linked by the importer, not here.
//!
//! Only where the file lies says whose it is, never a value inside it; the link is found
//! among conversations already imported from that agent (or staged in the same folder
//! import, which imports a folder's files shallowest first), and a subagent whose parent
//! is not there yet is imported unlinked.

use std::path::Path;

use serde_json::{Map, Value};

use crate::interop::Format;
use crate::store::{Batch, Store, StoreError};

/// The file of the session a subagent's file belongs to, from where it lies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParentFile {
    /// Claude Code: the session file's whole name.
    Named(String),
    /// Gemini CLI: the session id's first 8 characters, which end the session file's name.
    GeminiCli(String),
}

impl ParentFile {
    /// Where `path` says its parent session is: `head` is the start of the file (Gemini CLI's
    /// header line says whether it is a subagent's).
    pub fn of(path: &Path, format: Format, head: &[u8]) -> Option<ParentFile> {
        let folder = path.parent()?;
        let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
        match format {
            Format::ClaudeCode if name(folder).as_deref() == Some("subagents") => {
                let session = name(folder.parent()?)?;
                Some(ParentFile::Named(format!("{session}.jsonl")))
            }
            Format::GeminiCli => {
                let first = head.split(|b| *b == b'\n').next()?;
                let header: Value = serde_json::from_slice(first).ok()?;
                if header.get("kind").and_then(Value::as_str) != Some("subagent") {
                    return None;
                }
                let session = name(folder)?;
                let short = session.get(..8).filter(|s| s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))?;
                Some(ParentFile::GeminiCli(short.to_owned()))
            }
            _ => None,
        }
    }

    fn names(&self, file: &str) -> bool {
        match self {
            ParentFile::Named(name) => file == name,
            ParentFile::GeminiCli(short) => file
                .strip_prefix("session-")
                .and_then(|rest| rest.strip_suffix(".jsonl"))
                .is_some_and(|rest| rest.ends_with(&format!("-{short}"))),
        }
    }

    /// Whether `extra` (a conversation's `meta.json` fields) is that of the main
    /// conversation imported from this parent's file, by `format`.
    fn is_source_of(&self, format: Format, extra: &Map<String, Value>) -> bool {
        let Some(source) = extra.get("source") else { return false };
        source.get("format").and_then(Value::as_str) == Some(format.name())
            && source.get("part").and_then(Value::as_u64) == Some(0)
            && source.get("file").and_then(Value::as_str).is_some_and(|f| self.names(f))
    }

    /// The conversation imported from the parent's file: in `batch` (made in the same
    /// commit) or in the store.
    pub fn conversation(
        &self,
        store: &Store,
        batch: Option<&Batch>,
        format: Format,
    ) -> Result<Option<String>, StoreError> {
        if let Some(staged) = batch.and_then(|b| b.made().find(|s| self.is_source_of(format, &s.extra))) {
            return Ok(Some(staged.id.clone()));
        }
        for id in store.conversation_ids()? {
            if self.is_source_of(format, &store.meta(&id)?.extra) {
                return Ok(Some(id));
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claude_code_subagent_file_names_its_session_file_by_its_folder() {
        let path = Path::new("/p/ef958aa1/subagents/agent-a4ca.jsonl");
        let parent = ParentFile::of(path, Format::ClaudeCode, b"{}").unwrap();
        assert_eq!(parent, ParentFile::Named("ef958aa1.jsonl".into()));
        assert!(parent.names("ef958aa1.jsonl"));
        assert!(!parent.names("ef958aa1x.jsonl"));
        assert_eq!(ParentFile::of(Path::new("/p/ef958aa1/agent-a4ca.jsonl"), Format::ClaudeCode, b"{}"), None);
    }

    #[test]
    fn a_gemini_cli_subagent_is_known_by_its_header_and_names_its_session_by_its_folder() {
        let path = Path::new("/t/chats/73b964d6-1757-4809-b459-de6f060057c5/9f00aa11.jsonl");
        let sub = br#"{"sessionId":"9f00aa11","projectHash":"x","kind":"subagent"}
{"type":"user"}"#;
        let parent = ParentFile::of(path, Format::GeminiCli, sub).unwrap();
        assert!(parent.names("session-2026-11-28T09-01-73b964d6.jsonl"));
        assert!(!parent.names("session-2026-11-28T09-01-00000000.jsonl"));
        assert!(!parent.names("73b964d6.jsonl"));
        let main = br#"{"sessionId":"9f00aa11","projectHash":"x","kind":"main"}"#;
        assert_eq!(ParentFile::of(path, Format::GeminiCli, main), None);
    }
}
