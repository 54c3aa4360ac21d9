use convo::event::outline::Outlined;
use convo::ops::plan::Conversation;
use std::io::Write;

use convo::ops::plan::Request;
use convo::ops::{self, ForkRange};

use crate::cli::Ctx;
use crate::cli::capabilities::SummaryChoice;
use crate::cli::command_error::CommandError;

/// Start a new conversation from (part of) another, and make it active
///
/// The fork records where it came from (conversation and turn) in its metadata. Copied
/// events keep their ids, compactions inside the forked part come along, and segments
/// copied whole cost git no new objects. --compact then compacts the fork (with the
/// default profile, or the one named).
#[derive(clap::Args)]
pub struct Args {
    /// Conversation id or title, or a unique prefix of either (default: the active one)
    #[arg(add = clap_complete::ArgValueCandidates::new(crate::cli::conversation_candidates))]
    id: Option<String>,
    /// Take the last N turns
    #[arg(long, value_name = "N", conflicts_with_all = ["from", "to"])]
    last: Option<u64>,
    /// First turn to take: 5, -3, 5h, 2days [default: 0]
    #[arg(long, value_name = "BOUND", allow_negative_numbers = true)]
    from: Option<String>,
    /// Last turn to take, same forms [default: the last turn]
    #[arg(long, value_name = "BOUND", allow_negative_numbers = true)]
    to: Option<String>,
    /// Compact the fork afterwards, with PROFILE or compaction.default_profile
    #[arg(long, value_name = "PROFILE", num_args = 0..=1, default_missing_value = "", require_equals = true)]
    compact: Option<String>,
    /// Title of the fork [default: the source's title with " (fork)"]
    #[arg(long, short)]
    title: Option<String>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let store = ctx.open_store()?;
    let tx = store.transaction()?;
    let source = store.resolve_or_active(args.id.as_deref())?;
    let range = match (args.last, &args.from, &args.to) {
        (Some(n), _, _) => ForkRange::Last(n),
        (None, None, None) => ForkRange::All,
        (None, from, to) => ForkRange::Bounds {
            from: from.clone().unwrap_or_else(|| "0".into()),
            to: to.clone().unwrap_or_else(|| "-0".into()),
        },
    };
    let title = match args.title {
        Some(t) => t,
        None => format!("{} (fork)", store.meta(&source)?.title.unwrap_or_else(|| source.clone())),
    };
    let created = ops::fork::fork(&store, tx, &source, range, Some(&title), &ctx.clock)?;
    store.set_active(&created.id)?;
    writeln!(ctx.ui.stdout(), "{}", created.id)?;
    ctx.ui.committed(Some(&created.id), &created);
    if let Some(profile) = args.compact {
        let events = store.events(&created.id)?;
        let config = ctx.config(&store, &events)?;
        let outlined = Outlined::of(&events);
        let conversation = Conversation::full(&outlined, &events);
        let request = Request { profile: Some(profile).filter(|p| !p.is_empty()), ..Default::default() };
        let planned = match ops::compact::plan_compaction(conversation, &config, &request, &ctx.clock) {
            // The fork is made and said; a fork too short to compact is no failure of it.
            Err(ops::OpsError::Plan(e @ ops::plan::PlanError::NothingInRange { .. })) => {
                ctx.note(&format!("the fork is not compacted: {e}"));
                return Ok(());
            }
            planned => planned?,
        };
        let (appended, _) =
            ctx.compact(&store, &created.id, conversation, &config, planned, &SummaryChoice::default())?;
        ctx.ui.committed(Some(&created.id), &appended);
    }
    Ok(())
}
