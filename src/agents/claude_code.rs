//! Claude Code: sessions are `<folder>/projects/<the directory, made a name>/<id>.jsonl`,
//! its folder `~/.claude` or `$CLAUDE_CONFIG_DIR`; it looks a session up by the directory
//! it runs in, and its hooks hand over transcripts named after their session.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::{Env, Home, NoFolder, PlaceError, Root};
use crate::clock::Clock;
use crate::interop::Format;
use crate::interop::resume::{self, Agent, Session, Writer};

pub struct ClaudeCode;

impl Home for ClaudeCode {
    fn agent(&self) -> Agent {
        Agent::ClaudeCode
    }

    fn title(&self) -> &'static str {
        "Claude Code"
    }

    fn format(&self) -> Format {
        Format::ClaudeCode
    }

    fn folder(&self, env: &Env<'_>) -> Result<PathBuf, NoFolder> {
        env.overridden("CLAUDE_CONFIG_DIR", ".claude")
    }

    fn session_root(&self, folder: &Path) -> Root {
        Root::Folder(folder.join("projects"))
    }

    fn session_id(&self, clock: &Clock) -> String {
        resume::uuid_from_ulid(&clock.new_id(), 4)
    }

    fn session_file(
        &self,
        folder: &Path,
        cwd: &str,
        session: &str,
        _clock: &Clock,
    ) -> Option<Result<PathBuf, PlaceError>> {
        Some(Ok(folder.join("projects").join(project(cwd)).join(format!("{session}.jsonl"))))
    }

    fn writer<'a>(
        &self,
        session: &'a Session<'a>,
        fresh: &'a mut dyn FnMut() -> String,
        out: &'a mut dyn Write,
    ) -> Option<Box<dyn Writer + 'a>> {
        Some(Box::new(resume::claude_code::Stream::new(session, fresh, out)))
    }

    fn resume_command(&self, session: &str) -> String {
        format!("claude --resume {session}")
    }

    fn names_session(&self, stem: &str, session: &str) -> bool {
        stem == session
    }
}

/// Claude Code's folder for a project: the working directory with every character but
/// ASCII letters and digits made `-`. Only those characters and `-` remain, so the name
/// can never climb out of `projects/`.
pub fn project(cwd: &str) -> String {
    cwd.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_folder_name_cannot_leave_projects() {
        assert_eq!(project("/home/a b/../x.y"), "-home-a-b----x-y");
        assert!(project("/tmp/ünï/…").chars().all(|c| c.is_ascii_alphanumeric() || c == '-'));
    }

    #[test]
    fn a_transcript_is_named_after_its_session() {
        assert!(ClaudeCode.names_session("0b7a1f52", "0b7a1f52"));
        assert!(!ClaudeCode.names_session("0b7a1f52", "0b7a1f53"));
    }
}
