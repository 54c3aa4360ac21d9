use convo::ops::project;
use convo::ops::usage::{self, By, Options, Prices, Row};
use convo::render::usage::Line;

use super::Format;
use crate::cli::Ctx;
use crate::cli::command_error::CommandError;
use crate::cli::ui::Output;

/// Report the tokens agents and models used, and what they cost, by day, model or project
///
/// Counts are those the agent or the provider recorded with each answer (Claude Code's
/// `message.usage`, Codex's token counts, `convo query`'s answers), never estimates; an API
/// message Claude Code wrote over several lines counts once. They are summed from a tally
/// of each conversation's calls by day and model kept in `.git/convo/usage`, recounted from
/// the events of a conversation that changed. Cost comes from a price table convo ships (its date
/// is printed), over which config's `prices."MODEL"` (input, output, cache_read,
/// cache_write: US$ per million tokens) sets others; a model with no price shows its tokens
/// and no cost (`+` marks a cost that leaves some out).
#[derive(clap::Args)]
pub struct Args {
    /// Group by: day, week, month, project, model, conversation, person, agent (several: --by
    /// day,model)
    #[arg(long, value_enum, value_delimiter = ',', default_value = "day")]
    by: Vec<ByArg>,
    /// Only what was used since: a time ago (7d, 2weeks), a date (2025-09-01) or an RFC 3339 time
    #[arg(long, value_name = "WHEN")]
    since: Option<String>,
    /// Only what was used before: a time ago, a date or an RFC 3339 time
    #[arg(long, value_name = "WHEN")]
    until: Option<String>,
    /// Only the conversations of the current directory's repository (as `list --here`)
    #[arg(long)]
    here: bool,
    /// Output format; `json` has one object per row and the total
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ByArg {
    Day,
    Week,
    Month,
    Project,
    Model,
    Conversation,
    Person,
    Agent,
}

impl ByArg {
    fn by(self) -> By {
        match self {
            ByArg::Day => By::Day,
            ByArg::Week => By::Week,
            ByArg::Month => By::Month,
            ByArg::Project => By::Project,
            ByArg::Model => By::Model,
            ByArg::Conversation => By::Conversation,
            ByArg::Person => By::Person,
            ByArg::Agent => By::Agent,
        }
    }

    fn name(self) -> &'static str {
        match self {
            ByArg::Day => "day",
            ByArg::Week => "week",
            ByArg::Month => "month",
            ByArg::Project => "project",
            ByArg::Model => "model",
            ByArg::Conversation => "conversation",
            ByArg::Person => "person",
            ByArg::Agent => "agent",
        }
    }
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let store = ctx.open_store()?;
    let config = ctx.config(&store, &[])?;
    let prices = Prices::shipped()
        .map_err(|e| CommandError::internal(format!("the shipped price table: {e}")))?
        .with(&config.config.prices);
    let now = ctx.clock.now();
    let when = |flag: &str, value: &Option<String>| value.as_deref().map(|v| super::when(flag, v, now)).transpose();
    let options = Options {
        by: args.by.iter().map(|b| b.by()).collect(),
        since: when("--since", &args.since)?,
        until: when("--until", &args.until)?,
    };
    let summaries = store.summaries()?;
    let titles: std::collections::HashMap<String, Option<String>> =
        summaries.iter().map(|s| (s.id.clone(), s.title.clone())).collect();
    let summaries = match args.here {
        true => project::within(summaries, &project::Scope::of(&std::env::current_dir()?)?),
        false => summaries,
    };
    let report = usage::report(&store, &summaries, &options, &prices)?;
    let heads: Vec<&str> = args.by.iter().map(|b| b.name()).collect();
    let mut out = Output::stdout();
    match args.format {
        Format::Json => {
            let row = |r: &Row| {
                let keys: serde_json::Map<String, serde_json::Value> =
                    heads.iter().zip(&r.key).map(|(h, k)| (h.to_string(), k.clone().into())).collect();
                serde_json::json!({
                    "key": keys, "usage": r.usage, "cost_usd": r.cost, "unpriced_models": r.unpriced,
                })
            };
            let json = serde_json::json!({
                "by": heads,
                "prices_date": prices.date,
                "rows": report.rows.iter().map(row).collect::<Vec<_>>(),
                "total": row(&report.total),
            });
            serde_json::to_writer_pretty(out.writer(), &json).map_err(std::io::Error::from)?;
            writeln!(out.writer())?;
        }
        Format::Text => {
            let shown = |i: usize, key: &str| match args.by[i] {
                ByArg::Conversation => {
                    let short: String = key.chars().take(8).collect();
                    match titles.get(key).cloned().flatten() {
                        Some(title) => format!("{short} {title}"),
                        None => short,
                    }
                }
                _ => key.to_owned(),
            };
            fn line(r: &Row, keys: Vec<String>) -> Line<'_> {
                Line { keys, usage: &r.usage, cost: r.cost, partly_priced: !r.unpriced.is_empty() }
            }
            let rows: Vec<Line<'_>> = report
                .rows
                .iter()
                .map(|r| line(r, r.key.iter().enumerate().map(|(i, k)| shown(i, k)).collect()))
                .collect();
            let mut total_keys = vec![String::new(); heads.len()];
            total_keys[0] = "total".to_owned();
            let total = line(&report.total, total_keys);
            let (unpriced, date, width) = (&report.total.unpriced, &prices.date, ctx.ui.width);
            convo::render::usage::table(out.writer(), &heads, &rows, &total, unpriced, date, width)?;
        }
    }
    out.finish()?;
    Ok(())
}
