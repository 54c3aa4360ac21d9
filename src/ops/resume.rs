//! `resume`: hand a conversation to an agent as a session file its own `--resume` reads,
//! raw or as the view an LLM is sent, and keep the session with the conversation so that
//! what the agent adds to the file is captured back into it (`hook`, `watch`,
//! `import --follow` find the session in `meta.json`'s `resumes`).
//!
//! Where the file goes is decided here from the caller's directory and the agent's own
//! folder, never from the conversation: a pulled conversation's recorded cwd, session id or
//! title cannot choose a path. The file is named after a fresh UUID, written beside its
//! final name with mode 0600 and linked into place, so an existing session file is never
//! overwritten and a reader never sees half of one.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::clock::Clock;
use crate::compaction::Record;
use crate::event::{Event, Kind};
use crate::interop::Checkpoint;
use crate::interop::resume::{self, Agent, Part, Session};
use crate::ops::import::{RESUMES, written_record};
use crate::projection::{self, Origin, ProjectionError};
use crate::store::{Landed, Store, StoreError, subject};

/// What `convo resume` is asked to do.
pub struct Request<'a> {
    pub id: &'a str,
    pub agent: Agent,
    /// Hand over the view an LLM is sent (compactions applied), not the raw events.
    pub compacted: bool,
    /// The directory the agent will run in (absolute): Claude Code looks sessions up by it.
    pub cwd: &'a Path,
    /// The agent's own folder: `~/.claude` (`CLAUDE_CONFIG_DIR`) or `~/.codex` (`CODEX_HOME`).
    pub home: &'a Path,
    /// Codex: the provider its config uses (`model_provider`, else `openai`).
    pub provider: &'a str,
}

/// What `resume` wrote.
#[derive(Debug)]
pub struct Resumed {
    pub id: String,
    pub title: Option<String>,
    pub agent: Agent,
    /// The session id the agent resumes.
    pub session: String,
    pub path: PathBuf,
    /// Events written (tool calls and results count one each).
    pub events: u64,
    /// Tool calls were written as text: the conversation came from elsewhere.
    pub as_text: bool,
    /// The commit that recorded the session with the conversation.
    pub commit: String,
    pub subject: String,
    pub landed: Landed,
}

#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Projection(#[from] ProjectionError),
    #[error("{}: not an absolute path of UTF-8 text", .0.display())]
    Cwd(PathBuf),
    #[error("{}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file of that name is there already (it is never replaced).
    #[error("{}: a session file of that name exists", .0.display())]
    Exists(PathBuf),
}

/// Write the conversation as `request.agent`'s session and record it with the conversation
/// in one commit. The file is removed again if that commit fails.
pub fn resume(store: &Store, request: &Request<'_>, clock: &Clock) -> Result<Resumed, ResumeError> {
    let cwd = request.cwd.to_str().filter(|_| request.cwd.is_absolute()).ok_or(ResumeError::Cwd(request.cwd.into()))?;
    let lock = store.lock()?;
    let meta = store.meta(request.id)?;
    let events = store.events(request.id)?;
    let view;
    let parts = if request.compacted {
        view = projection::project(&events)?;
        compacted_parts(&view)
    } else {
        raw_parts(&events, request.agent)
    };
    let native = came_from(store, request.id, request.agent)?;
    let created = clock.timestamp();
    let session_id = resume::uuid_from_ulid(&clock.new_id(), if request.agent == Agent::Codex { 7 } else { 4 });
    let session = Session {
        id: &session_id,
        cwd,
        created: &created,
        title: meta.title.as_deref(),
        native,
        provider: request.provider,
    };
    let mut bytes = Vec::new();
    let mut fresh = || resume::uuid_from_ulid(&clock.new_id(), 4);
    let drafts = resume::write(request.agent, &session, &parts, &mut fresh, &mut bytes)
        .map_err(|source| ResumeError::Write { path: request.home.into(), source })?;
    let path = request.home.join(relative_path(request.agent, cwd, &session_id, clock));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let stem = path.file_stem().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut record = written_record(request.agent.format(), (&name, &stem), &bytes, drafts, &checkpoint(&events));
    record["agent"] = json!(request.agent.name());
    record["compacted"] = json!(request.compacted);
    record["at"] = json!(created);
    write_new(&path, &bytes)?;

    let mut meta = meta;
    match meta.extra.get_mut(RESUMES).and_then(Value::as_array_mut) {
        Some(records) => records.push(record),
        None => {
            meta.extra.insert(RESUMES.into(), json!([record]));
        }
    }
    let title = meta.title.clone();
    let written = parts.iter().filter(|p| !matches!(p, Part::Event(e) if !is_sent(e))).count() as u64;
    let subject = subject::resume(
        &subject::name(request.id, title.as_deref()),
        request.agent.name(),
        &session_id,
        request.compacted,
        written,
    );
    let committed = store
        .begin_append(&lock, request.id, clock)
        .and_then(|appending| store.finish_append_with(&lock, appending, Some(meta), Some(subject), clock));
    let done = match committed {
        Ok(done) => done,
        Err(e) => {
            let _ = std::fs::remove_file(&path);
            return Err(e.into());
        }
    };
    Ok(Resumed {
        id: request.id.to_owned(),
        title,
        agent: request.agent,
        session: session_id,
        path,
        events: written,
        as_text: !native,
        commit: done.commit.to_string(),
        subject: done.subject,
        landed: done.landed,
    })
}

/// Where the importer of a file convo wrote stands at its end, in the conversation's terms:
/// a compaction the agent makes later covers the conversation's turns, from its first user
/// event to its latest event.
fn checkpoint(events: &[Event]) -> Checkpoint {
    Checkpoint {
        turns: events.iter().filter(|e| matches!(e.kind, Kind::User { .. })).count() as u64,
        first_user: events.iter().find(|e| matches!(e.kind, Kind::User { .. })).map(|e| e.id.clone()),
        last: events.last().map(|e| e.id.clone()),
        ..Default::default()
    }
}

fn is_sent(event: &Event) -> bool {
    !matches!(event.kind, Kind::Config { .. } | Kind::Compaction | Kind::Other(_))
}

/// The raw events, with the agent's own compactions where they were made: the agent then
/// sends what it sent from its own file (the summary and what follows). convo's own
/// compactions are left to `--compacted`.
fn raw_parts(events: &[Event], agent: Agent) -> Vec<Part<'_>> {
    let mut parts = Vec::with_capacity(events.len());
    for event in events {
        if !matches!(event.kind, Kind::Compaction) {
            parts.push(Part::Event(event));
            continue;
        }
        if let Ok(Record::Apply(c)) = Record::from_event(event)
            && let Some(summary) = c.summary.filter(|s| s.by == agent.summary_by())
        {
            // Borrowed from the event's stored fields, which hold the same text.
            let text = event.extra.get("summary").and_then(|s| s.get("text")).and_then(Value::as_str);
            let history = event.extra.get("summary").and_then(|s| s.get("agent_history"));
            if let Some(text) = text.filter(|t| *t == summary.text) {
                parts.push(Part::Compacted { summary: text, agent_history: history, ts: &event.ts });
            }
        }
    }
    parts
}

/// The view an LLM is sent. A summary the view opens with (nothing but system events
/// before it) becomes the agent's own compaction record; one further in stays the
/// user/assistant pair the projection made, as the model is sent it.
fn compacted_parts(view: &[projection::Projected]) -> Vec<Part<'_>> {
    let mut parts = Vec::with_capacity(view.len());
    let mut opening = true;
    for p in view {
        // Only a summary pair is made up by a compaction (placeholders are by none).
        if opening && matches!(&p.origin, Origin::Synthetic { by: Some(_) }) {
            match &p.event.kind {
                // The projection's request for the summary: the agent's record stands for it.
                Kind::User { .. } => continue,
                Kind::Assistant { content } => {
                    parts.push(Part::Compacted { summary: content, agent_history: None, ts: &p.event.ts });
                    opening = false;
                    continue;
                }
                _ => {}
            }
        }
        if !matches!(p.event.kind, Kind::System { .. } | Kind::Config { .. }) {
            opening = false;
        }
        parts.push(Part::Event(&p.event));
    }
    parts
}

/// Whether the conversation (or the one it was forked from, and so on) was imported from
/// `agent`'s session files: its tool calls and reasoning are then the agent's own.
fn came_from(store: &Store, id: &str, agent: Agent) -> Result<bool, StoreError> {
    let mut id = id.to_owned();
    // A fork of a fork of ...: bounded, a cycle (hostile metadata) ends the walk.
    for _ in 0..16 {
        let meta = store.meta(&id)?;
        let format = meta.extra.get("source").and_then(|s| s.get("format")).and_then(Value::as_str);
        if format == Some(agent.format().name()) {
            return Ok(true);
        }
        match meta.forked_from {
            Some(from) if store.meta(&from.id).is_ok() => id = from.id,
            _ => return Ok(false),
        }
    }
    Ok(false)
}

/// Where the agent looks for session `session`, under its folder.
fn relative_path(agent: Agent, cwd: &str, session: &str, clock: &Clock) -> PathBuf {
    match agent {
        Agent::ClaudeCode => Path::new("projects").join(claude_project(cwd)).join(format!("{session}.jsonl")),
        Agent::Codex => {
            let now = clock.now();
            Path::new("sessions")
                .join(now.format("%Y/%m/%d").to_string())
                .join(format!("rollout-{}-{session}.jsonl", now.format("%Y-%m-%dT%H-%M-%S")))
        }
    }
}

/// Claude Code's folder for a project: the working directory with every character but
/// ASCII letters and digits made `-`. Only those characters and `-` remain, so the name
/// can never climb out of `projects/`.
pub fn claude_project(cwd: &str) -> String {
    cwd.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect()
}

/// Write `bytes` at `path`, which must not exist: a private temporary file beside it,
/// synced, then hard-linked to the name (which fails if the name is taken) and unlinked.
fn write_new(path: &Path, bytes: &[u8]) -> Result<(), ResumeError> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let err = |source| ResumeError::Write { path: path.into(), source };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(err)?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.convo-tmp"));
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&tmp).map_err(err)?;
    let written = file.write_all(bytes).and_then(|()| file.sync_all());
    drop(file);
    let linked = written.and_then(|()| std::fs::hard_link(&tmp, path));
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(ResumeError::Exists(path.into())),
        Err(e) => Err(err(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_folder_name_cannot_leave_projects() {
        assert_eq!(claude_project("/home/a b/../x.y"), "-home-a-b----x-y");
        assert!(claude_project("/tmp/ünï/…").chars().all(|c| c.is_ascii_alphanumeric() || c == '-'));
    }
}
