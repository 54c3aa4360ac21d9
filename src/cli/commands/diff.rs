use convo::projection::{self, Projected};
use convo::render::compare;

use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// Show what compaction changes, or how a conversation changed between two commits
///
/// `convo diff [ID] --compacted` compares the raw conversation with the compacted view an LLM
/// is sent. `convo diff [ID] REV1 [REV2]` compares the raw conversation at two commits of the
/// store (REV2 defaults to HEAD); revisions are anything git takes (a hash, HEAD~3). With
/// both, `convo diff [ID] --compacted REV1 [REV2]` compares the compacted views at the two
/// commits: what a compaction did, or what an undo restored. With --stat, per-turn token
/// estimates replace the diff.
#[derive(clap::Args)]
pub struct Args {
    /// The compacted view: against the raw one, or at two revisions
    #[arg(long)]
    compacted: bool,
    /// Per-turn estimated tokens, before -> after, and the totals
    #[arg(long)]
    stat: bool,
    /// [ID] [REV1 [REV2]]; without revisions, --compacted is needed
    #[arg(value_name = "ARGS", add = clap_complete::ArgValueCandidates::new(crate::cli::conversation_candidates))]
    args: Vec<String>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let store = ctx.open_store()?;
    // In a lazy store a first word naming a conversation of the catalog is fetched first.
    if let Some(first) = args.args.first() {
        ctx.fetch_if_lazy(&store, Some(first))?;
    }
    // One word may be a conversation or a revision; a conversation is tried first.
    let (query, revs): (Option<&str>, &[String]) = match args.args.as_slice() {
        [id, revs @ ..] if args.args.len() == 3 => (Some(id.as_str()), revs),
        [first, rest @ ..] if store.resolve(first).is_ok() => (Some(first.as_str()), rest),
        [_, _, _, ..] => {
            return Err(CommandError::input("too many arguments").hint("convo diff [ID] [--compacted] [REV1 [REV2]]"));
        }
        revs => (None, revs),
    };
    let id = store.resolve_or_active(query)?;
    let view = |events: &[convo::event::Event]| -> Result<Vec<Projected>, CommandError> {
        Ok(if args.compacted { projection::project(events)? } else { projection::raw_view(events) })
    };
    let (before, after, labels) = match revs {
        [] if args.compacted => {
            let events = store.events(&id)?;
            (projection::raw_view(&events), projection::project(&events)?, ("raw".to_owned(), "compacted".to_owned()))
        }
        [] => {
            return Err(CommandError::input("nothing to compare")
                .hint("convo diff --compacted, or convo diff [ID] [--compacted] REV1 [REV2]"));
        }
        revs => {
            let rev1 = revs[0].as_str();
            let rev2 = revs.get(1).map_or("HEAD", String::as_str);
            let (a, b) = (store.events_at(&id, rev1)?, store.events_at(&id, rev2)?);
            let (before, after) = (view(&a)?, view(&b)?);
            if !args.compacted && before == after && compactions(&a) != compactions(&b) {
                // Like git's "nothing to commit" hint: the change is there, in another view.
                ctx.note(&format!(
                    "no raw event changed between {rev1} and {rev2}, but the compactions did: `convo diff --compacted {rev1} {rev2}` shows what they changed"
                ));
            }
            (before, after, (rev1.to_owned(), rev2.to_owned()))
        }
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

/// The ids of a conversation's compaction events (overlays and revocations).
fn compactions(events: &[convo::event::Event]) -> Vec<&str> {
    events.iter().filter(|e| matches!(e.kind, convo::event::Kind::Compaction)).map(|e| e.id.as_str()).collect()
}
