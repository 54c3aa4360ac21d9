use convo::ops::select::Selection;
use convo::projection;
use convo::render;

mod body;
mod header;
mod part;

use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ShowFormat {
    /// For reading: turn headers, roles, indented content
    Text,
    /// The stored events, one per line; `convo append` reads it back
    Jsonl,
    /// The OpenAI Chat Completions request body for the compacted view
    Openai,
    /// The Anthropic Messages request body for the compacted view
    Anthropic,
}

/// Print a conversation: its raw events, or with --compacted what an LLM is sent
#[derive(clap::Args)]
pub struct Args {
    /// Conversation id or title, or a unique prefix of either (default: the active one)
    #[arg(add = clap_complete::ArgValueCandidates::new(crate::cli::conversation_candidates))]
    id: Option<String>,
    #[arg(long, value_enum, default_value_t = ShowFormat::Text)]
    format: ShowFormat,
    /// Fold each tool call and tool result to one line
    #[arg(long, conflicts_with = "format")]
    brief: bool,
    /// After each turn, the tokens its model calls used, as the agent or provider recorded
    /// them, and the model
    #[arg(long, short, conflicts_with = "format")]
    verbose: bool,
    /// The projected view: compactions applied, stripped and made-up events marked
    #[arg(long)]
    compacted: bool,
    /// With --format openai|anthropic: the model named in the body [default: llm.model]
    #[arg(long, short)]
    model: Option<String>,
    /// Show only turn N (numbered from 0, as the turn headings are)
    #[arg(long, value_name = "N", conflicts_with_all = ["turns", "event"])]
    turn: Option<u64>,
    /// Show only turns A to B, both included (A.. and ..B leave a side open; N alone: turn N)
    #[arg(long, value_name = "A..B", conflicts_with = "event")]
    turns: Option<String>,
    /// Show only these events: each an id, or a prefix or end (`…1a2b3c4d`, as a compacted
    /// view's placeholders name events) no other event's id shares
    #[arg(long, value_name = "ID", num_args = 1..)]
    event: Vec<String>,
}

impl Args {
    /// The part of the conversation asked for; `None`: all of it.
    fn selection(&self) -> Result<Option<Selection>, CommandError> {
        if let Some(n) = self.turn {
            return Ok(Some(Selection::Turns { from: Some(n), to: Some(n) }));
        }
        if let Some(text) = &self.turns {
            let bad = || {
                CommandError::input(format!("--turns {}: not a range of turns", render::escape_line(text)))
                    .hint("e.g. --turns 2..5 (both shown), --turns 3.. (to the end), --turns ..4")
            };
            let bound = |s: &str| if s.is_empty() { Ok(None) } else { s.parse::<u64>().map(Some).map_err(|_| bad()) };
            // One turn, as `--turn N` says it.
            let Some((from, to)) = text.split_once("..") else {
                let n = bound(text)?.ok_or_else(bad)?;
                return Ok(Some(Selection::Turns { from: Some(n), to: Some(n) }));
            };
            return Ok(Some(Selection::Turns { from: bound(from)?, to: bound(to)? }));
        }
        Ok((!self.event.is_empty()).then(|| Selection::Events(self.event.clone())))
    }
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let selection = args.selection()?;
    if selection.is_some() && matches!(args.format, ShowFormat::Openai | ShowFormat::Anthropic) {
        return Err(CommandError::input("--turn, --turns and --event select events to read, not a request body")
            .hint("a request body is the whole compacted view: drop --format, or use --format jsonl"));
    }
    let store = ctx.open_store()?;
    let id = match (&args.id, &selection) {
        // An event names its conversation: the active one when it holds it, else the one
        // that does.
        (None, Some(Selection::Events(queries))) => {
            let active = store.active()?;
            match convo::ops::select::conversation_of(&store, active.as_deref(), &queries[0])? {
                Some(id) => id,
                None => store.resolve_or_active(None)?,
            }
        }
        _ => {
            ctx.fetch_if_lazy(&store, args.id.as_deref())?;
            store.resolve_or_active(args.id.as_deref())?
        }
    };
    if let Some(selection) = &selection {
        return part::show_part(ctx, &store, &id, &args, selection);
    }
    if let (ShowFormat::Jsonl, false) = (args.format, args.compacted) {
        // Stored lines are canonical JSONL already: copied through, a segment at a time.
        let mut out = crate::cli::ui::Output::stdout();
        for segment in store.stored_lines(&id)? {
            out.writer().write_all(&segment?)?;
        }
        out.finish()?;
        return Ok(());
    }
    if let (ShowFormat::Jsonl, true) = (args.format, args.compacted) {
        // Decided from the outline index, written from the stored lines: one segment in
        // memory, and the lines nothing changed copied through.
        let at = store.outlined(&id)?;
        let items = projection::view(&at.outlined)?;
        let mut out = crate::cli::ui::Output::stdout();
        let lines = store.outlined_lines(&at).map(|s| s.map_err(CommandError::from));
        render::projected_jsonl_stream(out.writer(), &items, &at.outlined.outlines, lines)?;
        out.finish()?;
        return Ok(());
    }
    let events = store.events(&id)?;
    if matches!(args.format, ShowFormat::Openai | ShowFormat::Anthropic) {
        return body::provider_body(ctx, &store, &events, args.format, args.model.as_deref());
    }
    let view = if args.compacted { Some(projection::project(&events)?) } else { None };
    match (args.format, &view) {
        (ShowFormat::Jsonl, _) => unreachable!("streamed above"),
        (ShowFormat::Openai | ShowFormat::Anthropic, _) => unreachable!("handled above"),
        (ShowFormat::Text, _) => {
            let mut out = ctx.ui.paged();
            header::header(ctx, &store, &id, &events, args.compacted, &mut out)?;
            match view {
                None => render::conversation(out.writer(), &events, &[], detail(&args), ctx.ui.theme)?,
                Some(view) => {
                    let (events, marks) = render::marked(&view);
                    render::conversation(out.writer(), &events, &marks, detail(&args), ctx.ui.theme)?;
                }
            }
            out.finish()?;
        }
    }
    Ok(())
}

pub(super) fn detail(args: &Args) -> render::Detail {
    render::Detail { brief: args.brief, usage: args.verbose }
}
