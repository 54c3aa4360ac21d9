//! opencode: sessions are rows of its SQLite database, `opencode.db` in its data folder
//! (`$XDG_DATA_HOME/opencode`, else `~/.local/share/opencode`), which opencode makes on its
//! first run; a session handed to it is written there in one transaction
//! (`crate::interop::resume::opencode`, driven by `ops::resume`), not as a file.

use std::path::{Path, PathBuf};

use super::{Env, Home, NoFolder, Root};
use crate::clock::Clock;
use crate::interop::Format;
use crate::interop::resume::{self, Agent};

pub struct Opencode;

impl Home for Opencode {
    fn agent(&self) -> Agent {
        Agent::Opencode
    }

    fn title(&self) -> &'static str {
        "opencode"
    }

    fn format(&self) -> Format {
        Format::Opencode
    }

    /// XDG's data folder, which opencode keeps its database in.
    fn folder(&self, env: &Env<'_>) -> Result<PathBuf, NoFolder> {
        env.xdg("XDG_DATA_HOME", ".local/share")
            .map(|d| d.join("opencode"))
            .ok_or(NoFolder { folder: "opencode's data folder", var: "XDG_DATA_HOME" })
    }

    fn session_root(&self, folder: &Path) -> Root {
        Root::Database(folder.join("opencode.db"))
    }

    fn database(&self, folder: &Path) -> Option<PathBuf> {
        Some(folder.join("opencode.db"))
    }

    /// The model the user's opencode config names (`model`, `provider/model`), from
    /// `$XDG_CONFIG_HOME/opencode/opencode.json` (else `~/.config/...`), `opencode.jsonc` or
    /// `config.json` there.
    fn model(&self, env: &Env<'_>) -> Option<String> {
        let config = env.xdg("XDG_CONFIG_HOME", ".config")?.join("opencode");
        ["opencode.json", "opencode.jsonc", "config.json"].iter().find_map(|name| {
            let text = std::fs::read_to_string(config.join(name)).ok()?;
            let value: serde_json::Value = serde_json::from_str(&text).ok()?;
            value.get("model")?.as_str().filter(|m| m.contains('/')).map(str::to_owned)
        })
    }

    /// opencode's own shape of id (`ses_…`), from the clock's time and ids.
    fn session_id(&self, clock: &Clock) -> String {
        resume::opencode::session_id(clock.now().timestamp_millis(), &mut || clock.new_id())
    }

    fn resume_command(&self, session: &str) -> String {
        format!("opencode --session {session}")
    }
}
