use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use convo::interop::{self, Format};
use convo::store::{NewConversation, Staged};
use serde_json::{Map, Value, json};

use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// Import a session from another tool as a new conversation
///
/// Formats: claude-code (session JSONL), codex (rollout JSONL), openai (a Chat Completions
/// body, a `messages` array, or a SWE-agent trajectory), anthropic (a Messages body or
/// array), openhands (an event array), jsonl (convo's own export). Detected when --format
/// is not given. Source ids and timestamps are kept; compactions the tool made become convo
/// compactions; a Claude Code subagent's work becomes its own conversation, linked to its
/// parent. A report of what was taken and skipped goes to stderr; the new id to stdout.
#[derive(clap::Args)]
pub struct Args {
    /// The file to import, or `-` for stdin
    file: String,
    /// The format [default: detected]
    #[arg(long, short, value_name = "FORMAT", value_parser = ["claude-code", "codex", "openai", "anthropic", "openhands", "jsonl"])]
    format: Option<String>,
    /// Title of the new conversation [default: from the session, else the file name]
    #[arg(long, short)]
    title: Option<String>,
    /// Import a file again although a conversation already holds it
    #[arg(long)]
    again: bool,
}

/// Puts what a streaming importer emits straight into staged conversations.
struct StoreEmit<'a> {
    store: &'a convo::store::Store,
    clock: &'a convo::clock::Clock,
    staged: Vec<Option<Staged>>,
}

impl interop::Emit for StoreEmit<'_> {
    fn drafts(
        &mut self,
        conversation: usize,
        drafts: Vec<convo::event::Draft>,
    ) -> Result<(), convo::store::StoreError> {
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

/// A file's lines, hashed (as git hashes a blob) and counted on the progress bar as read.
struct FileLines {
    /// Bounded to the size at open: a live session still being written is imported as it
    /// was then, the same bytes in both passes and in the fingerprint.
    reader: BufReader<std::io::Take<std::fs::File>>,
    hasher: Option<gix::hash::Hasher>,
    bar: Option<indicatif::ProgressBar>,
    line: usize,
}

impl FileLines {
    fn open(path: &Path, hash: bool, bar: Option<indicatif::ProgressBar>) -> Result<FileLines, CommandError> {
        let file = std::fs::File::open(path).map_err(|e| CommandError::input(format!("{}: {e}", path.display())))?;
        let size = file.metadata().map_err(|e| CommandError::input(format!("{}: {e}", path.display())))?.len();
        let hasher = hash.then(|| {
            let mut h = gix::hash::hasher(gix::hash::Kind::Sha1);
            h.update(format!("blob {size}\0").as_bytes());
            h
        });
        Ok(FileLines { reader: BufReader::with_capacity(1 << 20, file.take(size)), hasher, bar, line: 0 })
    }
}

impl Iterator for FileLines {
    type Item = Result<String, interop::ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut buf = Vec::new();
        match self.reader.read_until(b'\n', &mut buf) {
            Ok(0) => None,
            Ok(n) => {
                self.line += 1;
                if let Some(h) = &mut self.hasher {
                    h.update(&buf);
                }
                if let Some(bar) = &self.bar {
                    bar.inc(n as u64);
                }
                while matches!(buf.last(), Some(b'\n' | b'\r')) {
                    buf.pop();
                }
                Some(String::from_utf8(buf).map_err(|_| interop::ReadError::NotUtf8 { line: self.line }))
            }
            Err(e) => Some(Err(e.into())),
        }
    }
}

/// The line-based format `head` (the start of the file) is in, if it is one.
fn detect_lines(head: &str) -> Option<Format> {
    // Only whole lines: the last one may be cut.
    let whole = match head.rfind('\n') {
        Some(end) => &head[..end],
        None => head,
    };
    let scratch = convo::clock::Clock::fixed(chrono::DateTime::UNIX_EPOCH);
    Format::ALL.into_iter().filter(|f| interop::streams(*f)).find(|f| {
        let mut sink: Vec<Vec<convo::event::Draft>> = Vec::new();
        let mut lines = whole.lines().map(|l| Ok(l.to_owned()));
        interop::stream(*f, &mut lines, &Default::default(), &scratch, &mut sink).is_ok()
    })
}

/// Import a line-based file without holding it in memory: two passes for Claude Code (the
/// subagent map), events staged into segments as they are read, one commit at the end.
fn streamed(ctx: &Ctx, args: &Args, path: &Path, name: &str, format: Format) -> Result<(), CommandError> {
    // Before the store is opened (and, on a fresh machine, created): a file that fails here
    // leaves no trace at all.
    let roots = if format == Format::ClaudeCode {
        let mut lines = FileLines::open(path, false, None)?;
        interop::claude_code::sidechain_roots(&mut lines).map_err(|e| CommandError::import(name, e))?
    } else {
        Default::default()
    };
    let store = ctx.open_store_for_write()?;
    // Held for the whole import: the objects it writes are only known to be its own (and so
    // safe to remove if it fails) while no other writer can be writing the same ones.
    let lock = store.lock()?;
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let bar = crate::cli::ui::progress_bar(ctx.ui.quiet, size, format!("importing {name}"));
    let mut lines = FileLines::open(path, true, bar.clone())?;
    let mut emit = StoreEmit { store: &store, clock: &ctx.clock, staged: Vec::new() };
    let outcome = interop::stream(format, &mut lines, &roots, &ctx.clock, &mut emit);
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let discard = |emit: &StoreEmit| {
        let staged: Vec<&Staged> = emit.staged.iter().flatten().collect();
        store.discard(staged);
    };
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(e) => {
            discard(&emit);
            return Err(CommandError::import(name, e));
        }
    };
    let fingerprint =
        lines.hasher.take().and_then(|h| h.try_finalize().ok()).map(|id| id.to_string()).unwrap_or_default();
    check_duplicate(&store, name, &fingerprint, args.again).inspect_err(|_| discard(&emit))?;
    let main_title =
        args.title.clone().or_else(|| outcome.conversations[0].0.clone()).unwrap_or_else(|| name.to_owned());
    let mut staged = Vec::new();
    // A file with no events still makes its (empty) conversation, titled and fingerprinted.
    if emit.staged.is_empty() {
        emit.staged.push(None);
    }
    for (i, slot) in emit.staged.into_iter().enumerate() {
        let Some(mut s) = slot.or_else(|| (i == 0).then(|| store.stage(&ctx.clock))) else { continue };
        let (title, parent) = outcome.conversations.get(i).cloned().unwrap_or_default();
        s.title =
            Some(if i == 0 { main_title.clone() } else { format!("{main_title}: {}", title.unwrap_or_default()) });
        s.parent = parent;
        s.extra.insert("source".into(), json!({"format": format.name(), "file": name, "sha1": fingerprint, "part": i}));
        staged.push(s);
    }
    let events: u64 = staged.iter().map(|s| s.stats.events).sum();
    let subject = format!("import: \"{main_title}\" from {} (+{events} events)", format.name());
    let created = store.commit_staged(&lock, staged, &subject, &ctx.clock)?;
    store.set_active(&created.conversations[0].0)?;
    drop(lock);
    report(ctx, name, format, &outcome.report, &created.conversations)?;
    ctx.report_commit(created.gc, created.warning.as_deref());
    Ok(())
}

fn check_duplicate(
    store: &convo::store::Store,
    name: &str,
    fingerprint: &str,
    again: bool,
) -> Result<(), CommandError> {
    if again {
        return Ok(());
    }
    for id in store.conversation_ids()? {
        let meta = store.meta(&id)?;
        if meta.extra.get("source").and_then(|s| s.get("sha1")).and_then(Value::as_str) == Some(fingerprint) {
            let title = meta.title.map(|t| format!(" \"{t}\"")).unwrap_or_default();
            return Err(CommandError::input(format!("{name} is already imported, as {id}{title}"))
                .hint("--again makes another copy"));
        }
    }
    Ok(())
}

fn report(
    ctx: &Ctx,
    name: &str,
    format: Format,
    r: &interop::Report,
    created: &[(String, convo::event::Stats)],
) -> Result<(), CommandError> {
    writeln!(std::io::stdout(), "{}", created[0].0)?;
    if ctx.ui.quiet {
        return Ok(());
    }
    let mut err = std::io::stderr().lock();
    let counts: Vec<String> = r.events.iter().map(|(k, v)| format!("{v} {k}")).collect();
    writeln!(err, "Imported {name} as {} ({}): {} records read", format.name(), created[0].0, r.records)?;
    writeln!(err, "  events: {}", counts.join(", "))?;
    writeln!(err, "  turns: {}", created.iter().map(|(_, s)| s.turns).sum::<u64>())?;
    if r.compactions > 0 {
        writeln!(err, "  compactions from the source: {}", r.compactions)?;
    }
    for (id, _) in &created[1..] {
        writeln!(err, "  subagent conversation: {id}")?;
    }
    for (why, n) in &r.skipped {
        writeln!(err, "  skipped {n}: {}", convo::render::escape_line(why))?;
    }
    Ok(())
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    if args.file != "-" {
        let path = PathBuf::from(&args.file);
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let mut head = Vec::new();
        std::fs::File::open(&path)
            .and_then(|f| f.take(64 * 1024).read_to_end(&mut head))
            .map_err(|e| CommandError::input(format!("{}: {e}", path.display())))?;
        let explicit = args.format.as_deref().and_then(Format::parse);
        let text = String::from_utf8_lossy(&head);
        let line_format = match explicit {
            Some(f) => Some(f).filter(|f| interop::streams(*f)),
            None if head.contains(&0) || text.trim().is_empty() => None,
            None => detect_lines(&text),
        };
        if let Some(format) = line_format
            && !head.contains(&0)
            && !text.trim().is_empty()
        {
            return streamed(ctx, &args, &path, &name, format);
        }
    }
    let (bytes, name) = if args.file == "-" {
        let mut bytes = Vec::new();
        std::io::stdin().read_to_end(&mut bytes).map_err(|e| CommandError::input(format!("stdin: {e}")))?;
        (bytes, "stdin".to_owned())
    } else {
        let path = PathBuf::from(&args.file);
        let bytes = std::fs::read(&path).map_err(|e| CommandError::input(format!("{}: {e}", path.display())))?;
        (bytes, path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default())
    };
    let fingerprint = gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, &bytes)
        .map(|id| id.to_string())
        .unwrap_or_default();
    let text = String::from_utf8(bytes)
        .map_err(|_| CommandError::input(format!("{name}: the file is binary, not UTF-8 text")))?;
    let format = args.format.as_deref().and_then(Format::parse);
    let imported = interop::import(&text, format, &ctx.clock).map_err(|e| CommandError::import(&name, e))?;

    let store = ctx.open_store_for_write()?;
    let lock = store.lock()?;
    check_duplicate(&store, &name, &fingerprint, args.again)?;
    let main_title =
        args.title.clone().or_else(|| imported.conversations[0].title.clone()).unwrap_or_else(|| name.clone());
    let mut new = Vec::new();
    for (i, c) in imported.conversations.iter().enumerate() {
        let mut extra = Map::new();
        extra.insert(
            "source".into(),
            json!({"format": imported.format.name(), "file": name, "sha1": fingerprint, "part": i}),
        );
        let title =
            if i == 0 { main_title.clone() } else { format!("{main_title}: {}", c.title.clone().unwrap_or_default()) };
        new.push(NewConversation { title: Some(title), extra, drafts: c.drafts.clone(), parent: c.parent });
    }
    let events: usize = imported.conversations.iter().map(|c| c.drafts.len()).sum();
    let subject = format!("import: \"{main_title}\" from {} (+{events} events)", imported.format.name());
    let created = store.create_many(&lock, new, &subject, &ctx.clock)?;
    store.set_active(&created.conversations[0].0)?;
    drop(lock);
    report(ctx, &name, imported.format, &imported.report, &created.conversations)?;
    ctx.report_commit(created.gc, created.warning.as_deref());
    Ok(())
}
