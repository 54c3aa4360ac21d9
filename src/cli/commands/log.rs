use convo::render;

use super::Format;
use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// Show the history of a conversation, newest first
///
/// Each commit shows what changed and the conversation's size after it (turns, events,
/// estimated tokens). Following the conversation's own commit chain, it costs time in
/// proportion to that conversation's history, not the store's. `--oneline` lines fit the
/// terminal (or `COLUMNS`): the sizes shorten, then go, then subjects are cut.
#[derive(clap::Args)]
pub struct Args {
    /// Conversation id or title, or a unique prefix of either (default: the active one)
    #[arg(conflicts_with = "all", add = clap_complete::ArgValueCandidates::new(crate::cli::conversation_candidates))]
    id: Option<String>,
    /// One line per commit
    #[arg(long, conflicts_with = "format")]
    oneline: bool,
    /// Show at most N commits
    #[arg(short = 'n', long = "max-count", value_name = "N")]
    max_count: Option<usize>,
    /// Every commit of the store, all conversations
    #[arg(long)]
    all: bool,
    /// Output format; `json` is an array of commits for scripts
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let store = ctx.open_store()?;
    let mut shown = None;
    let entries = if args.all {
        store.log_all(args.max_count)?
    } else {
        let id = store.resolve_or_active(args.id.as_deref())?;
        shown = Some(id.clone());
        let mut entries = store.log(&id, args.max_count)?;
        // Compactions withdrawn later show as undone.
        if entries.iter().any(|e| e.compaction.is_some()) {
            let events = store.events(&id)?;
            let records = convo::compaction::records(&events)?;
            let revoked = convo::compaction::revoked(&records);
            for e in &mut entries {
                e.undone = e.compaction.as_ref().is_some_and(|c| revoked.contains(c));
            }
        }
        entries
    };
    match args.format {
        Format::Json => {
            let mut out = crate::cli::ui::Output::stdout();
            serde_json::to_writer_pretty(out.writer(), &entries).map_err(std::io::Error::from)?;
            writeln!(out.writer())?;
            out.finish()?;
        }
        Format::Text => {
            // One conversation's log needs only the neighbours of the ids it names (its own,
            // and a source's where a fork's log reaches back) for their unique prefixes.
            let ids = match shown {
                Some(id) => {
                    let mut named: Vec<String> = entries.iter().filter_map(|e| e.conversation.clone()).collect();
                    named.push(id);
                    named.sort();
                    named.dedup();
                    let mut near = named.clone();
                    for id in &named {
                        near.extend(store.id_neighbours(id)?);
                    }
                    render::ShortIds::new(near)
                }
                None => render::ShortIds::new(store.conversation_ids()?),
            };
            let mut out = ctx.ui.paged();
            render::log(out.writer(), &entries, args.oneline, &ids, ctx.ui.width, ctx.ui.theme)?;
            out.finish()?;
        }
    }
    Ok(())
}
