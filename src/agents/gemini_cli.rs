//! Gemini CLI: sessions are `<folder>/tmp/<project>/chats/session-<minute>-<id's first
//! 8>.jsonl`, its folder `.gemini` in `$GEMINI_CLI_HOME` or the home; the project folder is
//! found (or claimed) as Gemini CLI finds it, and its hooks hand over transcripts named so.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Env, Home, NoFolder, PlaceError, Root};
use crate::clock::Clock;
use crate::interop::Format;
use crate::interop::resume::{self, Agent, Session, Writer};

pub struct GeminiCli;

impl Home for GeminiCli {
    fn agent(&self) -> Agent {
        Agent::GeminiCli
    }

    fn title(&self) -> &'static str {
        "Gemini CLI"
    }

    fn format(&self) -> Format {
        Format::GeminiCli
    }

    /// GEMINI_CLI_HOME stands for the home its `.gemini` is in.
    fn folder(&self, env: &Env<'_>) -> Result<PathBuf, NoFolder> {
        let home = env.get("GEMINI_CLI_HOME").or_else(|| env.get("HOME"));
        home.map(|h| h.join(".gemini")).ok_or(NoFolder { folder: "Gemini CLI's folder", var: "GEMINI_CLI_HOME" })
    }

    fn session_root(&self, folder: &Path) -> Root {
        Root::Folder(folder.join("tmp"))
    }

    /// Mixed, so ids made in the same minute differ in the first eight characters that
    /// name the file ([`resume::uuid_mixed_from_ulid`]).
    fn session_id(&self, clock: &Clock) -> String {
        resume::uuid_mixed_from_ulid(&clock.new_id())
    }

    /// Gemini CLI's name for a session's file: the minute it began and the session's first
    /// eight characters.
    fn session_file(
        &self,
        folder: &Path,
        cwd: &str,
        session: &str,
        clock: &Clock,
    ) -> Option<Result<PathBuf, PlaceError>> {
        let now = clock.now();
        Some(project(folder, cwd).map(|project| {
            folder.join("tmp").join(project).join("chats").join(format!(
                "session-{}-{}.jsonl",
                now.format("%Y-%m-%dT%H-%M"),
                session.get(..8).unwrap_or(session)
            ))
        }))
    }

    fn writer<'a>(
        &self,
        session: &'a Session<'a>,
        fresh: &'a mut dyn FnMut() -> String,
        out: &'a mut dyn Write,
    ) -> Option<Box<dyn Writer + 'a>> {
        Some(Box::new(resume::gemini::Stream::new(session, fresh, out)))
    }

    fn resume_command(&self, session: &str) -> String {
        format!("gemini --resume {session}")
    }

    /// `session-<time>-<the session's first 8 characters>`.
    fn names_session(&self, stem: &str, session: &str) -> bool {
        let short = session.get(..8).unwrap_or(session);
        stem.starts_with("session-") && stem.strip_suffix(short).is_some_and(|rest| rest.ends_with('-'))
    }
}

/// Gemini CLI's folder for the project in `cwd`, under `<home>/tmp`, found as Gemini CLI
/// finds it: the one its registry (`projects.json`) names for the directory, unless that
/// folder's `.project_root` marker names another; else the folder whose marker names it;
/// else a new one, named as Gemini CLI names them (the directory's name in lower case, `-`
/// for anything but letters and digits; `-1`, `-2`, ... while taken) and marked for the
/// directory, where Gemini CLI then finds it. Only such names are taken, from the registry
/// too: none can leave `tmp/`.
pub fn project(home: &Path, cwd: &str) -> Result<String, PlaceError> {
    let tmp = home.join("tmp");
    let marker = |slug: &str| tmp.join(slug).join(".project_root");
    let owner = |slug: &str| std::fs::read_to_string(marker(slug)).ok().map(|s| s.trim().to_owned());
    let valid = |slug: &str| {
        !slug.is_empty()
            && slug.len() <= 128
            && !slug.starts_with('-')
            && slug.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    };
    let registry: Value = std::fs::read_to_string(home.join("projects.json"))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default();
    let registered = registry.get("projects").and_then(|p| p.get(cwd)).and_then(Value::as_str);
    if let Some(slug) = registered.filter(|s| valid(s))
        && owner(slug).is_none_or(|o| o == cwd)
    {
        return Ok(slug.to_owned());
    }
    let mut dirs: Vec<String> = std::fs::read_dir(&tmp)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_owned))
        .filter(|s| valid(s))
        .collect();
    dirs.sort();
    if let Some(slug) = dirs.iter().find(|s| owner(s).as_deref() == Some(cwd)) {
        return Ok(slug.clone());
    }
    let taken: std::collections::HashSet<&str> = registry
        .get("projects")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|p| p.values().filter_map(Value::as_str))
        .collect();
    let name = Path::new(cwd).file_name().map(|n| n.to_string_lossy().to_lowercase()).unwrap_or_default();
    let mut base: String =
        name.chars().map(|c| if c.is_ascii_lowercase() || c.is_ascii_digit() { c } else { '-' }).collect();
    while base.contains("--") {
        base = base.replace("--", "-");
    }
    let base = base.trim_matches('-');
    let base = if base.is_empty() { "project" } else { base };
    let mut failed = None;
    for n in 0..MAX_PROJECTS {
        let slug = if n == 0 { base.to_owned() } else { format!("{base}-{n}") };
        if taken.contains(slug.as_str()) || !valid(&slug) {
            continue;
        }
        // Gemini CLI keeps the marker in its history folder too, and checks both.
        let markers = [marker(&slug), home.join("history").join(&slug).join(".project_root")];
        match markers.iter().map(|m| claim(m, cwd).map_err(|e| (m.clone(), e))).collect::<Result<Vec<bool>, _>>() {
            Ok(mine) if mine.iter().all(|m| *m) => return Ok(slug),
            Ok(_) => {}
            Err(e) => failed = Some(e),
        }
    }
    let (path, source) = failed.unwrap_or_else(|| (tmp.clone(), std::io::Error::other("no free project folder")));
    Err(PlaceError { path, source })
}

/// How many names of a project folder are tried (`name`, `name-1`, ...).
const MAX_PROJECTS: u32 = 10_000;

/// Whether `marker` names `cwd`: made so, private, when there is none (never replacing one).
fn claim(marker: &Path, cwd: &str) -> std::io::Result<bool> {
    use std::io::Write as _;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    if let Some(dir) = marker.parent() {
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    }
    match std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(marker) {
        Ok(mut file) => file.write_all(cwd.as_bytes()).map(|()| true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(std::fs::read_to_string(marker)?.trim() == cwd),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Gemini CLI's folder for a directory: the registry's (unless its marker names
    /// another), a marked one, or a new one named and marked as Gemini CLI does it.
    #[test]
    fn a_gemini_cli_project_folder_is_found_as_gemini_cli_finds_it() {
        let home = tempfile::tempdir().unwrap();
        let home = home.path();
        let tmp = home.join("tmp");
        // New: named after the directory; `-1` when that name is another's.
        assert_eq!(project(home, "/work/My App").unwrap(), "my-app");
        assert_eq!(std::fs::read_to_string(tmp.join("my-app/.project_root")).unwrap(), "/work/My App");
        assert_eq!(std::fs::read_to_string(home.join("history/my-app/.project_root")).unwrap(), "/work/My App");
        assert_eq!(project(home, "/other/my-app").unwrap(), "my-app-1");
        // Found again by its marker.
        assert_eq!(project(home, "/work/My App").unwrap(), "my-app");
        // The registry's, unless its marker names another directory; a hostile name is none.
        std::fs::write(
            home.join("projects.json"),
            r#"{"projects": {"/a/x": "chosen", "/b/y": "my-app", "/c/z": "../../etc"}}"#,
        )
        .unwrap();
        assert_eq!(project(home, "/a/x").unwrap(), "chosen");
        assert_eq!(project(home, "/b/y").unwrap(), "y");
        assert_eq!(project(home, "/c/z").unwrap(), "z");
        assert_eq!(project(home, "/").unwrap(), "project");
    }

    #[test]
    fn a_transcript_is_named_after_its_sessions_first_eight_characters() {
        assert!(GeminiCli.names_session("session-2026-11-28T07-23-7170941b", "7170941b-aaaa"));
        assert!(!GeminiCli.names_session("session-2026-11-28T07-23-7170941c", "7170941b-aaaa"));
    }
}
