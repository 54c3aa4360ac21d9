use convo::render;

use super::Format;
use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// Show the history of a conversation, newest first
///
/// Each commit shows what changed and the conversation's size after it (turns, events,
/// estimated tokens), and (`By:`) the people, agents and models of the events it added. Following the conversation's own commit chain, it costs time in
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
    /// Only commits by a person matching PATTERN (a regular expression, matched anywhere in
    /// `Name <email>`): the commit's author or who recorded an event it added
    #[arg(long, value_name = "PATTERN")]
    author: Option<String>,
    /// Output format; `json` is an array of commits for scripts
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let author = super::author(args.author.as_deref())?;
    let store = ctx.open_store()?;
    let mut shown = None;
    // Filtered before the count, as git does.
    let limit = if author.is_some() { None } else { args.max_count };
    let mut entries = if args.all {
        let mut entries = store.log_all(limit)?;
        if !args.oneline || author.is_some() {
            convo::ops::who::attribute_all(&store, &mut entries)?;
        }
        entries
    } else {
        ctx.fetch_if_lazy(&store, args.id.as_deref())?;
        let id = store.resolve_or_active(args.id.as_deref())?;
        shown = Some(id.clone());
        let mut entries = store.log(&id, limit)?;
        // Only where shown or asked for: it reads the conversation's events.
        if !args.oneline || author.is_some() {
            convo::ops::who::attribute(&store, &id, &mut entries, limit.is_none())?;
        }
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
    if let Some(author) = &author {
        entries.retain(|e| convo::ops::who::entry_by(e, author));
        entries.truncate(args.max_count.unwrap_or(usize::MAX));
    }
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
