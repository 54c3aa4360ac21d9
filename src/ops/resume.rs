//! `resume`: hand a conversation to an agent as a session file its own `--resume` reads,
//! raw or as the view an LLM is sent, and keep the hand-over so that what the agent adds to
//! the file is captured back into it (`hook`, `watch`, `import --follow` find the session
//! among the store's local hand-overs, then, once captured, in `meta.json`'s `resumes`:
//! `store::sessions`). A hand-over makes no commit.
//!
//! Where the file goes is decided from the caller's directory and the agent's own folder
//! (by the agent's home, `crate::agents`), never from the conversation: a pulled conversation's recorded cwd, session id or
//! title cannot choose a path. The file is named after a fresh UUID, written beside its
//! final name with mode 0600 and linked into place, so an existing session file is never
//! overwritten and a reader never sees half of one.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::agents::{self, Home};
use crate::clock::Clock;
use crate::compaction::Record;
use crate::event::{Event, Kind};
use crate::interop::Checkpoint;
use crate::interop::resume::{self, Agent, Part, Session};
use crate::ops::import::{MARK_WINDOW, TIP, written_record};
use crate::projection::{self, Origin, ProjectionError};
use crate::store::{Store, StoreError};

/// What `convo resume` is asked to do.
pub struct Request<'a> {
    pub id: &'a str,
    pub agent: Agent,
    /// Hand over the view an LLM is sent (compactions applied), not the raw events.
    pub compacted: bool,
    /// The directory the agent will run in (absolute): Claude Code looks sessions up by it.
    pub cwd: &'a Path,
    /// The agent's own folder: `~/.claude` (`CLAUDE_CONFIG_DIR`), `~/.codex` (`CODEX_HOME`),
    /// `~/.gemini` (under `GEMINI_CLI_HOME`) or opencode's data folder
    /// (`~/.local/share/opencode`, under `XDG_DATA_HOME`), which holds its `opencode.db`.
    pub home: &'a Path,
    /// Codex: the provider its config uses (`model_provider`, else `openai`).
    pub provider: &'a str,
    /// opencode: the model its config names (`provider/model`), which convo's messages name.
    pub model: Option<&'a str>,
}

/// What `resume` wrote.
#[derive(Debug)]
pub struct Resumed {
    pub id: String,
    pub title: Option<String>,
    pub agent: Agent,
    /// The session id the agent resumes.
    pub session: String,
    /// The session's file (opencode: its database).
    pub path: PathBuf,
    /// Events written (tool calls and results count one each).
    pub events: u64,
    /// Tool calls were written as text: the conversation came from elsewhere.
    pub as_text: bool,
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
    /// opencode has not made its database yet: convo does not make opencode's schema.
    #[error("{}: no opencode database (opencode has not run as this user yet)", .0.display())]
    NoDatabase(PathBuf),
    /// The file is not opencode's database (its tables are not there).
    #[error("{}: not an opencode database (no session, message, part and project tables)", .0.display())]
    NotOpencode(PathBuf),
    /// A session of that id is in the database already (it is never replaced).
    #[error("{}: a session {session} exists", path.display())]
    SessionExists { path: PathBuf, session: String },
    #[error("{}: {source}", path.display())]
    Database {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
}

/// What was written, and how to take it back if the commit that records it fails.
struct Handed {
    session: String,
    path: PathBuf,
    record: Value,
    undo: Undo,
}

enum Undo {
    File(PathBuf),
    /// The session's rows in opencode's database.
    Rows {
        db: PathBuf,
        session: String,
    },
}

impl Undo {
    fn run(self) {
        match self {
            Undo::File(path) => {
                let _ = std::fs::remove_file(path);
            }
            Undo::Rows { db, session } => {
                let _ = resume::opencode::delete_session(&db, &session);
            }
        }
    }
}

/// Write the conversation as `request.agent`'s session and record it with the conversation
/// in one commit. What was written is removed again if that commit fails. The events are
/// read, handed over and written a segment at a time: memory does not grow with the
/// conversation.
pub fn resume(store: &Store, request: &Request<'_>, clock: &Clock) -> Result<Resumed, ResumeError> {
    let cwd = request.cwd.to_str().filter(|_| request.cwd.is_absolute()).ok_or(ResumeError::Cwd(request.cwd.into()))?;
    let lock = store.lock()?;
    let meta = store.meta(request.id)?;
    let native = came_from(store, request.id, request.agent)?;
    // The session carries on from the line's end as it is now: a capture after the line
    // went on elsewhere goes on in a fork (`import::TIP`).
    let tip = store.last_said(request.id)?;
    let created = clock.timestamp();
    let mut written = 0u64;
    let mut tally = Checkpoint::default();
    let title = meta.title.clone();
    let writing = Writing { store, request, cwd, meta: &meta, native, clock };
    let home = agents::of(request.agent);
    let handed = match home.database(request.home) {
        Some(db) => write_opencode(writing, db, &mut written, &mut tally)?,
        None => write_file(writing, home, &mut written, &mut tally)?,
    };
    let Handed { session: session_id, path, mut record, undo } = handed;
    record["agent"] = json!(request.agent.name());
    record["compacted"] = json!(request.compacted);
    record["at"] = json!(created);
    if let Some(tip) = tip {
        record[TIP] = json!(tip);
    }

    // Local state until the session says something: its first capture commits the record
    // with its turns (`store::sessions`), so a hand-over makes no commit and one never
    // carried on leaves nothing in what the team shares.
    let handover = crate::store::sessions::Handover { conversation: request.id.to_owned(), record };
    if let Err(e) = store.add_handover(&lock, handover) {
        undo.run();
        return Err(e.into());
    }
    Ok(Resumed {
        id: request.id.to_owned(),
        title,
        agent: request.agent,
        session: session_id,
        path,
        events: written,
        as_text: !native,
    })
}

/// Give `hand` the parts of the hand-over: the raw events or the view an LLM is sent.
/// `written` counts those the agent's model is sent.
fn hand_over(
    store: &Store,
    request: &Request<'_>,
    session: &Session<'_>,
    tally: &mut Checkpoint,
    written: &mut u64,
    each: &mut dyn FnMut(Part<'_>) -> Result<(), Failed>,
) -> Result<(), Failed> {
    let mut hand = |part: Part<'_>| -> Result<(), Failed> {
        *written += u64::from(part.is_sent_to(request.agent, session));
        each(part)
    };
    if request.compacted {
        compacted_parts(store, request.id, tally, &mut hand)
    } else {
        raw_parts(store, request.id, request.agent, tally, &mut hand)
    }
}

/// What a writer of the agent's session needs: the conversation, how it came, where it goes.
#[derive(Clone, Copy)]
struct Writing<'a> {
    store: &'a Store,
    request: &'a Request<'a>,
    /// The directory the agent runs in (absolute, UTF-8).
    cwd: &'a str,
    meta: &'a crate::store::Meta,
    /// The conversation came from this agent: its own calls and records go back.
    native: bool,
    clock: &'a Clock,
}

/// A session file, named after a fresh UUID where the agent looks for it.
fn write_file(
    writing: Writing<'_>,
    home: &dyn Home,
    written: &mut u64,
    tally: &mut Checkpoint,
) -> Result<Handed, ResumeError> {
    let Writing { store, request, cwd, meta, native, clock } = writing;
    let created = clock.timestamp();
    let session_id = home.session_id(clock);
    let session = Session {
        id: &session_id,
        cwd,
        created: &created,
        title: meta.title.as_deref(),
        native,
        provider: request.provider,
    };
    let path = home
        .session_file(request.home, cwd, &session_id, clock)
        .ok_or_else(|| ResumeError::NotOpencode(request.home.join("opencode.db")))?
        .map_err(|agents::PlaceError { path, source }| ResumeError::Write { path, source })?;
    let mut fresh = || resume::uuid_from_ulid(&clock.new_id(), 4);
    let file = write_new(&path, |out| {
        let mut writer = home
            .writer(&session, &mut fresh, out)
            .ok_or_else(|| Failed::Write(std::io::Error::other("not an agent of session files")))?;
        hand_over(store, request, &session, tally, written, &mut |part| writer.part(part).map_err(Failed::Write))?;
        writer.finish().map_err(Failed::Write)
    })?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let stem = path.file_stem().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let read = (file.size, file.head.as_slice(), file.tail.as_slice());
    let record = written_record(home.format(), (&name, &stem), read, file.value, tally);
    Ok(Handed { session: session_id, undo: Undo::File(path.clone()), path, record })
}

/// opencode's session: rows in its database `path` (`<home>/opencode.db`), all in one
/// transaction, under a fresh id that no row has (an existing one is never replaced).
/// The database must be opencode's: convo does not make its schema.
fn write_opencode(
    writing: Writing<'_>,
    path: PathBuf,
    written: &mut u64,
    tally: &mut Checkpoint,
) -> Result<Handed, ResumeError> {
    let Writing { store, request, cwd, meta, native, clock } = writing;
    use resume::opencode;
    if !path.is_file() {
        return Err(ResumeError::NoDatabase(path));
    }
    let db_err = |source| ResumeError::Database { path: path.clone(), source };
    let mut db = opencode::open(&path).map_err(db_err)?;
    if !opencode::is_opencodes(&db).map_err(db_err)? {
        return Err(ResumeError::NotOpencode(path));
    }
    let place = opencode_place(cwd, request.model);
    let created = clock.timestamp();
    let now = clock.now().timestamp_millis();
    let mut fresh = || clock.new_id();
    let session_id = opencode::session_id(now, &mut fresh);
    let session =
        Session { id: &session_id, cwd, created: &created, title: meta.title.as_deref(), native, provider: "" };
    let tx = db.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).map_err(db_err)?;
    // Asked inside the transaction, which holds the database's write lock: no other writer
    // can add the session between this answer and convo's rows.
    if opencode::has_session(&tx, &session_id).map_err(db_err)? {
        return Err(ResumeError::SessionExists { path, session: session_id });
    }
    let mut stream = opencode::Stream::new(&tx, &session, &place, &mut fresh, now);
    let handed = hand_over(store, request, &session, tally, written, &mut |part| stream.part(part).map_err(Failed::Db));
    let finished = match handed {
        Ok(()) => stream.finish().map_err(Failed::Db),
        Err(e) => Err(e),
    };
    let done = finished.and_then(|w| tx.commit().map(|()| w).map_err(Failed::Db));
    let done = match done {
        Ok(done) => done,
        Err(Failed::Store(e)) => return Err(e.into()),
        Err(Failed::Projection(e)) => return Err(e.into()),
        Err(Failed::Write(e)) => return Err(ResumeError::Write { path, source: e }),
        Err(Failed::Db(e)) => return Err(db_err(e)),
    };
    // A capture carries on after the last message convo wrote, as the importer would
    // stand had it read them.
    let mut checkpoint = tally.clone();
    checkpoint.opencode.last = done.last_message.clone();
    checkpoint.opencode.last_time = done.last_time;
    let record = json!({"format": agents::of(request.agent).format().name(), "file": "opencode.db", "session": session_id,
                        "part": 0, "drafts": *written, "messages": done.messages,
                        "checkpoint": serde_json::to_value(&checkpoint).unwrap_or_default()});
    Ok(Handed { session: session_id.clone(), undo: Undo::Rows { db: path.clone(), session: session_id }, path, record })
}

/// opencode's project for `cwd`, found as opencode finds it: the repository the directory
/// is in (the first `.git` above it) is known by its first root commit, which opencode
/// caches in the repository's `.git/opencode`; a directory in none is in `global`, whose
/// directory is `/`.
pub fn opencode_place(cwd: &str, model: Option<&str>) -> resume::opencode::Place {
    let global = resume::opencode::Place {
        project: "global".into(),
        worktree: "/".into(),
        vcs: None,
        model: model.map(str::to_owned),
    };
    let Ok(repo) = gix::discover_opts(cwd, Default::default(), gix::open::Options::isolated()) else { return global };
    let Some(workdir) = repo.workdir().map(Path::to_owned) else { return global };
    // A linked worktree's project is its main repository's.
    let common = repo.common_dir().to_owned();
    let worktree = if common == repo.git_dir() {
        workdir.clone()
    } else {
        common.parent().map(Path::to_owned).unwrap_or(workdir.clone())
    };
    let cached = [repo.git_dir().join("opencode"), common.join("opencode")]
        .iter()
        .find_map(|f| std::fs::read_to_string(f).ok())
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty() && s.len() <= 256);
    let id = cached.or_else(|| first_root_commit(&repo));
    let worktree = worktree.to_string_lossy().into_owned();
    match id {
        Some(project) => resume::opencode::Place { project, worktree, vcs: Some("git".into()), model: global.model },
        None => resume::opencode::Place { worktree, vcs: Some("git".into()), ..global },
    }
}

/// The first (in hex order) of the commits without parents that HEAD reaches: what
/// opencode names a repository's project by (`git rev-list --max-parents=0 HEAD`, sorted).
fn first_root_commit(repo: &gix::Repository) -> Option<String> {
    let head = repo.head_id().ok()?;
    let walk = repo.rev_walk([head.detach()]).all().ok()?;
    walk.filter_map(Result::ok).filter(|info| info.parent_ids.is_empty()).map(|info| info.id.to_string()).min()
}

/// Why writing the session stopped: the store could not be read, or the session not written.
enum Failed {
    Store(StoreError),
    Projection(ProjectionError),
    Write(std::io::Error),
    Db(rusqlite::Error),
}

impl From<StoreError> for Failed {
    fn from(e: StoreError) -> Self {
        Failed::Store(e)
    }
}

/// The stored events of `segments` (conversation `id`'s, in order), one segment at a time,
/// each given to `each` with its index in the conversation. `tally` counts them as the
/// importer of the written file would stand at its end, in the conversation's terms: a
/// compaction the agent makes later covers the conversation's turns, from its first user
/// event to its latest event.
fn each_event(
    id: &str,
    segments: impl Iterator<Item = Result<Vec<u8>, StoreError>>,
    tally: &mut Checkpoint,
    each: &mut dyn FnMut(usize, &Event) -> Result<(), Failed>,
) -> Result<(), Failed> {
    let mut index = 0;
    for segment in segments {
        let bytes = segment?;
        let text = std::str::from_utf8(&bytes)
            .map_err(|_| StoreError::BadFile { path: id.to_owned(), message: "not UTF-8".into() })?;
        let events =
            crate::event::parse_stored(text).map_err(|error| StoreError::Corrupt { path: id.to_owned(), error })?;
        for event in &events {
            // As the importer of the written file counts: scaffolding starts no turn.
            if event.starts_turn() {
                tally.turns += 1;
                tally.first_user.get_or_insert_with(|| event.id.clone());
            }
            tally.last = Some(event.id.clone());
            each(index, event)?;
            index += 1;
        }
    }
    Ok(())
}

/// The raw events, with the agent's own compactions where they were made: the agent then
/// sends what it sent from its own file (the summary and what follows). convo's own
/// compactions are left to `--compacted`. A compaction the user undid (`compact --undo`: a
/// later compaction event `revokes` it) is not the agent's any more: the agent is handed the
/// history `convo show` shows, not the summary. The revokes come from the outlines, which
/// keep every compaction event whole, read from the same segments as the events.
fn raw_parts(
    store: &Store,
    id: &str,
    agent: Agent,
    tally: &mut Checkpoint,
    hand: &mut dyn FnMut(Part<'_>) -> Result<(), Failed>,
) -> Result<(), Failed> {
    let at = store.outlined(id)?;
    // A malformed record revokes nothing, as it is handed over as nothing.
    let revoked: std::collections::HashSet<String> = at
        .outlined
        .compactions
        .iter()
        .filter_map(|(_, e)| match Record::from_event(e) {
            Ok(Record::Revoke { target }) => Some(target),
            _ => None,
        })
        .collect();
    each_event(id, store.outlined_lines(&at), tally, &mut |_, event| {
        if !matches!(event.kind, Kind::Compaction) {
            return hand(Part::Event(event));
        }
        if revoked.contains(&event.id) {
            return Ok(());
        }
        let Ok(Record::Apply(c)) = Record::from_event(event) else { return Ok(()) };
        match c.summary {
            Some(summary) if summary.by == agent.summary_by() => hand(Part::Compacted {
                summary: &summary.text,
                agent_history: summary.agent_history.as_ref(),
                ts: &event.ts,
            }),
            _ => Ok(()),
        }
    })
}

/// The view an LLM is sent, decided from the outlines and made a segment at a time. A
/// summary the view opens with (nothing but system events before it) becomes the agent's
/// own compaction record; one further in stays the user/assistant pair the projection made,
/// as the model is sent it.
fn compacted_parts(
    store: &Store,
    id: &str,
    tally: &mut Checkpoint,
    hand: &mut dyn FnMut(Part<'_>) -> Result<(), Failed>,
) -> Result<(), Failed> {
    let at = store.outlined(id)?;
    let items = projection::view(&at.outlined).map_err(Failed::Projection)?;
    let mut items = items.iter().peekable();
    let mut opening = true;
    let mut give = |p: projection::Projected| -> Result<(), Failed> {
        // Only a summary pair is made up by a compaction (placeholders are by none).
        if opening && matches!(&p.origin, Origin::Synthetic { by: Some(_) }) {
            match &p.event.kind {
                // The projection's request for the summary: the agent's record stands for it.
                Kind::User { .. } => return Ok(()),
                Kind::Assistant { content } => {
                    opening = false;
                    return hand(Part::Compacted { summary: content, agent_history: None, ts: &p.event.ts });
                }
                _ => {}
            }
        }
        // Scaffolding (Codex's environment) is context before the summary, as a system event is.
        if !matches!(p.event.kind, Kind::System { .. } | Kind::Config { .. }) && !p.event.is_scaffolding() {
            opening = false;
        }
        hand(Part::Event(&p.event))
    };
    // Items come in the order of the events they stand at; made-up ones between them.
    let synthetic = |item: &projection::Item| projection::materialise(std::slice::from_ref(item), &[]).remove(0);
    each_event(id, store.outlined_lines(&at), tally, &mut |index, event| {
        while let Some(item) = items.peek() {
            match item {
                projection::Item::Synthetic(_) => give(synthetic(items.next().expect("peeked")))?,
                projection::Item::Raw { index: i, .. } if *i < index => {
                    items.next();
                }
                projection::Item::Raw { index: i, edit, turn } if *i == index => {
                    give(projection::apply(edit, *turn, event))?;
                    items.next();
                }
                projection::Item::Raw { .. } => break,
            }
        }
        Ok(())
    })?;
    for item in items {
        if let projection::Item::Synthetic(_) = item {
            give(synthetic(item))?;
        }
    }
    Ok(())
}

/// Whether the conversation (or the one it was forked from, and so on) was imported from
/// `agent`'s session files: its tool calls and reasoning are then the agent's own.
fn came_from(store: &Store, id: &str, agent: Agent) -> Result<bool, StoreError> {
    let mut id = id.to_owned();
    // A fork of a fork of ...: bounded, a cycle (hostile metadata) ends the walk.
    for _ in 0..16 {
        let meta = store.meta(&id)?;
        let format = meta.extra.get("source").and_then(|s| s.get("format")).and_then(Value::as_str);
        if format == Some(agents::of(agent).format().name()) {
            return Ok(true);
        }
        match meta.forked_from {
            Some(from) if store.meta(&from.id).is_ok() => id = from.id,
            _ => return Ok(false),
        }
    }
    Ok(false)
}

/// A file written through [`write_new`]: its size and its first and last
/// [`MARK_WINDOW`] bytes (what a capture recognises it by later), and what the writer gave.
struct Written<T> {
    size: u64,
    head: Vec<u8>,
    tail: Vec<u8>,
    value: T,
}

/// Counts what passes and keeps its first and last [`MARK_WINDOW`] bytes.
struct Marking<W> {
    inner: W,
    size: u64,
    head: Vec<u8>,
    tail: std::collections::VecDeque<u8>,
}

impl<W: Write> Write for Marking<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        let window = MARK_WINDOW as usize;
        let buf = &buf[..n];
        self.size += n as u64;
        let room = window.saturating_sub(self.head.len()).min(buf.len());
        self.head.extend_from_slice(&buf[..room]);
        let keep = &buf[buf.len().saturating_sub(window)..];
        let over = (self.tail.len() + keep.len()).saturating_sub(window);
        self.tail.drain(..over.min(self.tail.len()));
        self.tail.extend(keep);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Write a new file at `path`, which must not exist, with what `fill` writes: a private
/// temporary file beside it, synced, then hard-linked to the name (which fails if the name
/// is taken) and unlinked.
fn write_new<T>(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> Result<T, Failed>,
) -> Result<Written<T>, ResumeError> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let err = |source| ResumeError::Write { path: path.into(), source };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(err)?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.convo-tmp"));
    let file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&tmp).map_err(err)?;
    // Buffered before the marks, which then see 64 KiB at a time, not every token.
    let marking = Marking { inner: file, size: 0, head: Vec::new(), tail: Default::default() };
    let mut out = std::io::BufWriter::with_capacity(1 << 16, marking);
    let filled = fill(&mut out);
    let synced = out.flush().and_then(|()| out.get_ref().inner.sync_all());
    let linked = match (filled, synced) {
        (Ok(value), Ok(())) => std::fs::hard_link(&tmp, path).map(|()| value).map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => ResumeError::Exists(path.into()),
            _ => err(e),
        }),
        (Err(Failed::Store(e)), _) => Err(e.into()),
        (Err(Failed::Projection(e)), _) => Err(e.into()),
        (Err(Failed::Write(e)), _) | (Ok(_), Err(e)) => Err(err(e)),
        (Err(Failed::Db(e)), _) => Err(err(std::io::Error::other(e))),
    };
    let _ = std::fs::remove_file(&tmp);
    let value = linked?;
    let marks = out.get_ref();
    Ok(Written { size: marks.size, head: marks.head.clone(), tail: marks.tail.iter().copied().collect(), value })
}
