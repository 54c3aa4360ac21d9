//! From `compact`'s flags to the library's [`Request`]: the policy flags as library
//! policies, the summary read from its file.

use convo::compaction::{ReasoningPolicy, ToolCallPolicy};
use convo::ops::plan::Request;

use super::Args;
use crate::cli::command_error::CommandError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum ReasoningArg {
    /// Leave reasoning out of the view
    Strip,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum ToolsArg {
    /// Empty requests and replace responses with a status line
    Strip,
    /// Empty requests only
    StripRequests,
    /// Replace responses with a status line only
    StripResponses,
    /// Leave calls and results out
    Omit,
}

/// The request `args` make, the summary file read.
pub(super) fn of(args: &Args) -> Result<Request, CommandError> {
    // Each of these says where the range ends: two of them would contradict each other.
    let ends: Vec<&str> = [
        (args.to.is_some(), "--to"),
        (args.keep_last.is_some(), "--keep-last"),
        (args.keep_recent_tools.is_some(), "--keep-recent-tools"),
    ]
    .into_iter()
    .filter_map(|(given, flag)| given.then_some(flag))
    .collect();
    if let [first, second, ..] = ends.as_slice() {
        return Err(CommandError::input(format!("{first} and {second} both say where the range ends: give one")).hint(
            "--to names the last turn compacted; --keep-last N and --keep-recent-tools N, the turns or tool calls left after it",
        ));
    }
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
        keep_first: args.keep_first,
        keep_recent_tools: args.keep_recent_tools,
        min_bytes: args.min_bytes,
        max_lines: args.max_lines,
        digest: args.digest,
        budget: args.budget,
        budget_label: args.budget.map(|b| format!("--budget {b}")),
        ..Default::default()
    })
}
