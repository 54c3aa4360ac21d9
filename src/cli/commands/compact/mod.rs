mod applied;
mod dry_run;
mod request;
mod undo;

use std::path::PathBuf;

use self::request::{ReasoningArg, ToolsArg};
use convo::ops;

use crate::cli::Ctx;
use crate::cli::capabilities::SummaryChoice;
use crate::cli::command_error::CommandError;

/// Compact a conversation: append an overlay that shrinks what an LLM is sent
///
/// Nothing is deleted or rewritten: one `compaction` event is appended, in its own commit,
/// and `show --compacted`, `diff --compacted` and LLM requests apply it. Policies come from
/// a profile (--profile, default: compaction.default_profile) and the flags below; the range
/// from --from/--to, which take a turn (5), turns before the last (-3), a time ago (5h,
/// 2days) or `last` (one past the last event compacted). Without --to or --keep-last the
/// range ends before the profile's last keep_recent_tools tool calls when there are more,
/// else before the last compaction.keep_last turns; it never separates a tool result from
/// its call. When the bounds leave nothing, convo says so and exits 0. `--undo`
/// withdraws a compaction the same way (with none in force, convo says so and exits 0).
///
/// With --budget TOKENS, steps are tried in this order until the view fits: truncate (tool
/// output over min_bytes cut to max_lines), micro (tool parts over min_bytes replaced),
/// reasoning (and reasoning stripped), tool-calls (every tool part stripped), summary (the
/// model's if the profile asks for one, else --digest). The step chosen spends what is left:
/// it covers only the oldest part needed or raises its threshold, and a digest takes what the
/// view leaves. When no step fits, the recent tail kept by config (keep_recent_tools,
/// keep_last) is given up step by step, and convo says which; a budget nothing meets is an
/// error naming the smallest view. --dry-run shows every step and the trail kept.
/// Commands in your own config's hooks.pre_compact (which may veto it) and hooks.post_compact
/// run around it, a JSON document on stdin; --dry-run runs neither.
#[derive(clap::Args)]
pub struct Args {
    /// Conversation id or title, or a unique prefix of either (default: the active one)
    #[arg(add = clap_complete::ArgValueCandidates::new(crate::cli::conversation_candidates))]
    id: Option<String>,
    /// Profile to apply (default: compaction.default_profile)
    #[arg(long, short, value_name = "NAME")]
    profile: Option<String>,
    /// First turn to compact; alone it means `last` [default: 0]
    #[arg(long, value_name = "BOUND", num_args = 0..=1, default_missing_value = "last", allow_negative_numbers = true)]
    from: Option<String>,
    /// Last turn to compact [default: -N, N = compaction.keep_last]
    #[arg(long, value_name = "BOUND", allow_negative_numbers = true)]
    to: Option<String>,
    /// Leave the last N turns as they are (--to -N; the range's end, so not with --to or
    /// --keep-recent-tools)
    #[arg(long, value_name = "N")]
    keep_last: Option<u64>,
    /// Leave the last N tool calls and their results whole; all before them is in range
    /// (the range's end, so not with --to or --keep-last)
    #[arg(long, value_name = "N")]
    keep_recent_tools: Option<u64>,
    /// Leave the first N turns (the task statement) as they are [profile key: keep_first]
    #[arg(long, value_name = "N")]
    keep_first: Option<u64>,
    /// Only strip or truncate tool requests and results over B bytes [profile key: min_bytes]
    #[arg(long, value_name = "B")]
    min_bytes: Option<u64>,
    /// Choose the least compaction that brings the view under TOKENS (see below)
    #[arg(long, value_name = "TOKENS", conflicts_with_all = ["reasoning", "tools", "summary", "summary_file", "summarize", "digest"])]
    budget: Option<u64>,
    /// Cut tool results left in place to N lines, first and last kept [profile key: max_lines]
    #[arg(long, value_name = "N")]
    max_lines: Option<u64>,
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
    /// Replace the range with a digest convo writes, one line per turn (no model)
    ///
    /// Each line: what the user asked, tools used with counts, files touched, the first
    /// sentence of the answer. The digest is bounded by compaction.max_summary_tokens: the oldest
    /// turns' lines are left out first, and one line says how many.
    #[arg(long, conflicts_with_all = ["summary", "summary_file", "summarize", "model", "focus"])]
    digest: bool,
    /// The model that summarizes, as provider/model [default: the profile's summary.model, then llm.model]
    #[arg(long, short, value_name = "MODEL")]
    model: Option<String>,
    /// Something the summary must pay particular attention to
    #[arg(long, value_name = "TEXT")]
    focus: Option<String>,
    /// Do not ask before sending a large range to the model (compaction.confirm_above_tokens)
    #[arg(long, short)]
    yes: bool,
    /// Apply a model summary even when it is estimated no smaller than the range it replaces
    #[arg(long)]
    force: bool,
    /// Print the range, policies and token estimates; write nothing
    #[arg(long, short = 'n')]
    dry_run: bool,
    /// With --dry-run, list every turn of a long range and print its projected view
    #[arg(long, short, requires = "dry_run")]
    verbose: bool,
    /// Withdraw a compaction (default: the latest in force) by appending its revocation
    #[arg(
        long,
        value_name = "COMPACTION",
        num_args = 0..=1,
        default_missing_value = "",
        conflicts_with_all = ["profile", "from", "to", "keep_last", "keep_recent_tools", "keep_first", "min_bytes", "max_lines", "reasoning", "tools", "summary", "summary_file", "summarize", "digest", "budget", "dry_run"]
    )]
    undo: Option<String>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let store = ctx.open_store()?;
    if let Some(target) = &args.undo {
        return undo::run(ctx, &store, args.id.as_deref(), Some(target.as_str()).filter(|t| !t.is_empty()));
    }
    let request = request::of(&args)?;
    let id = store.resolve_or_active(args.id.as_deref())?;
    // From the outline index; the events only if the plan needs their text.
    let at = store.outlined(&id)?;
    let config = ctx.config(&store, &at.outlined.configs)?;
    let planned = ops::compact::plan_outlined(&store, &id, &at.outlined, &config, &request, &ctx.clock, args.dry_run);
    let (planned, read) = match planned {
        Err(ops::OpsError::Plan(e @ ops::plan::PlanError::NothingInRange { .. })) => {
            // Like `git commit` with nothing staged: said, and not a failure.
            ctx.note(&e.to_string());
            return Ok(());
        }
        planned => planned?,
    };
    let conversation = ops::compact::conversation(&at.outlined, &read);
    let choice =
        SummaryChoice { model: args.model.clone(), focus: args.focus.clone(), yes: args.yes, force: args.force };
    if args.dry_run {
        let verbose = args.verbose;
        let (s, id, config, planned, choice) = (&store, &id, &config, &planned, &choice);
        let shown = dry_run::run(ctx, dry_run::DryRun { store: s, id, conversation, config, planned, choice, verbose });
        ctx.keep_until_exit(store);
        return shown;
    }
    let (appended, planned) = ctx.compact(&store, &id, conversation, &config, planned, &choice)?;
    ctx.keep_until_exit(store);
    ctx.ui.committed(Some(&id), &appended);
    applied::say(ctx, &planned);
    Ok(())
}
