use std::io::Write;
use std::path::PathBuf;

use convo::interop::{export, html};
use convo::projection;
use convo::render;

use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ExportFormat {
    /// convo's JSONL; `convo import` reads it back losslessly
    Jsonl,
    /// The OpenAI Chat Completions request body (always the compacted view)
    Openai,
    /// The Anthropic Messages request body (always the compacted view)
    Anthropic,
    /// A readable transcript, tool calls folded into <details>
    Markdown,
    /// One self-contained HTML page: raw and compacted views, toggled in the page
    Html,
}

/// Write a conversation in another format
#[derive(clap::Args)]
pub struct Args {
    /// Conversation id or title, or a unique prefix of either (default: the active one)
    #[arg(add = clap_complete::ArgValueCandidates::new(crate::cli::conversation_candidates))]
    id: Option<String>,
    /// The format to write
    #[arg(long, value_enum)]
    format: ExportFormat,
    /// The compacted view instead of the raw events (html: the page opens on it)
    #[arg(long)]
    compacted: bool,
    /// Write to FILE instead of stdout
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
    /// With --format openai|anthropic: the model named in the body [default: llm.model]
    #[arg(long, short)]
    model: Option<String>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let store = ctx.open_store()?;
    ctx.fetch_if_lazy(&store, args.id.as_deref())?;
    let id = store.resolve_or_active(args.id.as_deref())?;
    if args.format == ExportFormat::Jsonl {
        return jsonl(ctx, &store, &id, args.compacted, args.output.as_deref());
    }
    let events = store.events(&id)?;
    let title = store.meta(&id)?.title.unwrap_or_else(|| id.clone());
    let project = || projection::project(&events);
    let mut bytes = Vec::new();
    match args.format {
        ExportFormat::Jsonl => unreachable!("streamed by jsonl"),
        ExportFormat::Openai | ExportFormat::Anthropic => {
            let view: Vec<_> = project()?.into_iter().map(|p| p.event).collect();
            let config = ctx.config(&store, &events)?;
            let body = convo::ops::query::provider_body(
                &config,
                &view,
                args.format == ExportFormat::Anthropic,
                args.model.as_deref(),
            );
            ctx.warn_if_no_model(&body);
            serde_json::to_writer_pretty(&mut bytes, &body).map_err(std::io::Error::from)?;
            bytes.push(b'\n');
        }
        ExportFormat::Html => {
            let start = if args.compacted { html::Start::Compacted } else { html::Start::Raw };
            html::Page::new(&title, &events)?.write(&mut bytes, start)?;
        }
        ExportFormat::Markdown => {
            let (shown, in_force) = if args.compacted {
                (project()?.into_iter().map(|p| p.event).collect(), Vec::new())
            } else {
                (events.clone(), projection::in_force(&events)?)
            };
            export::markdown(&mut bytes, &title, &shown, &in_force)?;
        }
    }
    match args.output {
        Some(path) => {
            // A transcript is private by default: mode 0600, also over an existing file.
            convo::ops::write_private(&path, &bytes)
                .map_err(|e| CommandError::input(format!("{}: {e}", path.display())))?
        }
        None => ctx.ui.stdout().write_all(&bytes)?,
    }
    Ok(())
}

/// The stored lines as they are (canonical JSONL already), or with `compacted` the view
/// made from them, a segment at a time: memory stays flat whatever the conversation's size.
fn jsonl(
    ctx: &Ctx,
    store: &convo::store::Store,
    id: &str,
    compacted: bool,
    output: Option<&std::path::Path>,
) -> Result<(), CommandError> {
    let outlined = if compacted { Some(store.outlined(id)?) } else { None };
    let items = outlined.as_ref().map(|o| projection::view(&o.outlined)).transpose()?;
    let raw = if compacted { None } else { Some(store.stored_lines(id)?) };
    let write = move |out: &mut dyn Write| -> Result<(), CommandError> {
        match (&outlined, &items, raw) {
            (Some(at), Some(items), _) => {
                let lines = store.outlined_lines(at).map(|s| s.map_err(CommandError::from));
                render::projected_jsonl_stream(out, items, &at.outlined.outlines, lines)
            }
            (_, _, Some(segments)) => {
                for segment in segments {
                    out.write_all(&segment?)?;
                }
                Ok(())
            }
            _ => unreachable!("one of the two is read"),
        }
    };
    match output {
        // Not a plain file (a FIFO, /dev/stdout, a symlink): written through, as it is.
        Some(path) if std::fs::symlink_metadata(path).is_ok_and(|m| !m.is_file()) => {
            let mut file =
                convo::ops::open_private(path).map_err(|e| CommandError::input(format!("{}: {e}", path.display())))?;
            write(&mut file)
        }
        Some(path) => {
            // Beside the target, renamed over it at the end: a segment found damaged half
            // way leaves no half-written export (and an existing file as it was).
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let partial = path.with_file_name(format!(".{name}.convo-{}", std::process::id()));
            let failed = |e: std::io::Error| CommandError::input(format!("{}: {e}", path.display()));
            let written = (|| -> Result<(), CommandError> {
                let mut file = std::io::BufWriter::new(convo::ops::open_private(&partial).map_err(failed)?);
                write(&mut file)?;
                file.flush().map_err(failed)?;
                std::fs::rename(&partial, path).map_err(failed)
            })();
            if written.is_err() {
                let _ = std::fs::remove_file(&partial);
            }
            written
        }
        None => {
            let mut out = ctx.ui.stdout();
            write(&mut out)
        }
    }
}
