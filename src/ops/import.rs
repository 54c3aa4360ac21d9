//! `import`: another tool's session into new conversations. Line-based formats (Claude Code,
//! Codex, convo JSONL) stream: two passes for Claude Code (the subagent map), events staged
//! into segments as they are read, one commit at the end, in bounded memory. The others are
//! read whole. Either way a file that fails leaves the store byte for byte as it was.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::clock::Clock;
use crate::event::{Draft, Event, Stats};
use crate::interop::{self, Format, ImportError, Imported, Place, ReadError, Report};
use crate::ops::{project, subagent_files};
use crate::store::{Batch, Landed, Lock, NewConversation, Staged, Store, StoreError, subject};

/// Why an import wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum ImportFailure {
    /// The file is not the format (asked for or detected), or the store refused its drafts.
    #[error("{name}: {source}")]
    Refused { name: String, source: ImportError },
    #[error("{name} is already imported, as {id}{}", title.as_ref().map(|t| format!(" \"{t}\"")).unwrap_or_default())]
    Duplicate { name: String, id: String, title: Option<String> },
    /// The session is followed already (`watch`, `hook`, `import --follow`, or a session
    /// `convo resume` wrote): a plain import would make a second copy of it.
    #[error("{name} is already captured, as {id}{}", title.as_ref().map(|t| format!(" \"{t}\"")).unwrap_or_default())]
    Captured { name: String, id: String, title: Option<String> },
    #[error("{name}: the file is binary, not UTF-8 text")]
    NotText { name: String },
    /// The file's last line has no newline yet and is not JSON: a session still being
    /// written, cut where the agent is writing.
    #[error("{name}: line {line} is cut short: the session is still being written")]
    StillWritten { name: String, line: usize },
    #[error("{}: {source}", path.display())]
    File { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Follow(FollowFailure),
    /// An opencode database that cannot be read.
    #[error(transparent)]
    Database(Box<crate::ops::opencode::DbFailure>),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl ImportFailure {
    /// The file is not a line-based session, or holds no whole line yet: what a folder
    /// import and `watch` pass over without a word, as not theirs to take.
    pub fn is_not_a_session(&self) -> bool {
        matches!(
            self,
            ImportFailure::Follow(
                FollowFailure::NotLines { .. } | FollowFailure::Empty { .. } | FollowFailure::NoMessages { .. }
            )
        )
    }
}

type Result<T, E = ImportFailure> = std::result::Result<T, E>;

/// What is imported: a file by path (streamed when its format is line-based), or bytes
/// already read (stdin).
pub enum Input {
    File(PathBuf),
    Bytes { name: String, bytes: Vec<u8> },
}

/// A file checked and read as far as it can be without the store: the format, and for a
/// streamed file its subagent map; for the others, the whole parse.
pub struct Prepared {
    name: String,
    how: How,
}

enum How {
    Streamed { path: PathBuf, format: Format, roots: std::collections::HashMap<String, String>, skip_bad_lines: bool },
    Whole { imported: Imported, fingerprint: String },
}

/// The choices of `convo import`.
pub struct Options<'a> {
    pub title: Option<&'a str>,
    /// Import a file again although a conversation already holds it.
    pub again: bool,
}

/// What an import made.
pub struct Done {
    pub name: String,
    pub format: Format,
    pub report: Report,
    /// The new conversations, the main one first, with their counts.
    pub conversations: Vec<(String, Stats)>,
    pub landed: Landed,
    /// The lines passed over as not JSON (`--skip-bad-lines`), by number.
    pub bad_lines: Vec<usize>,
}

impl Prepared {
    /// The name the file is known by in reports (its file name, or `stdin`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The size of what a streamed import still reads, for a progress bar.
    pub fn streamed_size(&self) -> Option<u64> {
        match &self.how {
            How::Streamed { path, .. } => std::fs::metadata(path).map(|m| m.len()).ok(),
            How::Whole { .. } => None,
        }
    }
}

/// Check and read `input` as `format` (or the format detected), before any store is
/// opened or created: a file that fails here leaves no trace at all. With `skip_bad_lines`,
/// a file in a line format has its lines that are not JSON passed over (and counted in
/// [`Done::bad_lines`]) instead of refused.
pub fn prepare(input: Input, format: Option<Format>, skip_bad_lines: bool, clock: &Clock) -> Result<Prepared> {
    let (name, bytes) = match input {
        Input::File(path) => {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let mut head = Vec::new();
            std::fs::File::open(&path)
                .and_then(|f| f.take(64 * 1024).read_to_end(&mut head))
                .map_err(|source| ImportFailure::File { path: path.clone(), source })?;
            let text = String::from_utf8_lossy(&head);
            let line_format = match format {
                Some(f) => Some(f).filter(|f| interop::streams(*f)),
                None if head.contains(&0) || text.trim().is_empty() => None,
                None => detect_lines(&text, skip_bad_lines),
            };
            if let Some(format) = line_format
                && !head.contains(&0)
                && !text.trim().is_empty()
            {
                let roots = {
                    let mut ignore = |_| {};
                    let mut file = FileLines::open(&path, false, &mut ignore)?;
                    let mut skipping = SkipBad::new(&mut file);
                    let lines: interop::Lines = if skip_bad_lines { &mut skipping } else { &mut file };
                    interop::first_pass(format, lines).map_err(|e| refused(&path, name.clone(), e))?
                };
                return Ok(Prepared { name, how: How::Streamed { path, format, roots, skip_bad_lines } });
            }
            let bytes = std::fs::read(&path).map_err(|source| ImportFailure::File { path: path.clone(), source })?;
            (name, bytes)
        }
        Input::Bytes { name, bytes } => (name, bytes),
    };
    let fingerprint = gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, &bytes)
        .map(|id| id.to_string())
        .unwrap_or_default();
    let text = String::from_utf8(bytes).map_err(|_| ImportFailure::NotText { name: name.clone() })?;
    let imported = interop::import(&text, format, clock)
        .map_err(|source| ImportFailure::Refused { name: name.clone(), source })?;
    Ok(Prepared { name, how: How::Whole { imported, fingerprint } })
}

/// Import what `prepare` read into `store` as one commit, and make the main conversation
/// active. `progress` is told how many bytes a streamed import has read.
pub fn import(
    store: &Store,
    prepared: Prepared,
    options: &Options<'_>,
    clock: &Clock,
    progress: &mut dyn FnMut(u64),
) -> Result<Done> {
    let name = prepared.name;
    // Held for the whole import: the objects it writes are only known to be its own (and so
    // safe to remove if it fails) while no other writer can be writing the same ones.
    let lock = store.lock()?;
    let mut bad_lines = Vec::new();
    let (format, report, created) = match prepared.how {
        How::Whole { imported, fingerprint } => {
            check_duplicate(store, &name, &fingerprint, options.again)?;
            let main_title = main_title(options, imported.conversations[0].title.as_deref());
            let project = project_value(&imported.place);
            let mut new = Vec::new();
            for (i, c) in imported.conversations.iter().enumerate() {
                let mut extra = Map::new();
                extra.insert("source".into(), source(imported.format, &name, &fingerprint, i));
                if let Some(project) = &project {
                    extra.insert(crate::store::Project::KEY.into(), project.clone());
                }
                let title = part_title(main_title.as_deref(), i, c.title.as_deref());
                new.push(NewConversation { title, extra, drafts: c.drafts.clone(), parent: c.parent });
            }
            let events: Vec<u64> = imported.conversations.iter().map(|c| c.drafts.len() as u64).collect();
            let subject = subject::import(
                main_title.as_deref().unwrap_or(&name),
                imported.format.name(),
                events[0],
                &events[1..],
            );
            (imported.format, imported.report, store.create_many(&lock, new, &subject, clock)?)
        }
        How::Streamed { path, format, roots, skip_bad_lines } => {
            check_captured(store, &name, &path, options.again)?;
            let mut lines = FileLines::open(&path, true, progress)?;
            let mut emit = StoreEmit { store, clock, staged: Vec::new() };
            let mut skipping = SkipBad::new(&mut lines);
            let outcome = if skip_bad_lines {
                interop::stream(format, &mut skipping, &roots, clock, &mut emit)
            } else {
                interop::stream(format, skipping.inner, &roots, clock, &mut emit)
            };
            bad_lines = skipping.skipped;
            let discard = |emit: &StoreEmit| store.discard(emit.staged.iter().flatten().collect::<Vec<&Staged>>());
            let outcome = match outcome {
                Ok(outcome) => outcome,
                Err(source) => {
                    discard(&emit);
                    return Err(refused(&path, name, source));
                }
            };
            let fingerprint =
                lines.hasher.take().and_then(|h| h.try_finalize().ok()).map(|id| id.to_string()).unwrap_or_default();
            check_duplicate(store, &name, &fingerprint, options.again).inspect_err(|_| discard(&emit))?;
            let main_title = main_title(options, outcome.conversations[0].0.as_deref());
            let project = project_value(&outcome.place);
            let mut staged = Vec::new();
            // A file with no events still makes its (empty) conversation, titled and fingerprinted.
            if emit.staged.is_empty() {
                emit.staged.push(None);
            }
            let ids = staged_ids(&emit.staged);
            let spawned_by = subagent_of(store, None, &path, format).inspect_err(|_| discard(&emit))?;
            for (i, slot) in emit.staged.into_iter().enumerate() {
                let Some(mut s) = slot.or_else(|| (i == 0).then(|| store.stage(clock))) else { continue };
                let (title, parent) = outcome.conversations.get(i).cloned().unwrap_or_default();
                s.title = part_title(main_title.as_deref(), i, title.as_deref());
                s.parent = parent;
                forked(&mut s, &outcome, i, main_title.as_deref(), &ids);
                if let (0, Some(parent)) = (i, &spawned_by) {
                    s.extra.insert("subagent_of".into(), json!(parent));
                }
                s.extra.insert("source".into(), source(format, &name, &fingerprint, i));
                if let Some(project) = &project {
                    s.extra.insert(crate::store::Project::KEY.into(), project.clone());
                }
                staged.push(s);
            }
            let events: Vec<u64> = staged.iter().map(|s| s.stats.events).collect();
            let subject =
                subject::import(main_title.as_deref().unwrap_or(&name), format.name(), events[0], &events[1..]);
            (format, outcome.report, store.commit_staged(&lock, staged, &subject, clock)?)
        }
    };
    store.set_active(&created.conversations[0].0)?;
    Ok(Done { name, format, report, conversations: created.conversations, landed: created.landed, bad_lines })
}

/// The conversation of the session whose subagent's file `path` is, when it lies where the
/// agent keeps its subagents' files and that session was imported ([`subagent_files`]).
fn subagent_of(store: &Store, batch: Option<&Batch>, path: &Path, format: Format) -> Result<Option<String>> {
    let mut head = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(64 * 1024).read_to_end(&mut head))
        .map_err(|source| ImportFailure::File { path: path.to_owned(), source })?;
    match subagent_files::ParentFile::of(path, format, &head) {
        Some(parent) => Ok(parent.conversation(store, batch, format)?),
        None => Ok(None),
    }
}

/// The ids of the conversations staged so far, by part.
fn staged_ids(staged: &[Option<Staged>]) -> HashMap<usize, String> {
    staged.iter().enumerate().filter_map(|(i, s)| Some((i, s.as_ref()?.id.clone()))).collect()
}

/// A part that goes on from another (a Gemini CLI session after a rewind) is titled after
/// the main conversation and records the conversation it went on from, by `ids` (part to
/// conversation id): one it was forked from that holds no event is none.
fn forked(s: &mut Staged, outcome: &interop::Outcome, part: usize, main: Option<&str>, ids: &HashMap<usize, String>) {
    let Some((n, fork)) = outcome.forks.iter().enumerate().find(|(_, f)| f.conversation == part) else { return };
    s.title = Some(format!("{} (after rewind {})", main.unwrap_or("session"), n + 1));
    s.forked_from = ids.get(&fork.from).map(|id| crate::store::ForkedFrom { id: id.clone(), turn: fork.turn });
}

/// The title asked for, else the one the importer found (the agent's, or the first
/// prompt): never the file's name, which for an agent's session is an id nobody knows.
fn main_title(options: &Options<'_>, from_source: Option<&str>) -> Option<String> {
    options.title.or(from_source).map(str::to_owned)
}

/// A subagent's conversation is titled after its parent's: `<parent>: <its own>`.
fn part_title(main: Option<&str>, part: usize, title: Option<&str>) -> Option<String> {
    if part == 0 {
        return main.map(str::to_owned);
    }
    let own = title.map_or_else(|| format!("subagent {part}"), str::to_owned);
    Some(match main {
        Some(main) => format!("{main}: {own}"),
        None => own,
    })
}

/// Where a session ran, as its conversations' `meta.json` keeps it ([`project::recorded`]:
/// the remote looked up at the recorded cwd when the file names none); `None` when
/// nothing is known.
pub(crate) fn project_value(place: &Place) -> Option<Value> {
    let project = project::recorded(place);
    (!project.is_empty()).then(|| project.to_json())
}

/// Where a conversation came from, in its `meta.json`: what `check_duplicate` looks for.
fn source(format: Format, name: &str, fingerprint: &str, part: usize) -> Value {
    let mut source = json!({"format": format.name(), "file": name, "sha1": fingerprint, "part": part});
    // A followed file has no one fingerprint: it grows (its record keeps `consumed_*`).
    if fingerprint.is_empty()
        && let Value::Object(o) = &mut source
    {
        o.remove("sha1");
    }
    source
}

fn check_duplicate(store: &Store, name: &str, fingerprint: &str, again: bool) -> Result<()> {
    if again {
        return Ok(());
    }
    for id in store.conversation_ids()? {
        let meta = store.meta(&id)?;
        if meta.extra.get("source").and_then(|s| s.get("sha1")).and_then(Value::as_str) == Some(fingerprint) {
            return Err(ImportFailure::Duplicate { name: name.to_owned(), id, title: meta.title });
        }
    }
    Ok(())
}

/// A session file is known by its name whichever way it came in: one that `watch`, `hook`
/// or `import --follow` captured (or `convo resume` wrote) is not imported a second time.
fn check_captured(store: &Store, name: &str, path: &Path, again: bool) -> Result<()> {
    if again {
        return Ok(());
    }
    let session = path.file_stem().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    match session_parts(store, &session)?.remove(&0) {
        Some((id, meta, _)) => Err(ImportFailure::Captured { name: name.to_owned(), id, title: meta.title }),
        None => Ok(()),
    }
}

/// Puts what a streaming importer emits straight into staged conversations.
struct StoreEmit<'a> {
    store: &'a Store,
    clock: &'a Clock,
    staged: Vec<Option<Staged>>,
}

impl interop::Emit for StoreEmit<'_> {
    fn drafts(&mut self, conversation: usize, drafts: Vec<Draft>) -> std::result::Result<(), StoreError> {
        if drafts.is_empty() {
            return Ok(());
        }
        while self.staged.len() <= conversation {
            self.staged.push(None);
        }
        let staged = self.staged[conversation].get_or_insert_with(|| self.store.stage(self.clock));
        self.store.stage_drafts(staged, drafts, self.clock)
    }
}

/// A file's lines, hashed (as git hashes a blob) and counted to `progress` as read.
struct FileLines<'a> {
    /// Bounded to the size at open: a live session still being written is imported as it
    /// was then, the same bytes in both passes and in the fingerprint.
    reader: BufReader<std::io::Take<std::fs::File>>,
    hasher: Option<gix::hash::Hasher>,
    progress: &'a mut dyn FnMut(u64),
    line: usize,
}

impl<'a> FileLines<'a> {
    fn open(path: &Path, hash: bool, progress: &'a mut dyn FnMut(u64)) -> Result<FileLines<'a>> {
        let size =
            std::fs::metadata(path).map_err(|source| ImportFailure::File { path: path.to_owned(), source })?.len();
        Self::open_upto(path, size, hash, progress)
    }

    /// The file's bytes `from..to` (whole lines, `from` at the start of one), unhashed.
    fn open_range(path: &Path, from: u64, to: u64, progress: &'a mut dyn FnMut(u64)) -> Result<FileLines<'a>> {
        use std::io::{Seek, SeekFrom};
        let file_err = |source| ImportFailure::File { path: path.to_owned(), source };
        let mut file = std::fs::File::open(path).map_err(file_err)?;
        file.seek(SeekFrom::Start(from)).map_err(file_err)?;
        let reader = BufReader::with_capacity(1 << 16, file.take(to - from));
        Ok(FileLines { reader, hasher: None, progress, line: 0 })
    }

    /// The file's first `size` bytes only.
    fn open_upto(path: &Path, size: u64, hash: bool, progress: &'a mut dyn FnMut(u64)) -> Result<FileLines<'a>> {
        let file_err = |source| ImportFailure::File { path: path.to_owned(), source };
        let file = std::fs::File::open(path).map_err(file_err)?;
        let hasher = hash.then(|| {
            let mut h = gix::hash::hasher(gix::hash::Kind::Sha1);
            h.update(format!("blob {size}\0").as_bytes());
            h
        });
        Ok(FileLines { reader: BufReader::with_capacity(1 << 20, file.take(size)), hasher, progress, line: 0 })
    }
}

impl Iterator for FileLines<'_> {
    type Item = std::result::Result<String, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut buf = Vec::new();
        match self.reader.read_until(b'\n', &mut buf) {
            Ok(0) => None,
            Ok(n) => {
                self.line += 1;
                if let Some(h) = &mut self.hasher {
                    h.update(&buf);
                }
                (self.progress)(n as u64);
                while matches!(buf.last(), Some(b'\n' | b'\r')) {
                    buf.pop();
                }
                Some(String::from_utf8(buf).map_err(|_| ReadError::NotUtf8 { line: self.line }))
            }
            Err(e) => Some(Err(e.into())),
        }
    }
}

/// Lines that are not JSON passed on blank (which every line format passes over, so the
/// others keep their numbers), their numbers kept: `import --skip-bad-lines`.
struct SkipBad<'a, 'b> {
    inner: &'a mut FileLines<'b>,
    line: usize,
    skipped: Vec<usize>,
}

impl<'a, 'b> SkipBad<'a, 'b> {
    fn new(inner: &'a mut FileLines<'b>) -> Self {
        SkipBad { inner, line: 0, skipped: Vec::new() }
    }
}

impl Iterator for SkipBad<'_, '_> {
    type Item = std::result::Result<String, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        let item = self.inner.next()?;
        self.line += 1;
        Some(item.map(|line| {
            if line.trim().is_empty() || serde_json::from_str::<serde::de::IgnoredAny>(&line).is_ok() {
                line
            } else {
                self.skipped.push(self.line);
                String::new()
            }
        }))
    }
}

/// The refusal of the file at `path` for `source`: when the line that is not JSON is its
/// last and has no newline yet, the session is still being written
/// ([`ImportFailure::StillWritten`]).
fn refused(path: &Path, name: String, source: interop::InteropError) -> ImportFailure {
    let not_json = match &source {
        interop::InteropError::NotJsonLine { line, .. } => Some(*line),
        interop::InteropError::Event(crate::event::LineError {
            line,
            kind: crate::event::LineErrorKind::NotJson(_),
            ..
        }) => Some(*line),
        _ => None,
    };
    if let Some(line) = not_json
        && cut_last_line(path) == Some(line)
    {
        return ImportFailure::StillWritten { name, line };
    }
    ImportFailure::Refused { name, source: source.into() }
}

/// The number of the file's last line when it has no newline yet.
fn cut_last_line(path: &Path) -> Option<usize> {
    let size = std::fs::metadata(path).ok()?.len();
    if size == 0 || whole_lines(path).ok()? == size {
        return None;
    }
    lines_before(path, size).ok().map(|n| n + 1)
}

/// The line-based format `head` (the start of the file) is in, if it is one.
/// With `skip_bad_lines`, its lines that are not JSON are passed over.
fn detect_lines(head: &str, skip_bad_lines: bool) -> Option<Format> {
    // Only whole lines: the last one may be cut.
    let whole = match head.rfind('\n') {
        Some(end) => &head[..end],
        None => head,
    };
    let scratch = Clock::fixed(chrono::DateTime::UNIX_EPOCH);
    Format::ALL.into_iter().filter(|f| interop::streams(*f)).find(|f| {
        let mut sink: Vec<Vec<Draft>> = Vec::new();
        let mut lines = whole
            .lines()
            .filter(|l| !skip_bad_lines || serde_json::from_str::<serde::de::IgnoredAny>(l).is_ok())
            .map(|l| Ok(l.to_owned()));
        interop::stream(*f, &mut lines, &Default::default(), &scratch, &mut sink).is_ok()
    })
}

/// Wait, at most `budget`, for the session file an agent's hook names to hold the whole
/// turn: until it exists, its size holds still from one look to the next, and (where the
/// agent's lines say it: Claude Code) its last message ends the turn. A hook can run before
/// the agent's last lines reach the file; what is still missing after the wait is left to
/// the next capture (only whole lines are read). Whether the file settled.
pub fn settle(path: &Path, format: Format, budget: std::time::Duration) -> bool {
    const LOOK: std::time::Duration = std::time::Duration::from_millis(100);
    let start = std::time::Instant::now();
    let mut last = None;
    loop {
        let size = std::fs::metadata(path).ok().map(|m| m.len());
        if size.is_some() && size == last && turn_ended(path, format) {
            return true;
        }
        if start.elapsed() >= budget {
            return false;
        }
        last = size;
        std::thread::sleep(LOOK);
    }
}

/// Whether the last message line of the file ends a turn, as far as its format tells.
fn turn_ended(path: &Path, format: Format) -> bool {
    use std::io::{Seek, SeekFrom};
    if format != Format::ClaudeCode {
        return true;
    }
    let Ok(mut file) = std::fs::File::open(path) else { return false };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut tail = Vec::new();
    if file.seek(SeekFrom::Start(len.saturating_sub(MARK_WINDOW))).is_err() || file.read_to_end(&mut tail).is_err() {
        return false;
    }
    let text = String::from_utf8_lossy(&tail);
    // A line still being written (no newline yet) is not the turn's end.
    let whole = text.rfind('\n').map_or("", |end| &text[..end]);
    whole.lines().rev().find_map(interop::claude_code::ends_turn).unwrap_or(true)
}

/// What `import --follow` did with a session file.
pub enum Followed {
    /// The session's first import: its whole lines so far, as `import` would.
    Started(Done),
    /// Events the file gained since its last import, appended (one commit per conversation
    /// of the session that grew); `new_parts` events went into conversations for subagent
    /// work new since (one commit that creates them).
    /// `went_on_in`: the fork the session's main conversation went on in, when `id`'s line
    /// had gone on past the session's last turn.
    Grew {
        name: String,
        format: Format,
        id: String,
        added: u64,
        new_parts: u64,
        went_on_in: Option<String>,
        landed: Vec<Landed>,
    },
    /// No new event since the last import: no whole line was added, or none that makes an
    /// event (nothing is written then).
    Unchanged { name: String, id: String },
    /// Imported whole before (plain `import`) and unchanged since: that import's
    /// conversations now follow the file (their metadata is the only change).
    TakenOver { name: String, id: String },
}

/// Why a followed file cannot be continued.
#[derive(Debug, thiserror::Error)]
pub enum FollowFailure {
    #[error("{name} is shorter than the {consumed} bytes imported from it before (truncated)")]
    Truncated { name: String, consumed: u64 },
    #[error("{name} changed in its first {consumed} bytes since they were imported (rewritten)")]
    Rewritten { name: String, consumed: u64 },
    #[error("{name}: --follow reads line-based sessions (claude-code, codex, gemini-cli, jsonl), not {format}")]
    NotLines { name: String, format: &'static str },
    #[error("{name} holds no whole line yet")]
    Empty { name: String },
    /// A Gemini CLI session file with no message yet: Gemini CLI makes one each time it
    /// starts (and on a resume, a second one it leaves unused).
    #[error("{name} holds no message yet")]
    NoMessages { name: String },
    #[error(
        "{name} was imported whole before (as {id}) and has changed since: which of its lines are new cannot be told"
    )]
    ImportedWhole { name: String, id: String },
}

/// `import --follow FILE`: import what is new in a session file since the last import of
/// the same session (its file name, which Claude Code and Codex make from the session id)
/// into the same conversations. Only whole lines are read: a line still being written is
/// left for next time. How far the file was read (bytes, and the SHA-1 of those bytes) is
/// kept in the main conversation's `meta.json`, with each conversation's count of imported
/// events, in the commit that adds them: a file cut short or rewritten is refused, never
/// mixed in, and a restart carries on where the store says.
pub fn follow(
    store: &Store,
    path: &Path,
    format: Option<Format>,
    options: &Options<'_>,
    clock: &Clock,
) -> Result<Followed> {
    let lock = store.lock()?;
    follow_into(store, &lock, path, format, options, clock, &mut Commits::Now)
}

/// Where a follow's writes go.
pub enum Commits<'a> {
    /// Its own commits, made as it goes (one to make a session's new conversations, one per
    /// conversation it appends to).
    Now,
    /// A batch the caller commits (`import DIR`: one commit for the folder).
    Into(&'a mut Batch),
}

/// [`follow`], under the caller's `lock`, its writes going where `commits` says. With
/// [`Commits::Into`] nothing is committed and the active conversation is left alone; the
/// `landed` it reports is empty.
pub fn follow_into(
    store: &Store,
    lock: &Lock,
    path: &Path,
    format: Option<Format>,
    options: &Options<'_>,
    clock: &Clock,
    commits: &mut Commits<'_>,
) -> Result<Followed> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let session = path.file_stem().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let whole = whole_lines(path)?;
    let parts = session_parts(store, &session)?;
    let Some((main_id, main_meta, at)) = parts.get(&0).cloned() else {
        if let Some(adopted) = adopt_whole_import(store, lock, path, whole, &session, clock, commits)? {
            return Ok(adopted);
        }
        return start_following(store, lock, path, whole, &session, format, options, clock, commits)
            .map(Followed::Started);
    };
    let recorded = at.get(&main_meta).cloned().unwrap_or_default();
    let consumed = recorded.get("consumed").and_then(Value::as_u64).unwrap_or(0);
    if whole < consumed {
        return Err(follow_refused(FollowFailure::Truncated { name, consumed }));
    }
    if !prefix_unchanged(path, consumed, &recorded)? {
        return Err(follow_refused(FollowFailure::Rewritten { name, consumed }));
    }
    if whole == consumed {
        return Ok(Followed::Unchanged { name, id: main_id });
    }
    let format = match recorded.get("format").and_then(Value::as_str).and_then(Format::parse) {
        Some(f) if interop::streams(f) => f,
        _ => return Err(follow_refused(FollowFailure::NotLines { name, format: "this format" })),
    };
    let batch = match commits {
        Commits::Into(batch) => Some(&**batch),
        Commits::Now => None,
    };
    let went_on = diverged(store, &main_id, &recorded, batch)?;
    // Where the importer stood after the bytes read before: then only the new bytes are
    // read. Without one (a record from before checkpoints, or subagent lines), the whole
    // file is read again and the events imported before are skipped by count.
    let mut checkpoint: Option<interop::Checkpoint> =
        recorded.get("checkpoint").and_then(|c| serde_json::from_value(c.clone()).ok());
    let discard = |emit: &FollowEmit| {
        for p in emit.parts.values() {
            if let Some(a) = &p.appending {
                store.discard_append(a);
            }
        }
        store.discard(emit.fresh.values().chain(emit.parts.values().filter_map(|p| p.fork.as_ref())));
    };
    let (outcome, mut emit) = loop {
        let from = if checkpoint.is_some() { consumed } else { 0 };
        let roots = sidechain_roots_in(path, from, whole, format, &name)?;
        let mut ignore = |_| {};
        let mut lines = FileLines::open_range(path, from, whole, &mut ignore)?;
        let mut emit = FollowEmit { store, lock, clock, parts: HashMap::new(), fresh: HashMap::new() };
        for (part, (id, meta, at)) in &parts {
            let recorded = at.get(meta).and_then(|s| s.get("drafts")).and_then(Value::as_u64).unwrap_or(0);
            let (already, base) = if checkpoint.is_some() { (0, recorded) } else { (recorded, 0) };
            let fork = match (part, &went_on) {
                (0, Some(kept)) => Some(fork_of(store, kept, clock).inspect_err(|_| discard(&emit))?),
                _ => None,
            };
            emit.parts.insert(
                *part,
                FollowedPart {
                    id: id.clone(),
                    meta: meta.clone(),
                    at: *at,
                    already,
                    base,
                    seen: 0,
                    appending: None,
                    fork,
                },
            );
        }
        match interop::stream_from(format, &mut lines, &roots, checkpoint.as_ref(), clock, &mut emit) {
            Ok(outcome) => break (outcome, emit),
            // What came after the checkpoint changed what came before it: read it all.
            Err(interop::InteropError::ReadWhole) if checkpoint.is_some() => {
                discard(&emit);
                checkpoint = None;
            }
            Err(source) => {
                discard(&emit);
                // Read from `from` on: its lines are counted from there, the file's from its start.
                let source = match from {
                    0 => source,
                    from => source.after_lines(lines_before(path, from)?),
                };
                return Err(ImportFailure::Refused { name, source: source.into() });
            }
        }
    };
    // Lines that make no event (progress and hook records, a line held for the event it
    // starts): no commit. How far the file was read stays where the store says, so the next
    // follow reads these lines again from the same checkpoint and makes the same events of
    // them; a hand-over record not captured yet waits for the first event too.
    let kept = went_on.as_ref().map_or(0, |kept| kept.len() as u64);
    let no_event = emit.fresh.values().all(|s| s.stats.events == 0)
        && emit.parts.values().all(|p| {
            p.appending.as_ref().is_none_or(|a| appending_len(a) == 0)
                && p.fork.as_ref().is_none_or(|fork| fork.stats.events <= kept)
        });
    if no_event {
        discard(&emit);
        return Ok(Followed::Unchanged { name, id: main_id });
    }
    // The main conversation gains nothing, its subagents' conversations do: their events
    // and how far the file was read go in one commit, not beside one that adds nothing.
    let main_quiet = emit.parts.get(&0).is_none_or(|p| {
        p.appending.as_ref().is_none_or(|a| appending_len(a) == 0)
            && p.fork.as_ref().is_none_or(|f| f.stats.events <= kept)
    });
    let fold = main_quiet && matches!(commits, Commits::Now);
    let mut own = Batch::default();
    let mut local = match commits {
        _ if fold => Commits::Into(&mut own),
        Commits::Into(batch) => Commits::Into(batch),
        Commits::Now => Commits::Now,
    };
    let main_title = main_meta.title.clone().or_else(|| outcome.conversations.first().and_then(|c| c.0.clone()));
    let result = (|| {
        let commits = &mut local;
        let marks = prefix_marks(path, whole)?;
        let mut landed = Vec::new();
        let mut added = 0;
        let mut went_on_fork = None;
        let followed_project = project_value(&outcome.place);
        let mut parts: Vec<(usize, FollowedPart)> = emit.parts.drain().collect();
        parts.sort_by_key(|(part, _)| *part);
        // A subagent's first work since the last import: a new conversation, linked to its
        // parent, in one commit before the appends.
        let mut fresh: Vec<(usize, Staged)> = emit.fresh.drain().collect();
        fresh.sort_by_key(|(part, _)| *part);
        let unfollowed = fresh.iter().map(|(_, s)| s.stats.events).sum();
        if !fresh.is_empty() {
            let main_title =
                main_meta.title.clone().or_else(|| outcome.conversations.first().and_then(|c| c.0.clone()));
            let project = main_meta.extra.get(crate::store::Project::KEY).cloned().or_else(|| followed_project.clone());
            let mut ids: HashMap<usize, String> = parts.iter().map(|(part, p)| (*part, p.id.clone())).collect();
            ids.extend(fresh.iter().map(|(part, s)| (*part, s.id.clone())));
            let mut staged = Vec::new();
            for (part, mut s) in fresh {
                let (title, parent) = outcome.conversations.get(part).cloned().unwrap_or_default();
                s.title = part_title(main_title.as_deref(), part, title.as_deref());
                forked(&mut s, &outcome, part, main_title.as_deref(), &ids);
                if let Some(project) = &project {
                    s.extra.insert(crate::store::Project::KEY.into(), project.clone());
                }
                if let Some(parent) = parent.and_then(|p| ids.get(&p)) {
                    s.extra.insert("subagent_of".into(), json!(parent));
                }
                let mut src = source(format, &name, "", part);
                src["session"] = json!(session);
                src["drafts"] = json!(s.stats.events);
                s.extra.insert("source".into(), src);
                staged.push(s);
            }
            // Only new subagents' conversations: the main one's events are appended apart.
            let events: Vec<u64> = staged.iter().map(|s| s.stats.events).collect();
            let subject = subject::import(main_title.as_deref().unwrap_or(&name), format.name(), 0, &events);
            let committed = match commits {
                Commits::Into(batch) => {
                    store.batch_make(batch, staged);
                    Ok(())
                }
                Commits::Now => store.commit_staged(lock, staged, &subject, clock).map(|c| landed.push(c.landed)),
            };
            match committed {
                Ok(()) => {}
                Err(e) => {
                    for (_, p) in &parts {
                        if let Some(a) = &p.appending {
                            store.discard_append(a);
                        }
                    }
                    return Err(e.into());
                }
            }
        }
        // The main conversation last: it holds how far the file was read, so a failure before
        // it leaves the rest to be read again (and the parts' own counts say what they have).
        parts.rotate_left(1);
        for (part, p) in parts {
            let mut meta = p.meta.clone();
            let grew = p.appending.is_some();
            let tip = match (&p.fork, &p.appending) {
                (Some(fork), _) if fork.stats.events > went_on.as_ref().map_or(0, |kept| kept.len() as u64) => {
                    fork.last_said.clone()
                }
                (Some(_), _) => None,
                (None, Some(a)) => a.last_said().map(str::to_owned),
                (None, None) => None,
            };
            if let Some(source) = p.at.get_mut(&mut meta) {
                source.insert("drafts".into(), json!(p.base + p.seen.max(p.already)));
                if part == 0 {
                    note_read(source, whole, &marks, outcome.checkpoint.as_ref());
                }
                if let Some(tip) = tip {
                    source.insert(TIP.into(), json!(tip));
                }
            }
            // What the file had not said yet when it was first read (a session followed from
            // its first line): its title, where it runs. Never over what is there.
            if part == 0 && meta.title.is_none() {
                meta.title = outcome.conversations.first().and_then(|c| c.0.clone());
            }
            if !meta.extra.contains_key(crate::store::Project::KEY)
                && let Some(project) = &followed_project
            {
                meta.extra.insert(crate::store::Project::KEY.into(), project.clone());
            }
            if let Some(fork) = p.fork {
                let events = fork.stats.events - went_on.as_ref().map_or(0, |kept| kept.len() as u64);
                if events > 0 {
                    added += events;
                    let base = went_on.as_ref().and_then(|kept| last_said(kept));
                    let went = went_on_in(
                        store,
                        lock,
                        commits,
                        (fork, events, base.as_deref()),
                        (&p.id, &p.meta, p.at),
                        meta,
                        format,
                        clock,
                    )?;
                    landed.extend(went.landed);
                    if part == 0 {
                        went_on_fork = Some(went.id);
                    }
                    continue;
                }
                // Nothing new said: no fork yet, only how far the file was read.
                store.discard([&fork]);
            }
            if !grew && part != 0 {
                continue;
            }
            let appending = match p.appending {
                Some(a) => a,
                None => store.begin_append(lock, &p.id, clock)?,
            };
            let events = appending_len(&appending);
            added += events;
            match commits {
                Commits::Into(batch) => store.batch_append(batch, appending, Some(meta)),
                Commits::Now => {
                    let title = meta.title.clone().unwrap_or_else(|| name.clone());
                    let subject = subject::follow(&title, format.name(), events);
                    let done = store.finish_append_with(lock, appending, Some(meta), Some(subject), clock)?;
                    landed.push(done.landed);
                }
            }
        }
        Ok(Followed::Grew { name, format, id: main_id, added, new_parts: unfollowed, went_on_in: went_on_fork, landed })
    })();
    if !fold {
        return result;
    }
    match result {
        Ok(Followed::Grew { name, format, id, added, new_parts, went_on_in, .. }) => {
            let title = main_title.unwrap_or_else(|| name.clone());
            let subject = subject::follow_subagents(&title, format.name(), added + new_parts);
            let committed = store.commit_batch(lock, own, &subject, clock)?;
            Ok(Followed::Grew { name, format, id, added, new_parts, went_on_in, landed: vec![committed.landed] })
        }
        Ok(other) => Ok(other),
        Err(e) => {
            store.discard_batch(&own);
            Err(e)
        }
    }
}

/// A session file imported before with plain `import` is taken over, not imported twice:
/// its conversations carry the file's name and the git blob id of its bytes then, but no
/// session key. Unchanged since, they get the key, how far the file was read and how many
/// events each part took from it (in one commit, or the batch), and it is followed from
/// there. Changed since, which lines are new cannot be told: refused, nothing written.
/// `None`: no conversation came from a file of that name.
fn adopt_whole_import(
    store: &Store,
    lock: &Lock,
    path: &Path,
    whole: u64,
    session: &str,
    clock: &Clock,
    commits: &mut Commits<'_>,
) -> Result<Option<Followed>> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut imported: Vec<(usize, String, crate::store::Meta, String)> = Vec::new();
    for id in store.conversation_ids()? {
        let meta = store.meta(&id)?;
        let Some(source) = meta.extra.get("source") else { continue };
        if source.get("file").and_then(Value::as_str) != Some(name.as_str()) || source.get("session").is_some() {
            continue;
        }
        let part = source.get("part").and_then(Value::as_u64).unwrap_or(0) as usize;
        let sha1 = source.get("sha1").and_then(Value::as_str).unwrap_or_default().to_owned();
        imported.push((part, id, meta, sha1));
    }
    let Some(first) = imported.iter().find(|(part, ..)| *part == 0).or(imported.first()) else {
        return Ok(None);
    };
    let refused = FollowFailure::ImportedWhole { name: name.clone(), id: first.1.clone() };
    let size = std::fs::metadata(path).map_err(|source| ImportFailure::File { path: path.to_owned(), source })?.len();
    let blob = blob_sha1(path, size)?;
    imported.retain(|(.., sha1)| *sha1 == blob);
    let format = imported
        .iter()
        .find_map(|(_, _, meta, _)| meta.extra.get("source")?.get("format")?.as_str().and_then(Format::parse));
    let (Some(format), true) = (format, size == whole) else {
        return Err(follow_refused(refused));
    };
    if !interop::streams(format) {
        return Err(follow_refused(FollowFailure::NotLines { name, format: format.name() }));
    }
    // How many events the file gives each part: what a follow skips before appending.
    let roots = sidechain_roots(path, whole, format, &name)?;
    let mut ignore = |_| {};
    let mut lines = FileLines::open_upto(path, whole, false, &mut ignore)?;
    let mut counts = Counts::default();
    let checkpoint = interop::stream(format, &mut lines, &roots, clock, &mut counts)
        .map_err(|source| ImportFailure::Refused { name: name.clone(), source: source.into() })?
        .checkpoint;
    let marks = prefix_marks(path, whole)?;
    let mut main = None;
    imported.sort_by_key(|(part, ..)| *part);
    for (part, id, mut meta, _) in imported {
        if let Some(Value::Object(source)) = meta.extra.get_mut("source") {
            source.insert("session".into(), json!(session));
            source.insert("drafts".into(), json!(counts.0.get(part).copied().unwrap_or(0)));
            if part == 0 {
                note_read(source, whole, &marks, checkpoint.as_ref());
            }
        }
        if part == 0 {
            main = Some(id.clone());
        }
        let title = meta.title.clone().unwrap_or_else(|| name.clone());
        let appending = store.begin_append(lock, &id, clock)?;
        match commits {
            Commits::Into(batch) => store.batch_append(batch, appending, Some(meta)),
            Commits::Now => {
                let subject = subject::follow(&title, format.name(), 0);
                store.finish_append_with(lock, appending, Some(meta), Some(subject), clock)?;
            }
        }
    }
    let Some(id) = main else { return Err(follow_refused(refused)) };
    Ok(Some(Followed::TakenOver { name, id }))
}

/// How many drafts a stream gives each conversation.
#[derive(Default)]
struct Counts(Vec<u64>);

impl interop::Emit for Counts {
    fn drafts(&mut self, conversation: usize, drafts: Vec<Draft>) -> std::result::Result<(), StoreError> {
        if self.0.len() <= conversation {
            self.0.resize(conversation + 1, 0);
        }
        self.0[conversation] += drafts.len() as u64;
        Ok(())
    }
}

/// The git blob id of the file's first `size` bytes: the fingerprint a whole import keeps.
fn blob_sha1(path: &Path, size: u64) -> Result<String> {
    let mut ignore = |_| {};
    let mut lines = FileLines::open_upto(path, size, true, &mut ignore)?;
    for line in lines.by_ref() {
        // Only the bytes matter here, valid or not.
        let _ = line;
    }
    Ok(lines.hasher.take().and_then(|h| h.try_finalize().ok()).map(|id| id.to_string()).unwrap_or_default())
}

/// What the streaming importer's first pass finds in the file's first `whole` bytes
/// ([`interop::first_pass`]: a Claude Code session's subagent roots, a Gemini CLI session's
/// forks).
fn sidechain_roots(path: &Path, whole: u64, format: Format, name: &str) -> Result<HashMap<String, String>> {
    sidechain_roots_in(path, 0, whole, format, name)
}

/// [`sidechain_roots`] of the file's bytes `from..to`.
fn sidechain_roots_in(path: &Path, from: u64, to: u64, format: Format, name: &str) -> Result<HashMap<String, String>> {
    if !matches!(format, Format::ClaudeCode | Format::GeminiCli) {
        return Ok(Default::default());
    }
    let mut ignore = |_| {};
    let mut lines = FileLines::open_range(path, from, to, &mut ignore)?;
    let roots = interop::first_pass(format, &mut lines);
    match roots {
        Ok(roots) => Ok(roots),
        // Read from `from` on: its lines are counted from there, the file's from its start.
        Err(e) if from > 0 => Err(ImportFailure::Refused {
            name: name.to_owned(),
            source: e.after_lines(lines_before(path, from)?).into(),
        }),
        Err(e) => Err(ImportFailure::Refused { name: name.to_owned(), source: e.into() }),
    }
}

fn appending_len(a: &crate::store::Appending) -> u64 {
    if a.is_empty() { 0 } else { a.len() as u64 }
}

fn follow_refused(why: FollowFailure) -> ImportFailure {
    ImportFailure::Follow(why)
}

/// The first import of a followed session: whole lines only, and where it stopped.
#[allow(clippy::too_many_arguments)]
fn start_following(
    store: &Store,
    lock: &Lock,
    path: &Path,
    whole: u64,
    session: &str,
    format: Option<Format>,
    options: &Options<'_>,
    clock: &Clock,
    commits: &mut Commits<'_>,
) -> Result<Done> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut head = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(whole.min(64 * 1024)).read_to_end(&mut head))
        .map_err(|source| ImportFailure::File { path: path.to_owned(), source })?;
    if whole == 0 {
        return Err(follow_refused(FollowFailure::Empty { name }));
    }
    let format = match format.or_else(|| detect_lines(&String::from_utf8_lossy(&head), false)) {
        Some(f) if interop::streams(f) => f,
        Some(f) => return Err(follow_refused(FollowFailure::NotLines { name, format: f.name() })),
        None => return Err(follow_refused(FollowFailure::NotLines { name, format: "an unknown format" })),
    };
    let roots = sidechain_roots(path, whole, format, &name)?;
    let marks = prefix_marks(path, whole)?;
    let mut ignore = |_| {};
    let mut lines = FileLines::open_upto(path, whole, false, &mut ignore)?;
    let mut emit = StoreEmit { store, clock, staged: Vec::new() };
    let outcome = match interop::stream(format, &mut lines, &roots, clock, &mut emit) {
        Ok(outcome) => outcome,
        Err(source) => {
            store.discard(emit.staged.iter().flatten().collect::<Vec<&Staged>>());
            return Err(ImportFailure::Refused { name, source: source.into() });
        }
    };
    if format == Format::GeminiCli && emit.staged.iter().flatten().all(|s| s.stats.events == 0) {
        store.discard(emit.staged.iter().flatten().collect::<Vec<&Staged>>());
        return Err(follow_refused(FollowFailure::NoMessages { name }));
    }
    let main_title = main_title(options, outcome.conversations.first().and_then(|c| c.0.as_deref()));
    let project = project_value(&outcome.place);
    if emit.staged.is_empty() {
        emit.staged.push(None);
    }
    let mut staged = Vec::new();
    let ids = staged_ids(&emit.staged);
    let batch = match commits {
        Commits::Into(batch) => Some(&**batch),
        Commits::Now => None,
    };
    let spawned_by = match subagent_files::ParentFile::of(path, format, &head) {
        Some(parent) => parent.conversation(store, batch, format).inspect_err(|_| {
            store.discard(emit.staged.iter().flatten().collect::<Vec<&Staged>>());
        })?,
        None => None,
    };
    for (i, slot) in emit.staged.into_iter().enumerate() {
        let Some(mut s) = slot.or_else(|| (i == 0).then(|| store.stage(clock))) else { continue };
        let (title, parent) = outcome.conversations.get(i).cloned().unwrap_or_default();
        s.title = part_title(main_title.as_deref(), i, title.as_deref());
        s.parent = parent;
        forked(&mut s, &outcome, i, main_title.as_deref(), &ids);
        if let (0, Some(parent)) = (i, &spawned_by) {
            s.extra.insert("subagent_of".into(), json!(parent));
        }
        if let Some(project) = &project {
            s.extra.insert(crate::store::Project::KEY.into(), project.clone());
        }
        let mut src = source(format, &name, "", i);
        src["session"] = json!(session);
        src["drafts"] = json!(s.stats.events);
        if i == 0
            && let Value::Object(record) = &mut src
        {
            note_read(record, whole, &marks, outcome.checkpoint.as_ref());
            if let Some(tip) = &s.last_said {
                record.insert(TIP.into(), json!(tip));
            }
        }
        s.extra.insert("source".into(), src);
        staged.push(s);
    }
    let events: Vec<u64> = staged.iter().map(|s| s.stats.events).collect();
    let subject = subject::import(main_title.as_deref().unwrap_or(&name), format.name(), events[0], &events[1..]);
    let (conversations, landed) = match commits {
        Commits::Into(batch) => {
            let conversations = staged.iter().map(|s| (s.id.clone(), s.stats)).collect();
            store.batch_make(batch, staged);
            (conversations, Landed::default())
        }
        Commits::Now => {
            let created = store.commit_staged(lock, staged, &subject, clock)?;
            store.set_active(&created.conversations[0].0)?;
            (created.conversations, created.landed)
        }
    };
    Ok(Done { name, format, report: outcome.report, conversations, landed, bad_lines: Vec::new() })
}

pub use crate::store::sessions::{At, RESUMES, TIP, WENT_ON_IN, left};

/// The events of conversation `id` up to where the session of `recorded` left its line,
/// when the line has gone on past that point since (another session, a teammate's turns
/// pulled in, `convo append`): a capture that appended there would interleave two lines.
/// Also when the folder import under way appends to the conversation already (two sessions
/// continuing one point in one sweep). `None`: the session carries on from the line's end
/// (or its record, from before tips were kept, cannot say).
pub(crate) fn diverged(store: &Store, id: &str, recorded: &Value, batch: Option<&Batch>) -> Result<Option<Vec<Event>>> {
    let in_batch = batch.is_some_and(|b| b.appends_to(id));
    let recorded_tip = recorded.get(TIP).and_then(Value::as_str);
    let tip = match (recorded_tip, in_batch) {
        (Some(tip), true) => Some(tip.to_owned()),
        (Some(tip), false) if store.last_said(id)?.as_deref() != Some(tip) => Some(tip.to_owned()),
        (None, true) => store.last_said(id)?,
        _ => return Ok(None),
    };
    let mut events = store.events(id)?;
    match tip {
        Some(tip) => match events.iter().position(|e| e.id == tip) {
            Some(at) => events.truncate(at + 1),
            // Not an event of this line (a record edited by hand): appended as before.
            None if !in_batch => return Ok(None),
            None => events.clear(),
        },
        None => events.clear(),
    }
    Ok(Some(events))
}

/// The key, in the `meta.json` of a fork a session went on in, of the event it went on
/// from (the last said of the line it holds from the conversation it forked).
pub const FORKED_AT: &str = "forked_at";

/// The id of the last event of `events` that is said.
pub(crate) fn last_said(events: &[Event]) -> Option<String> {
    events.iter().rev().find(|e| e.kind.is_said()).map(|e| e.id.clone())
}

/// A new conversation holding `kept`, ids and all, for a session to go on in.
pub(crate) fn fork_of(store: &Store, kept: &[Event], clock: &Clock) -> std::result::Result<Staged, StoreError> {
    let mut fork = store.stage(clock);
    let drafts = kept
        .iter()
        .enumerate()
        .map(|(i, e)| Draft {
            id: Some(e.id.clone()),
            ts: Some(e.ts.clone()),
            kind: e.kind.clone(),
            extra: e.extra.clone(),
            line: i + 1,
        })
        .collect();
    if let Err(e) = store.stage_copies(&mut fork, drafts, clock) {
        store.discard([&fork]);
        return Err(e);
    }
    Ok(fork)
}

/// Commit the fork a session went on in (with its record, as `meta` has it now, and the
/// conversation's project), and mark the record it left in the conversation (`from`), in
/// one commit or in the folder's batch.
#[allow(clippy::too_many_arguments)]
pub(crate) fn went_on_in(
    store: &Store,
    lock: &Lock,
    commits: &mut Commits<'_>,
    (mut fork, new_events, base): (Staged, u64, Option<&str>),
    (id, before, at): (&str, &crate::store::Meta, At),
    meta: crate::store::Meta,
    format: Format,
    clock: &Clock,
) -> Result<WentOn> {
    let agent = crate::agents::by_format(format);
    let title = meta.title.clone().unwrap_or_else(|| id.to_owned());
    fork.title = Some(format!("{title} (went on in {})", agent.map_or(format.name(), |a| a.name())));
    fork.forked_from = Some(crate::store::ForkedFrom { id: id.to_owned(), turn: 0 });
    // The event the session went on from: the last of the line it holds from `id`.
    if let Some(base) = base {
        fork.extra.insert(FORKED_AT.into(), json!(base));
    }
    for key in [crate::store::Project::KEY, "subagent_of"] {
        if let Some(value) = meta.extra.get(key) {
            fork.extra.insert(key.into(), value.clone());
        }
    }
    if let Some(record) = at.get(&meta) {
        match at {
            At::Source => fork.extra.insert("source".into(), record.clone()),
            At::Resume(_) => fork.extra.insert(RESUMES.into(), json!([record])),
        };
    }
    let fork_id = fork.id.clone();
    let fork_meta = crate::store::Meta {
        title: fork.title.clone(),
        created: clock.timestamp(),
        forked_from: fork.forked_from.clone(),
        extra: fork.extra.clone(),
    };
    let fork_at = match at {
        At::Source => At::Source,
        At::Resume(_) => At::Resume(0),
    };
    // By the session, not by where the record was read: the folder import's own meta of
    // the conversation may hold other sessions' records where this one's was.
    let session = at.get(before).and_then(|r| r.get("session")).and_then(Value::as_str).map(str::to_owned);
    let mark = |meta: &mut crate::store::Meta| {
        if let Some(session) = &session {
            crate::store::sessions::mark_left(meta, std::slice::from_ref(session), &fork_id);
        }
    };
    let mut left = before.clone();
    mark(&mut left);
    let subject = subject::went_on(
        fork.title.as_deref().unwrap_or_default(),
        format.name(),
        &subject::name(id, before.title.as_deref()),
        new_events,
    );
    match commits {
        Commits::Into(batch) => {
            match batch.append_meta_mut(id) {
                Some(meta) => mark(meta),
                None => {
                    let appending = store.begin_append(lock, id, clock)?;
                    store.batch_append(batch, appending, Some(left));
                }
            }
            store.batch_make(batch, vec![fork]);
            Ok(WentOn { id: fork_id, meta: fork_meta, at: fork_at, landed: None })
        }
        Commits::Now => {
            let mut batch = Batch::default();
            let appending = store.begin_append(lock, id, clock)?;
            store.batch_append(&mut batch, appending, Some(left));
            store.batch_make(&mut batch, vec![fork]);
            let committed = store.commit_batch(lock, batch, &subject, clock)?;
            Ok(WentOn { id: fork_id, meta: fork_meta, at: fork_at, landed: Some(committed.landed) })
        }
    }
}

/// The fork a session went on in ([`went_on_in`]): its id, its `meta.json` and where the
/// session's record is in it, and the commit's report when it was committed at once.
pub(crate) struct WentOn {
    pub id: String,
    pub meta: crate::store::Meta,
    pub at: At,
    pub landed: Option<Landed>,
}

/// The conversations holding session `session`, by part (0: the main one), and where the
/// main one keeps the session's record.
type Parts = HashMap<usize, (String, crate::store::Meta, At)>;

fn session_parts(store: &Store, session: &str) -> Result<Parts> {
    let mut parts = Parts::new();
    for id in store.conversation_ids()? {
        let meta = store.meta(&id)?;
        // A record the session left for a fork is the fork's to follow.
        let is_session =
            |r: &Value| r.get("session").and_then(Value::as_str) == Some(session) && !store.left_for_a_fork(&id, r);
        if let Some(source) = meta.extra.get("source").filter(|r| is_session(r))
            && let Some(part) = source.get("part").and_then(Value::as_u64)
        {
            parts.insert(part as usize, (id, meta, At::Source));
            continue;
        }
        let resumed = meta.extra.get(RESUMES).and_then(Value::as_array).and_then(|rs| rs.iter().position(is_session));
        if let Some(i) = resumed {
            parts.insert(0, (id, meta, At::Resume(i)));
        }
    }
    // A hand-over not captured yet: its record joins the conversation with this capture.
    if !parts.contains_key(&0)
        && let Some(handed) = store.handover_of(session)?
    {
        parts.insert(0, handed);
    }
    Ok(parts)
}

/// The record a followed file starts from when convo wrote it (`convo resume`): its bytes
/// are taken as read, the `drafts` events convo's importer makes of them as imported, and
/// the importer's state after them is `checkpoint` (the conversation's own turns and
/// events, which a compaction the agent makes later covers), so a follow appends only what
/// the agent adds.
/// `head` and `tail` are the file's first and last [`MARK_WINDOW`] bytes (all of them, both,
/// when it is shorter).
pub fn written_record(
    format: Format,
    (name, session): (&str, &str),
    (consumed, head, tail): (u64, &[u8], &[u8]),
    drafts: u64,
    checkpoint: &interop::Checkpoint,
) -> Value {
    let mut record = source(format, name, "", 0);
    record["session"] = json!(session);
    record["drafts"] = json!(drafts);
    if let Value::Object(r) = &mut record {
        note_read(r, consumed, &(sha1_hex(head), sha1_hex(tail)), Some(checkpoint));
    }
    record
}

/// How many lines the file's first `n` bytes hold (`n` at the start of a line).
fn lines_before(path: &Path, n: u64) -> Result<usize> {
    let file_err = |source| ImportFailure::File { path: path.to_owned(), source };
    let mut reader = BufReader::new(std::fs::File::open(path).map_err(file_err)?.take(n));
    let mut count = 0;
    loop {
        let buf = reader.fill_buf().map_err(file_err)?;
        if buf.is_empty() {
            return Ok(count);
        }
        count += buf.iter().filter(|b| **b == b'\n').count();
        let len = buf.len();
        reader.consume(len);
    }
}

/// How many leading bytes of the file are whole lines (up to and including the last newline).
fn whole_lines(path: &Path) -> Result<u64> {
    use std::io::{Seek, SeekFrom};
    let file_err = |source| ImportFailure::File { path: path.to_owned(), source };
    let mut file = std::fs::File::open(path).map_err(file_err)?;
    let mut end = file.metadata().map_err(file_err)?.len();
    let mut chunk = vec![0u8; 64 * 1024];
    while end > 0 {
        let start = end.saturating_sub(chunk.len() as u64);
        file.seek(SeekFrom::Start(start)).map_err(file_err)?;
        let piece = &mut chunk[..(end - start) as usize];
        file.read_exact(piece).map_err(file_err)?;
        if let Some(i) = memchr::memrchr(b'\n', piece) {
            return Ok(start + i as u64 + 1);
        }
        end = start;
    }
    Ok(0)
}

/// How much of the start and the end of the bytes read a followed file's record hashes.
pub const MARK_WINDOW: u64 = 64 * 1024;

/// The SHA-1s of the first and the last [`MARK_WINDOW`] bytes of the file's first `n`:
/// what tells, without reading them all again, that bytes read before are still there. An
/// agent appends to its session or writes a new one; a file rewritten from its start, or
/// cut and grown again, changes one of the two.
fn prefix_marks(path: &Path, n: u64) -> Result<(String, String)> {
    let head = range_sha1(path, 0, n.min(MARK_WINDOW))?;
    let tail = range_sha1(path, n.saturating_sub(MARK_WINDOW), n)?;
    Ok((head, tail))
}

fn sha1_hex(bytes: &[u8]) -> String {
    let mut hasher = gix::hash::hasher(gix::hash::Kind::Sha1);
    hasher.update(bytes);
    hasher.try_finalize().map(|id| id.to_string()).unwrap_or_default()
}

/// Whether the first `consumed` bytes are those a follow read before: by the marks its
/// record keeps, or by the SHA-1 of them all in a record from before marks.
fn prefix_unchanged(path: &Path, consumed: u64, recorded: &Value) -> Result<bool> {
    let text = |key| recorded.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
    if recorded.get("consumed_head").is_some() {
        return Ok(prefix_marks(path, consumed)? == (text("consumed_head"), text("consumed_tail")));
    }
    Ok(prefix_sha1(path, consumed)? == text("consumed_sha1"))
}

/// Record in a followed file's `record` that its first `whole` bytes are read, how to know
/// them again, and where the importer stood.
fn note_read(
    record: &mut Map<String, Value>,
    whole: u64,
    (head, tail): &(String, String),
    checkpoint: Option<&interop::Checkpoint>,
) {
    record.insert("consumed".into(), json!(whole));
    record.remove("consumed_sha1");
    record.insert("consumed_head".into(), json!(head));
    record.insert("consumed_tail".into(), json!(tail));
    match checkpoint.and_then(|c| serde_json::to_value(c).ok()) {
        Some(c) => record.insert("checkpoint".into(), c),
        None => record.remove("checkpoint"),
    };
}

/// The SHA-1 (hex) of the file's bytes `from..to`.
fn range_sha1(path: &Path, from: u64, to: u64) -> Result<String> {
    use std::io::{Seek, SeekFrom};
    let file_err = |source| ImportFailure::File { path: path.to_owned(), source };
    let mut file = std::fs::File::open(path).map_err(file_err)?;
    file.seek(SeekFrom::Start(from)).map_err(file_err)?;
    let mut buf = Vec::with_capacity((to - from) as usize);
    file.take(to - from).read_to_end(&mut buf).map_err(file_err)?;
    if (buf.len() as u64) < to - from {
        return Ok(String::new());
    }
    let mut hasher = gix::hash::hasher(gix::hash::Kind::Sha1);
    hasher.update(&buf);
    Ok(hasher.try_finalize().map(|id| id.to_string()).unwrap_or_default())
}

/// The SHA-1 (hex) of the first `n` bytes of the file.
fn prefix_sha1(path: &Path, n: u64) -> Result<String> {
    let file_err = |source| ImportFailure::File { path: path.to_owned(), source };
    let file = std::fs::File::open(path).map_err(file_err)?;
    let mut reader = BufReader::with_capacity(1 << 20, file.take(n));
    let mut hasher = gix::hash::hasher(gix::hash::Kind::Sha1);
    let mut read = 0u64;
    loop {
        let buf = reader.fill_buf().map_err(file_err)?;
        if buf.is_empty() {
            break;
        }
        hasher.update(buf);
        let len = buf.len();
        read += len as u64;
        reader.consume(len);
    }
    if read < n {
        return Ok(String::new());
    }
    Ok(hasher.try_finalize().map(|id| id.to_string()).unwrap_or_default())
}

/// One conversation of a followed session: what it holds, and what this import adds.
struct FollowedPart {
    id: String,
    meta: crate::store::Meta,
    /// Where its record of the file is.
    at: At,
    /// Events imported into it from the file before, to skip (a whole read).
    already: u64,
    /// Events imported into it before, to count on from (a read from a checkpoint).
    base: u64,
    /// Events the importer has made for it so far in this pass.
    seen: u64,
    appending: Option<crate::store::Appending>,
    /// The fork the session goes on in, when it does not carry on from the end of the
    /// conversation's line ([`diverged`]): it holds the line up to where the session left it.
    fork: Option<Staged>,
}

/// Skips, per conversation, the events imported before, and appends the rest; stages the
/// conversations of parts that are new.
struct FollowEmit<'a> {
    store: &'a Store,
    lock: &'a crate::store::Lock<'a>,
    clock: &'a Clock,
    parts: HashMap<usize, FollowedPart>,
    fresh: HashMap<usize, Staged>,
}

impl interop::Emit for FollowEmit<'_> {
    fn drafts(&mut self, conversation: usize, drafts: Vec<Draft>) -> std::result::Result<(), StoreError> {
        let Some(part) = self.parts.get_mut(&conversation) else {
            let staged = self.fresh.entry(conversation).or_insert_with(|| self.store.stage(self.clock));
            return self.store.stage_drafts(staged, drafts, self.clock);
        };
        let skip = part.already.saturating_sub(part.seen).min(drafts.len() as u64) as usize;
        part.seen += drafts.len() as u64;
        let new: Vec<Draft> = drafts.into_iter().skip(skip).collect();
        if new.is_empty() {
            return Ok(());
        }
        if let Some(fork) = part.fork.as_mut() {
            return self.store.stage_drafts(fork, new, self.clock);
        }
        if part.appending.is_none() {
            let mut appending = self.store.begin_append(self.lock, &part.id, self.clock)?;
            appending.renaming_taken();
            part.appending = Some(appending);
        }
        let appending = part.appending.as_mut().expect("begun above");
        self.store.append_more(appending, new, self.clock)
    }
}

/// The session files under `dir`, at any depth (Claude Code's `projects/<project>/`,
/// Codex's `sessions/YYYY/MM/DD/`): every `.jsonl` file, in path order. Symlinks are not
/// followed, so a link cannot lead the walk out of the folder or round in a circle.
pub fn session_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut folders = vec![dir.to_owned()];
    while let Some(folder) = folders.pop() {
        let entries =
            std::fs::read_dir(&folder).map_err(|source| ImportFailure::File { path: folder.clone(), source })?;
        for entry in entries {
            let entry = entry.map_err(|source| ImportFailure::File { path: folder.clone(), source })?;
            let kind = entry.file_type().map_err(|source| ImportFailure::File { path: entry.path(), source })?;
            let path = entry.path();
            if kind.is_dir() {
                folders.push(path);
            } else if kind.is_file() && path.extension().is_some_and(|e| e == "jsonl") {
                out.push(path);
            }
        }
    }
    // Shallowest first, so that a session's file comes before its subagents' files (Claude
    // Code's `<session>/subagents/`, Gemini CLI's `chats/<session>/`), which link to it.
    out.sort_by(|a, b| a.components().count().cmp(&b.components().count()).then_with(|| a.cmp(b)));
    Ok(out)
}
