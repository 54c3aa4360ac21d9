//! One home per agent: what convo knows of each agent it captures sessions from and hands
//! conversations to, in one module each behind [`Home`], and the registry ([`ALL`],
//! [`by_name`], [`of`]) the rest of convo asks instead of matching on the agent. Adding an
//! agent is its module here, its entry in [`ALL`], and its name in
//! [`crate::interop::resume::Agent`] (the tag importers stamp on events, which lives below
//! this layer).
//!
//! Each module says the agent's name and import format, where its folder is given the
//! environment the caller hands in ([`Env`]: `HOME` and the agent's own override), where
//! its sessions are followed (`watch`), where a session handed to it goes and which
//! writer writes it (`resume`), the command that carries a session on, and how a hook's
//! transcript is named after its session (`hook`). The importers and writers themselves
//! stay under `crate::interop`; an agent's module is the one place that names them.
//!
//! Nothing here reads the environment: the caller's lookup is all an [`Env`] knows, so
//! `resume` and `watch` find an agent's folder the same way.

pub mod claude_code;
pub mod codex;
pub mod gemini_cli;
pub mod opencode;

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::clock::Clock;
use crate::interop::Format;
use crate::interop::resume::{Agent, Session, Writer};

/// The environment an agent's folder is found in: the caller's variable lookup (the CLI
/// hands in the process's, a test its own).
#[derive(Clone, Copy)]
pub struct Env<'a> {
    var: &'a dyn Fn(&str) -> Option<OsString>,
}

impl<'a> Env<'a> {
    pub fn new(var: &'a dyn Fn(&str) -> Option<OsString>) -> Self {
        Env { var }
    }

    /// `name`'s value when it is set to something: the agents take an empty one as unset.
    pub fn get(&self, name: &str) -> Option<PathBuf> {
        (self.var)(name).filter(|v| !v.is_empty()).map(PathBuf::from)
    }

    /// An XDG base folder (`XDG_DATA_HOME`, `XDG_CONFIG_HOME`), else `~/<default>`: a
    /// relative value is invalid by the XDG spec and ignored, as the agents ignore it.
    pub fn xdg(&self, name: &str, default: &str) -> Option<PathBuf> {
        self.get(name).filter(|d| d.is_absolute()).or_else(|| self.get("HOME").map(|h| h.join(default)))
    }

    /// The folder `var` names, else `~/<default>`: how Claude Code (`CLAUDE_CONFIG_DIR`)
    /// and Codex (`CODEX_HOME`) find theirs.
    fn overridden(&self, var: &'static str, default: &str) -> Result<PathBuf, NoFolder> {
        self.get(var)
            .or_else(|| self.get("HOME").map(|h| h.join(default)))
            .ok_or(NoFolder { folder: "the agent's folder", var })
    }
}

/// Where an agent's sessions are followed from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Root {
    /// A folder of session files, each followed as it grows.
    Folder(PathBuf),
    /// A database of sessions (opencode's), followed as `import DB` reads it.
    Database(PathBuf),
}

/// An agent's folder cannot be found: neither its own variable nor `HOME` is set.
#[derive(Debug, thiserror::Error)]
#[error("cannot find {folder}: neither {var} nor HOME is set")]
pub struct NoFolder {
    pub folder: &'static str,
    pub var: &'static str,
}

/// The place a session is handed to could not be made (Gemini CLI's project folder).
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", path.display())]
pub struct PlaceError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// What convo knows of one agent. One implementation per module of this folder.
pub trait Home: Sync {
    /// The agent's tag (what its importer stamps on events).
    fn agent(&self) -> Agent;

    /// Its name on the command line and in records (`claude-code`).
    fn name(&self) -> &'static str {
        self.agent().name()
    }

    /// Its name as people know it (`Claude Code`).
    fn title(&self) -> &'static str;

    /// The import format of its sessions.
    fn format(&self) -> Format;

    /// The agent's own folder, as the agent finds it in `env`.
    fn folder(&self, env: &Env<'_>) -> Result<PathBuf, NoFolder>;

    /// Where its sessions are followed from, under its `folder`.
    fn session_root(&self, folder: &Path) -> Root;

    /// Its sessions' database under its `folder`, for an agent that keeps them as rows
    /// (opencode); none for one that keeps files.
    fn database(&self, _folder: &Path) -> Option<PathBuf> {
        None
    }

    /// Codex: the provider its config under `folder` uses, which a rollout must name.
    fn provider(&self, _folder: &Path) -> String {
        String::new()
    }

    /// opencode: the model its config names (`provider/model`), which convo's messages name.
    fn model(&self, _env: &Env<'_>) -> Option<String> {
        None
    }

    /// A fresh session id, as the agent makes them (from the injected clock).
    fn session_id(&self, clock: &Clock) -> String;

    /// Where the agent looks for session `session` of a run in `cwd`, under its `folder`
    /// (made ready: Gemini CLI's project folder is claimed); none for an agent whose
    /// sessions are not files.
    fn session_file(
        &self,
        _folder: &Path,
        _cwd: &str,
        _session: &str,
        _clock: &Clock,
    ) -> Option<Result<PathBuf, PlaceError>> {
        None
    }

    /// The writer of its session file to `out`; `fresh` gives a new id each call. None for
    /// an agent whose sessions are not files.
    fn writer<'a>(
        &self,
        _session: &'a Session<'a>,
        _fresh: &'a mut dyn FnMut() -> String,
        _out: &'a mut dyn Write,
    ) -> Option<Box<dyn Writer + 'a>> {
        None
    }

    /// The command that carries session `session` on, run in its directory.
    fn resume_command(&self, session: &str) -> String;

    /// Whether a transcript whose file name is `stem` is session `session`'s, as the
    /// agent names them: what `hook` checks a hook's input by.
    fn names_session(&self, _stem: &str, _session: &str) -> bool {
        false
    }
}

/// Every agent, in the order `watch` lists their folders.
pub static ALL: &[&dyn Home] = &[&claude_code::ClaudeCode, &codex::Codex, &gemini_cli::GeminiCli, &opencode::Opencode];

/// The agent named `name` (`claude-code`).
pub fn by_name(name: &str) -> Option<&'static dyn Home> {
    ALL.iter().copied().find(|a| a.name() == name)
}

/// The agent whose sessions are in `format`.
pub fn by_format(format: Format) -> Option<&'static dyn Home> {
    ALL.iter().copied().find(|a| a.format() == format)
}

/// The agent tagged `agent`: every tag has one (a test checks).
pub fn of(agent: Agent) -> &'static dyn Home {
    ALL.iter().copied().find(|a| a.agent() == agent).expect("every agent has a home in agents::ALL")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_agent_has_one_home_with_its_own_name_and_format() {
        for agent in Agent::ALL {
            assert_eq!(ALL.iter().filter(|a| a.agent() == agent).count(), 1, "{agent:?}");
            let home = of(agent);
            assert_eq!(by_name(home.name()).map(|h| h.agent()), Some(agent));
            assert_eq!(by_format(home.format()).map(|h| h.agent()), Some(agent));
        }
        assert_eq!(ALL.len(), Agent::ALL.len());
    }

    /// `resume` and `watch` find an agent's folder the same way: its own variable first.
    #[test]
    fn an_agents_folder_is_its_variables_else_homes() {
        let vars = |name: &str| match name {
            "HOME" => Some("/h".into()),
            "CODEX_HOME" => Some("/c".into()),
            "CLAUDE_CONFIG_DIR" => Some("".into()),
            "XDG_DATA_HOME" => Some("relative".into()),
            _ => None,
        };
        let env = Env::new(&vars);
        let folder = |name: &str| by_name(name).unwrap().folder(&env).unwrap();
        assert_eq!(folder("codex"), Path::new("/c"));
        assert_eq!(folder("claude-code"), Path::new("/h/.claude"));
        assert_eq!(folder("gemini-cli"), Path::new("/h/.gemini"));
        assert_eq!(folder("opencode"), Path::new("/h/.local/share/opencode"));
        assert_eq!(by_name("codex").unwrap().session_root(Path::new("/c")), Root::Folder("/c/sessions".into()));
        let none = |_: &str| None;
        let err = by_name("gemini-cli").unwrap().folder(&Env::new(&none)).unwrap_err();
        assert_eq!(err.to_string(), "cannot find Gemini CLI's folder: neither GEMINI_CLI_HOME nor HOME is set");
    }
}
