//! Codex: rollouts are `<folder>/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`, its folder
//! `~/.codex` or `$CODEX_HOME`; a rollout names the provider the user's config uses, which
//! Codex checks on resume.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::{Env, Home, NoFolder, PlaceError, Root};
use crate::clock::Clock;
use crate::interop::Format;
use crate::interop::resume::{self, Agent, Session, Writer};

pub struct Codex;

impl Home for Codex {
    fn agent(&self) -> Agent {
        Agent::Codex
    }

    fn title(&self) -> &'static str {
        "Codex"
    }

    fn format(&self) -> Format {
        Format::Codex
    }

    fn folder(&self, env: &Env<'_>) -> Result<PathBuf, NoFolder> {
        env.overridden("CODEX_HOME", ".codex")
    }

    fn session_root(&self, folder: &Path) -> Root {
        Root::Folder(folder.join("sessions"))
    }

    /// The provider the user's Codex config uses (`model_provider`), else `openai`: Codex
    /// refuses to resume a rollout of another provider.
    fn provider(&self, folder: &Path) -> String {
        std::fs::read_to_string(folder.join("config.toml"))
            .ok()
            .and_then(|text| text.parse::<toml::Table>().ok())
            .and_then(|t| t.get("model_provider").and_then(|v| v.as_str()).map(str::to_owned))
            .unwrap_or_else(|| "openai".to_owned())
    }

    /// Version 7, as Codex makes them: time-ordered.
    fn session_id(&self, clock: &Clock) -> String {
        resume::uuid_from_ulid(&clock.new_id(), 7)
    }

    fn session_file(
        &self,
        folder: &Path,
        _cwd: &str,
        session: &str,
        clock: &Clock,
    ) -> Option<Result<PathBuf, PlaceError>> {
        let now = clock.now();
        Some(Ok(folder
            .join("sessions")
            .join(now.format("%Y/%m/%d").to_string())
            .join(format!("rollout-{}-{session}.jsonl", now.format("%Y-%m-%dT%H-%M-%S")))))
    }

    fn writer<'a>(
        &self,
        session: &'a Session<'a>,
        _fresh: &'a mut dyn FnMut() -> String,
        out: &'a mut dyn Write,
    ) -> Option<Box<dyn Writer + 'a>> {
        Some(Box::new(resume::codex::Stream::new(session, out)))
    }

    fn resume_command(&self, session: &str) -> String {
        format!("codex resume {session}")
    }

    fn names_session(&self, stem: &str, session: &str) -> bool {
        stem.starts_with("rollout-") && stem.strip_suffix(session).is_some_and(|rest| rest.ends_with('-'))
    }
}
