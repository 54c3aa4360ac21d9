use convo::projection;
use convo::render::compare;

use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// Show what compaction changes, or how a conversation changed between two commits
///
/// `convo diff [ID] --compacted` compares the raw conversation with the compacted view an LLM
/// is sent. `convo diff [ID] REV1 [REV2]` compares the conversation at two commits of the
/// store (REV2 defaults to HEAD); revisions are anything git takes (a hash, HEAD~3). With
/// --stat, per-turn token estimates replace the diff.
#[derive(clap::Args)]
pub struct Args {
    /// The raw view against the compacted view
    #[arg(long)]
    compacted: bool,
    /// Per-turn estimated tokens, before -> after, and the totals
    #[arg(long)]
    stat: bool,
    /// [ID] with --compacted; otherwise [ID] REV1 [REV2]
    #[arg(value_name = "ARGS")]
    args: Vec<String>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let store = ctx.open_store()?;
    let (id, before, after, labels) = if args.compacted {
        if args.args.len() > 1 {
            return Err(
                CommandError::input("--compacted takes at most one conversation").hint("convo diff [ID] --compacted")
            );
        }
        let id = store.resolve_or_active(args.args.first().map(String::as_str))?;
        let events = store.events(&id)?;
        let view = projection::project(&events)?;
        (id, projection::raw_view(&events), view, ("raw".to_owned(), "compacted".to_owned()))
    } else {
        let (query, revs): (Option<&str>, &[String]) = match args.args.as_slice() {
            [] => {
                return Err(CommandError::input("nothing to compare")
                    .hint("convo diff --compacted, or convo diff [ID] REV1 [REV2]"));
            }
            [id, revs @ ..] if args.args.len() == 3 => (Some(id.as_str()), revs),
            // Two words: a conversation and a revision, or two revisions.
            [first, _] if store.resolve(first).is_ok() => (Some(first.as_str()), &args.args[1..]),
            revs => (None, revs),
        };
        let id = store.resolve_or_active(query)?;
        let rev1 = revs[0].as_str();
        let rev2 = revs.get(1).map_or("HEAD", String::as_str);
        let (a, b) = (store.events_at(&id, rev1)?, store.events_at(&id, rev2)?);
        (id, projection::raw_view(&a), projection::raw_view(&b), (rev1.to_owned(), rev2.to_owned()))
    };
    let mut out = ctx.ui.paged();
    let labels = (labels.0.as_str(), labels.1.as_str());
    if args.stat {
        compare::stat(out.writer(), &projection::compare(&before, &after), labels)?;
    } else {
        compare::unified(out.writer(), &id, &before, &after, labels, ctx.ui.theme)?;
    }
    out.finish()?;
    Ok(())
}
