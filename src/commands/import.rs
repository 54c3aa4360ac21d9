use std::io::{Read, Write};
use std::path::PathBuf;

use convo::interop::{self, Format};
use convo::store::NewConversation;
use serde_json::{Map, Value, json};

use crate::Ctx;
use crate::command_error::CommandError;

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

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
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
    let imported = interop::import(&text, format, &ctx.clock).map_err(|e| {
        CommandError::input(format!("{name}: {e}")).hint("nothing was written; --format names the format")
    })?;

    let store = ctx.open_store_for_write()?;
    let lock = store.lock()?;
    if !args.again {
        for id in store.conversation_ids()? {
            let meta = store.meta(&id)?;
            if meta.extra.get("source").and_then(|s| s.get("sha1")).and_then(Value::as_str)
                == Some(fingerprint.as_str())
            {
                let title = meta.title.map(|t| format!(" \"{t}\"")).unwrap_or_default();
                return Err(CommandError::input(format!("{name} is already imported, as {id}{title}"))
                    .hint("--again makes another copy"));
            }
        }
    }
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
    store.set_active(&created[0].0)?;
    drop(lock);
    writeln!(std::io::stdout(), "{}", created[0].0)?;
    if !ctx.ui.quiet {
        let r = &imported.report;
        let mut err = std::io::stderr().lock();
        let counts: Vec<String> = r.events.iter().map(|(k, v)| format!("{v} {k}")).collect();
        writeln!(err, "Imported {name} as {} ({}): {} records read", imported.format.name(), created[0].0, r.records)?;
        writeln!(err, "  events: {}", counts.join(", "))?;
        writeln!(err, "  turns: {}", created.iter().map(|(_, s)| s.turns).sum::<u64>())?;
        if r.compactions > 0 {
            writeln!(err, "  compactions from the source: {}", r.compactions)?;
        }
        for (id, _) in &created[1..] {
            writeln!(err, "  subagent conversation: {id}")?;
        }
        for (why, n) in &r.skipped {
            writeln!(err, "  skipped {n}: {why}")?;
        }
    }
    Ok(())
}
