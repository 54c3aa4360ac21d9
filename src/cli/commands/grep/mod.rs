use convo::event::who::Who;
use convo::ops::search::{self, Filter, Pattern};

mod found;
mod type_arg;

use super::{Format, when};
use type_arg::TypeArg;

use crate::cli::Ctx;
use crate::cli::command_error::{CommandError, Kind};

/// Search conversations for a pattern
///
/// Each event is searched by its text as it reads, not the JSON that stores it: a message's
/// content, a tool result's output, a tool call's argument values (one per line). So `"`
/// and phrases across lines (`to\nthe`) match as written. PATTERN is a regular expression
/// (Rust's regex syntax) unless -F. Hits are grouped under their conversation (oldest
/// first), one line each: turn, event type (and tool), and the matching text with the match
/// marked. With -A, -B or --context, each hit comes with the events around it, as grep shows
/// context lines: `:` after a hit's turn, `-` after an event shown around one, `--` between
/// groups that are not next to each other. The exit status is 0 when something
/// matched, 1 when nothing did.
#[derive(clap::Args)]
pub struct Args {
    /// What to look for (with --failed, optional: every failed result)
    #[arg(required_unless_present = "failed")]
    pattern: Option<String>,
    /// Conversations to search: ids or titles, or unique prefixes of either (default: all)
    #[arg(add = clap_complete::ArgValueCandidates::new(crate::cli::conversation_candidates))]
    ids: Vec<String>,
    /// Search titles, not events: one `ID<TAB>TITLE` line per conversation whose title
    /// matches (in a lazy store, those its hub's catalog lists too; nothing is fetched)
    #[arg(long, conflicts_with_all = ["ids", "failed", "list", "count"])]
    titles: bool,
    /// Match upper and lower case alike
    #[arg(long, short = 'i')]
    ignore_case: bool,
    /// Take PATTERN as text, not a regular expression
    #[arg(long, short = 'F')]
    fixed_strings: bool,
    /// Match whole words only
    #[arg(long, short = 'w')]
    word_regexp: bool,
    /// Print only the ids of conversations with a match
    #[arg(long = "conversations-with-matches", short = 'l', conflicts_with = "count")]
    list: bool,
    /// Print each conversation's number of matching lines
    #[arg(long, short = 'c')]
    count: bool,
    /// Search only events of these types (repeat, or separate with commas)
    #[arg(long = "type", value_enum, value_name = "TYPE", value_delimiter = ',')]
    types: Vec<TypeArg>,
    /// Search only calls of this tool and their results
    #[arg(long, value_name = "NAME")]
    tool: Option<String>,
    /// Only events since then: a time ago (2h, 3days) or a date or time (2026-11-01, RFC 3339)
    #[arg(long, value_name = "WHEN")]
    since: Option<String>,
    /// Only events until then (as --since)
    #[arg(long, value_name = "WHEN")]
    until: Option<String>,
    /// Search what an LLM is sent (compactions applied) instead of the raw events
    #[arg(long)]
    compacted: bool,
    /// Search only tool results that failed (`is_error`); without PATTERN, show them all
    #[arg(long)]
    failed: bool,
    /// Search only events recorded by a person matching PATTERN (a regular expression,
    /// matched anywhere in `Name <email>`)
    #[arg(long, value_name = "PATTERN")]
    author: Option<String>,
    /// Show N events after each hit
    #[arg(long = "after-context", short = 'A', value_name = "N", conflicts_with_all = ["list", "count"])]
    after: Option<usize>,
    /// Show N events before each hit
    #[arg(long = "before-context", short = 'B', value_name = "N", conflicts_with_all = ["list", "count"])]
    before: Option<usize>,
    /// Show N events before and after each hit (grep's -C: here -C names the store)
    #[arg(long = "context", value_name = "N", conflicts_with_all = ["list", "count"])]
    context: Option<usize>,
    /// Output format; `json` prints one object per line: a hit (with -l or -c, a conversation;
    /// with -A, -B or --context, an event around a hit too, `"context": true`), each with its
    /// conversation's `people`, `agents` and `models`; in a lazy store searched whole, a last
    /// line `{"searched": N, "not_fetched": M, "remote": R}`
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let pattern = match args.pattern.as_deref() {
        // `--failed` alone (or with an empty pattern): every failed result.
        None | Some("") if args.failed => Pattern::anything(),
        pattern => Pattern::new(pattern.unwrap_or_default(), args.fixed_strings, args.ignore_case, args.word_regexp)
            .map_err(|e| {
                let why = e.lines().last().unwrap_or(&e).trim();
                CommandError::input(format!("PATTERN: {}", why.strip_prefix("error: ").unwrap_or(why)))
                    .hint("PATTERN is a regular expression (Rust's regex syntax); -F takes it as plain text")
            })?,
    };
    if args.titles {
        return titles(ctx, &pattern, args.format);
    }
    // As grep: -A and -B say their side, over --context.
    let around = match (args.before.or(args.context), args.after.or(args.context)) {
        (None, None) => None,
        (before, after) => Some((before.unwrap_or(0), after.unwrap_or(0))),
    };
    let now = ctx.clock.now();
    let filter = Filter {
        types: args.types.iter().map(|t| t.name().to_owned()).collect(),
        tool: args.tool.clone(),
        since: args.since.as_deref().map(|w| when("--since", w, now)).transpose()?,
        until: args.until.as_deref().map(|w| when("--until", w, now)).transpose()?,
        compacted: args.compacted,
        failed: args.failed,
        author: super::author(args.author.as_deref())?,
    };
    let store = ctx.open_store()?;
    // Who took part comes with the summaries (the catalogue, a cache file): JSON reads no
    // event beyond those searched.
    let conversations: Vec<(String, Option<String>, Who)> = if args.ids.is_empty() {
        store.summaries()?.into_iter().map(|s| (s.id, s.title, s.who)).collect()
    } else {
        let mut chosen = Vec::new();
        for query in &args.ids {
            ctx.fetch_if_lazy(&store, Some(query))?;
            let s = store.summary(&store.resolve(query)?)?;
            chosen.push((s.id, s.title, s.who));
        }
        chosen
    };
    let text = args.format == Format::Text;
    let mut out = if text && !args.list && !args.count { ctx.ui.paged() } else { crate::cli::ui::Output::stdout() };
    let mut found = false;
    let ids: Vec<String> = conversations.iter().map(|(id, _, _)| id.clone()).collect();
    let mut print = |n: usize, result: search::Found| -> Result<(), CommandError> {
        if result.count == 0 {
            return Ok(());
        }
        found = true;
        let (id, title, who) = &conversations[n];
        let how = found::How { format: args.format, list: args.list, count: args.count, grouped: around.is_some() };
        let who = (!text).then_some(who);
        found::print(out.writer(), &how, (id, title.as_deref(), who), result, &ctx.ui)?;
        Ok(())
    };
    // A failure to print (a closed pipe) stops the search; it is reported after it.
    let mut printed = Ok(());
    // A count or a list of conversations needs no hit built; a list, only the first.
    let mode = match (args.list, args.count, around) {
        (true, _, _) => search::Mode::Any,
        (_, true, _) => search::Mode::Count,
        (_, _, Some((before, after))) => search::Mode::Around { before, after },
        _ => search::Mode::Hits(usize::MAX),
    };
    search::search_all(store.root(), &ids, &pattern, &filter, mode, &mut |n, result| {
        printed = print(n, result);
        Ok(printed.is_ok())
    })?;
    printed?;
    // A lazy store searched whole holds only what was fetched: said, not fetched (which would
    // undo the lazy clone).
    let unfetched = match args.ids.is_empty() {
        true => convo::ops::lazy::unfetched(&store)?.filter(|u| u.count > 0),
        false => None,
    };
    if let Some(u) = &unfetched
        && !text
    {
        let line = serde_json::json!({ "searched": u.held, "not_fetched": u.count, "remote": u.remote });
        writeln!(out.writer(), "{line}")?;
    }
    out.finish()?;
    if let Some(u) = &unfetched
        && text
    {
        let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        ctx.note(&format!(
            "searched {}; {} listed on {} {} not fetched (convo grep --titles searches every title; convo show ID \
             fetches one)",
            plural(u.held, "fetched conversation", "fetched conversations"),
            u.count,
            u.remote,
            if u.count == 1 { "is" } else { "are" },
        ));
    }
    if found { Ok(()) } else { Err(CommandError::new(Kind::NoMatch, "")) }
}

/// `grep --titles`: the conversations whose title matches, the store's and, in a lazy store,
/// the catalog's (see `ops::lazy`).
fn titles(ctx: &Ctx, pattern: &Pattern, format: Format) -> Result<(), CommandError> {
    let store = ctx.open_store()?;
    let mut out = crate::cli::ui::Output::stdout();
    let mut found = false;
    for summary in convo::ops::lazy::summaries(&store)? {
        let Some(title) = summary.title.as_deref().filter(|t| pattern.is_match(t)) else { continue };
        found = true;
        match format {
            Format::Text => writeln!(out.writer(), "{}\t{}", summary.id, convo::render::escape_line(title))?,
            Format::Json => {
                writeln!(out.writer(), "{}", serde_json::json!({ "conversation": summary.id, "title": title }))?
            }
        }
    }
    out.finish()?;
    if found { Ok(()) } else { Err(CommandError::new(Kind::NoMatch, "")) }
}
