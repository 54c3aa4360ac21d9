use std::io::{Read, Write};
use std::path::PathBuf;

use convo::interop::Format;
use convo::ops::import::{self, Input};
use convo::render::plural;

mod folder;
mod opencode;

use crate::cli::Ctx;
use crate::cli::command_error::CommandError;
use crate::cli::ui;

/// Import a session from another tool as a new conversation, or every session in a folder
///
/// Formats: claude-code (session JSONL), codex (rollout JSONL), gemini-cli (chat session
/// JSONL, or the older single JSON document), opencode (its SQLite database,
/// ~/.local/share/opencode/opencode.db: every session in it, each a conversation, read again
/// for what is new), openai (a Chat Completions
/// body, a `messages` array, or a SWE-agent trajectory), anthropic (a Messages body or
/// array), openhands (an event array), jsonl (convo's own export). Detected when --format
/// is not given. Source ids and timestamps are kept; compactions the tool made become convo
/// compactions; a Claude Code subagent's work becomes its own conversation, linked to its
/// parent; what follows a Gemini CLI rewind goes on in a fork. A report of what was taken and skipped goes to stderr; the new id to stdout.
#[derive(clap::Args)]
pub struct Args {
    /// The file to import, `-` for stdin, an opencode database, or a folder: every .jsonl
    /// session under it, each as --follow imports it (new ones whole, imported ones continued)
    file: String,
    /// The format [default: detected]
    #[arg(long, value_name = "FORMAT", value_parser = ["claude-code", "codex", "gemini-cli", "opencode", "openai", "anthropic", "openhands", "jsonl"])]
    format: Option<String>,
    /// Title of the new conversation [default: the session's own, else its first prompt]
    #[arg(long, short)]
    title: Option<String>,
    /// Import a file again although a conversation already holds it
    #[arg(long, conflicts_with = "follow")]
    again: bool,
    /// Import only what the session file gained since its last --follow import (only whole
    /// lines; a file cut short or rewritten is refused)
    #[arg(long)]
    follow: bool,
    /// Pass over the lines that are not JSON (of a line-based session file) instead of
    /// refusing the file; the report names them
    #[arg(long, conflicts_with = "follow")]
    skip_bad_lines: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let input = if args.file == "-" {
        let mut bytes = Vec::new();
        std::io::stdin().read_to_end(&mut bytes).map_err(|e| CommandError::input(format!("stdin: {e}")))?;
        Input::Bytes { name: "stdin".into(), bytes }
    } else {
        Input::File(PathBuf::from(&args.file))
    };
    let format = args.format.as_deref().and_then(Format::parse);
    if let Input::File(path) = &input
        && path.is_dir()
    {
        // opencode's folder holds one database, not session files: `import
        // ~/.local/share/opencode` means its database.
        let database = path.join("opencode.db");
        if format.is_none_or(|f| f == Format::Opencode)
            && convo::ops::opencode::is_database(&database)
            && convo::ops::import::session_files(path)?.is_empty()
        {
            return opencode::run(ctx, &database);
        }
        return folder::run(ctx, path, format);
    }
    if let Input::File(path) = &input
        && (format == Some(Format::Opencode) || (format.is_none() && convo::ops::opencode::is_database(path)))
    {
        if args.title.is_some() || args.again {
            return Err(CommandError::input("an opencode database holds many sessions: --title and --again name one")
                .hint("each session is titled by opencode's title, and imported once; a re-import adds what is new"));
        }
        return opencode::run(ctx, path);
    }
    if args.follow {
        let Input::File(path) = input else {
            return Err(CommandError::input("--follow reads a file, not stdin"));
        };
        let store = ctx.open_store_for_write()?;
        let options = import::Options { title: args.title.as_deref(), again: false };
        return match import::follow(&store, &path, format, &options, &ctx.clock)? {
            import::Followed::Started(done) => {
                report(ctx, &done)?;
                ctx.ui.landed(&done.landed);
                Ok(())
            }
            import::Followed::Grew { name, format, id, added, new_parts, went_on_in, landed } => {
                let events = plural(added, "new event");
                match went_on_in {
                    Some(fork) => {
                        writeln!(ctx.ui.stdout(), "{fork}")?;
                        ctx.ui.status(&format!(
                            "Followed {name} ({}): {events} in {fork}, a fork of {id}: its line had gone on past the session's last turn",
                            format.name()
                        ));
                    }
                    None => {
                        writeln!(ctx.ui.stdout(), "{id}")?;
                        ctx.ui.status(&format!("Followed {name} ({}): {events} in {id}", format.name()));
                    }
                }
                if new_parts > 0 {
                    ctx.ui.status(&format!(
                        "  {} of new subagent work, in conversations of their own",
                        plural(new_parts, "event")
                    ));
                }
                landed.iter().for_each(|l| ctx.ui.landed(l));
                Ok(())
            }
            import::Followed::Unchanged { name, id } => {
                writeln!(ctx.ui.stdout(), "{id}")?;
                ctx.ui.status(&format!("{name}: nothing new since the last import"));
                Ok(())
            }
            import::Followed::TakenOver { name, id } => {
                writeln!(ctx.ui.stdout(), "{id}")?;
                ctx.ui.status(&format!("{name}: imported whole before, as {id}; followed from here"));
                Ok(())
            }
        };
    }
    // Before the store is opened (and, on a fresh machine, created): a file that fails here
    // leaves no trace at all.
    let prepared = import::prepare(input, format, args.skip_bad_lines, &ctx.clock)?;
    let store = ctx.open_store_for_write()?;
    let bar = prepared
        .streamed_size()
        .and_then(|size| ui::progress_bar(ctx.ui.quiet, size, format!("importing {}", prepared.name())));
    let options = import::Options { title: args.title.as_deref(), again: args.again };
    let done = import::import(&store, prepared, &options, &ctx.clock, &mut |n| {
        if let Some(bar) = &bar {
            bar.inc(n);
        }
    });
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let done = done?;
    report(ctx, &done)?;
    ctx.ui.landed(&done.landed);
    Ok(())
}

/// The new id on stdout; what was taken and skipped on stderr.
fn report(ctx: &Ctx, done: &import::Done) -> Result<(), CommandError> {
    let (created, r) = (&done.conversations, &done.report);
    writeln!(ctx.ui.stdout(), "{}", created[0].0)?;
    let counts: Vec<String> = r.events.iter().map(|(k, v)| format!("{v} {k}")).collect();
    let ui = &ctx.ui;
    ui.status(&format!(
        "Imported {} as {} ({}): {} records read",
        done.name,
        done.format.name(),
        created[0].0,
        r.records
    ));
    ui.status(&format!("  events: {}", counts.join(", ")));
    // The main conversation's turns: a subagent's are its own, counted on its line below.
    ui.status(&format!("  turns: {}", created[0].1.turns));
    if r.compactions > 0 {
        ui.status(&format!("  compactions from the source: {}", r.compactions));
    }
    for (id, stats) in &created[1..] {
        ui.status(&format!(
            "  subagent conversation: {id} ({}, {})",
            plural(stats.turns, "turn"),
            plural(stats.events, "event")
        ));
    }
    for (why, n) in &r.skipped {
        ui.status(&format!("  skipped {n}: {why}"));
    }
    if !done.bad_lines.is_empty() {
        let numbers: Vec<String> = done.bad_lines.iter().map(|n| n.to_string()).collect();
        ui.status(&format!(
            "  skipped {} (not JSON): {}",
            plural(done.bad_lines.len() as u64, "line"),
            numbers.join(", ")
        ));
    }
    Ok(())
}
