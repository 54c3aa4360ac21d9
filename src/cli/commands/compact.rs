use std::io::Write;
use std::path::PathBuf;

use convo::compaction::{ReasoningPolicy, ToolCallPolicy};
use convo::ops;
use convo::ops::plan::Request;
use convo::projection;
use convo::render::{self, thousands};

use crate::cli::Ctx;
use crate::cli::capabilities::SummaryChoice;
use crate::cli::command_error::CommandError;
use crate::cli::ui::CommitReport;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ReasoningArg {
    /// Leave reasoning out of the view
    Strip,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ToolsArg {
    /// Empty requests and replace responses with a status line
    Strip,
    /// Empty requests only
    StripRequests,
    /// Replace responses with a status line only
    StripResponses,
    /// Leave calls and results out
    Omit,
}

/// Compact a conversation: append an overlay that shrinks what an LLM is sent
///
/// Nothing is deleted or rewritten: one `compaction` event is appended, in its own commit,
/// and `show --compacted`, `diff --compacted` and LLM requests apply it. Policies come from
/// a profile (--profile, default: compaction.default_profile) and the flags below; the range
/// from --from/--to, which take a turn (5), turns before the last (-3), a time ago (5h,
/// 2days) or `last` (one past the last compacted turn). Without --to the last N turns stay
/// as they are, N = compaction.keep_last. `--undo` withdraws a compaction the same way.
#[derive(clap::Args)]
pub struct Args {
    /// Conversation id, unique id prefix, or title (default: the active one)
    id: Option<String>,
    /// Profile to apply (default: compaction.default_profile)
    #[arg(long, short, value_name = "NAME")]
    profile: Option<String>,
    /// First turn to compact; alone it means `last` [default: 0]
    #[arg(long, value_name = "BOUND", num_args = 0..=1, default_missing_value = "last", allow_negative_numbers = true)]
    from: Option<String>,
    /// Last turn to compact [default: -N, N = compaction.keep_last]
    #[arg(long, value_name = "BOUND", allow_negative_numbers = true, conflicts_with = "keep_last")]
    to: Option<String>,
    /// Leave the last N turns as they are (--to -N)
    #[arg(long, value_name = "N")]
    keep_last: Option<u64>,
    /// What to do with reasoning, over the profile
    #[arg(long, value_enum, value_name = "POLICY")]
    reasoning: Option<ReasoningArg>,
    /// What to do with tool calls, over the profile
    #[arg(long, value_enum, value_name = "POLICY")]
    tools: Option<ToolsArg>,
    /// Replace the range with this summary
    #[arg(long, value_name = "TEXT", conflicts_with = "summary_file")]
    summary: Option<String>,
    /// Replace the range with the summary in FILE
    #[arg(long, value_name = "FILE")]
    summary_file: Option<PathBuf>,
    /// Have a model summarize the range (from its raw events)
    #[arg(long, conflicts_with_all = ["summary", "summary_file"])]
    summarize: bool,
    /// The model that summarizes, as provider/model [default: the profile's summary.model, then llm.model]
    #[arg(long, short, value_name = "MODEL")]
    model: Option<String>,
    /// Something the summary must pay particular attention to
    #[arg(long, value_name = "TEXT")]
    focus: Option<String>,
    /// Do not ask before sending a large range to the model (compaction.confirm_above_tokens)
    #[arg(long, short)]
    yes: bool,
    /// Print the range, policies and token estimates; write nothing
    #[arg(long, short = 'n')]
    dry_run: bool,
    /// With --dry-run, also print the projected view of the range
    #[arg(long, short, requires = "dry_run")]
    verbose: bool,
    /// Withdraw a compaction (default: the latest in force) by appending its revocation
    #[arg(
        long,
        value_name = "COMPACTION",
        num_args = 0..=1,
        default_missing_value = "",
        conflicts_with_all = ["profile", "from", "to", "keep_last", "reasoning", "tools", "summary", "summary_file", "summarize", "dry_run"]
    )]
    undo: Option<String>,
}

fn request(args: &Args) -> Result<Request, CommandError> {
    let summary = match &args.summary_file {
        Some(path) => Some(
            std::fs::read_to_string(path)
                .map_err(|e| CommandError::input(format!("--summary-file {}: {e}", path.display())))?,
        ),
        None => args.summary.clone(),
    };
    if summary.as_deref().is_some_and(|s| s.trim().is_empty()) {
        return Err(CommandError::input("the summary is empty").hint("nothing was written"));
    }
    Ok(Request {
        profile: args.profile.clone(),
        from: args.from.clone(),
        to: args.to.clone(),
        keep_last: args.keep_last,
        reasoning: args.reasoning.map(|ReasoningArg::Strip| ReasoningPolicy::Strip),
        tool_calls: args.tools.map(|t| match t {
            ToolsArg::Strip => ToolCallPolicy::Strip { request: true, response: true },
            ToolsArg::StripRequests => ToolCallPolicy::Strip { request: true, response: false },
            ToolsArg::StripResponses => ToolCallPolicy::Strip { request: false, response: true },
            ToolsArg::Omit => ToolCallPolicy::Omit,
        }),
        summary: summary.map(|s| s.trim_end().to_owned()),
        summarize: args.summarize,
    })
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let store = ctx.open_store()?;
    if let Some(target) = &args.undo {
        let lock = store.lock()?;
        let id = store.resolve_or_active(args.id.as_deref())?;
        let target = Some(target.as_str()).filter(|t| !t.is_empty());
        let undone = ops::compact::undo_compaction(&store, &lock, &id, target, &ctx.clock)?;
        drop(lock);
        let a = &undone.appended;
        ctx.ui.commit(&CommitReport {
            conversation: Some(&id),
            commit: &a.commit,
            subject: &a.subject,
            landed: &a.landed,
        });
        return Ok(());
    }

    let request = request(&args)?;
    let id = store.resolve_or_active(args.id.as_deref())?;
    let events = store.events(&id)?;
    let config = ctx.config(&store, &events)?;
    let planned = ops::compact::plan_compaction(&events, &config, &request, &ctx.clock)?;
    let choice = SummaryChoice { model: args.model.clone(), focus: args.focus.clone(), yes: args.yes };
    if args.dry_run {
        return dry_run(ctx, &store, &id, &events, &config, &planned, &choice, args.verbose);
    }
    let (appended, planned) = ctx.compact(&store, &id, &events, &config, planned, &choice)?;
    let c = &planned.prepared.compaction;
    ctx.ui.commit(&CommitReport {
        conversation: Some(&id),
        commit: &appended.commit,
        subject: &appended.subject,
        landed: &appended.landed,
    });
    if (c.from_turn, c.to_turn) != planned.prepared.requested {
        let (a, b) = planned.prepared.requested;
        ctx.note(&format!(
            "note: turns {a}-{b} widened to {}-{} to swallow a summary they overlapped",
            c.from_turn, c.to_turn
        ));
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn dry_run(
    ctx: &Ctx,
    store: &convo::store::Store,
    id: &str,
    events: &[convo::event::Event],
    config: &convo::config::Resolved,
    planned: &ops::Planned,
    choice: &SummaryChoice,
    verbose: bool,
) -> Result<(), CommandError> {
    if planned.prepared.pending.is_some() {
        let job = ops::compact::summary_job(events, planned, config, choice.model.as_deref(), choice.focus.as_deref())?;
        let c = &planned.prepared.compaction;
        let title = store.meta(id)?.title;
        let calls = job.chunks.len() + usize::from(job.chunks.len() > 1);
        writeln!(
            ctx.ui.stdout(),
            "Would compact {} turns {}-{} [summary by {}] (profile {})\n\
             would send ~{} tokens of raw events to {} in {calls} call{}, and write the summary it returns\n\
             total now ~{} tokens (chars/4); nothing sent, nothing written (--dry-run)",
            convo::render::escape_line(&convo::store::subject_name(id, title.as_deref())),
            c.from_turn,
            c.to_turn,
            job.model.name,
            c.profile.as_deref().unwrap_or("-"),
            thousands(job.input_tokens),
            job.model.name,
            if calls == 1 { "" } else { "s" },
            thousands(planned.estimate.before),
        )?;
        return Ok(());
    }
    let c = &planned.prepared.compaction;
    let e = &planned.estimate;
    let title = store.meta(id)?.title;
    let mut out = ctx.ui.paged();
    let w = out.writer();
    writeln!(
        w,
        "Would compact {} turns {}-{} {} (profile {})",
        convo::render::escape_line(&convo::store::subject_name(id, title.as_deref())),
        c.from_turn,
        c.to_turn,
        c.describe(),
        c.profile.as_deref().unwrap_or("-"),
    )?;
    if (c.from_turn, c.to_turn) != planned.prepared.requested {
        let (a, b) = planned.prepared.requested;
        writeln!(w, "(turns {a}-{b} widened so that summaries do not partly overlap)")?;
    }
    writeln!(w, "{:>6}  {:>10}  {:>10}", "turn", "now", "after")?;
    for t in &e.turns {
        let in_range = t.turn.is_some_and(|t| (c.from_turn..=c.to_turn).contains(&t));
        if in_range {
            let turn = t.turn.map_or("-".into(), |t| t.to_string());
            writeln!(
                w,
                "{turn:>6}  {:>10}  {:>10}",
                format!("~{}", thousands(t.before)),
                format!("~{}", thousands(t.after))
            )?;
        }
    }
    let saved = if e.before > 0 { 100.0 * (e.before as f64 - e.after as f64) / e.before as f64 } else { 0.0 };
    writeln!(
        w,
        "total  ~{} -> ~{} tokens (chars/4), {saved:.1}% smaller; nothing written (--dry-run)",
        thousands(e.before),
        thousands(e.after)
    )?;
    if verbose {
        let mut with = events.to_vec();
        with.push(
            convo::compaction::Record::Apply(c.clone()).to_draft().into_event(planned.id.clone(), planned.ts.clone()),
        );
        let view = projection::project(&with)?;
        let in_range: Vec<_> =
            view.into_iter().filter(|p| p.raw_turn.is_some_and(|t| (c.from_turn..=c.to_turn).contains(&t))).collect();
        let (events, marks) = render::marked(&in_range);
        render::conversation(w, &events, &marks, false, ctx.ui.theme)?;
    }
    out.finish()?;
    Ok(())
}
