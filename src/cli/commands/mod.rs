//! One module per subcommand: an `Args` struct and a `run` function that parses, calls the
//! library, and prints.

pub mod append;
pub mod clone;
pub mod compact;
pub mod config;
pub mod diff;
pub mod export;
pub mod fetch;
pub mod fork;
pub mod fsck;
pub mod generate_docs;
pub mod grep;
pub mod hook;
pub mod import;
pub mod init;
pub mod list;
pub mod log;
pub mod mcp;
pub mod new;
pub mod private;
pub mod pull;
pub mod push;
pub mod query;
pub mod redact;
pub mod remote;
pub mod rename;
pub mod restore;
pub mod resume;
pub mod rm;
pub mod serve;
pub mod share;
pub mod show;
pub mod status;
pub mod switch;
pub mod sync;
pub mod usage;
pub mod watch;

/// `--format` for commands whose output scripts read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// The first seven hex digits, as git abbreviates.
pub fn short_hash(id: &impl std::fmt::Display) -> String {
    id.to_string().chars().take(7).collect()
}

/// An `--author` value: a regular expression matched anywhere in `Name <email>`.
pub fn author(
    pattern: Option<&str>,
) -> Result<Option<convo::event::who::Author>, crate::cli::command_error::CommandError> {
    pattern
        .map(|p| {
            convo::event::who::Author::new(p).map_err(|e| {
                // regex's message draws the pattern over several lines; its last says why.
                let message = e.to_string();
                let why = message.lines().last().unwrap_or_default().trim_start_matches("error: ").to_owned();
                crate::cli::command_error::CommandError::input(format!(
                    "--author {}: not a regular expression ({why})",
                    convo::render::escape_line(p)
                ))
            })
        })
        .transpose()
}

/// A `--since`/`--until` value (see [`convo::ops::search::parse_when`]): a time ago, a date
/// or an RFC 3339 time.
pub fn when(
    flag: &str,
    text: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<chrono::DateTime<chrono::Utc>, crate::cli::command_error::CommandError> {
    convo::ops::search::parse_when(text, now).map_err(|e| {
        crate::cli::command_error::CommandError::input(format!("{flag} {text}: {e}"))
            .hint("e.g. --since 2h, --since 3days, --since 2026-11-01")
    })
}

/// `push --dry-run` and `sync --dry-run`: the plan on stdout, then the secret scan's
/// refusal as the push would say it (exit 3), unless `allow_secrets`.
pub fn dry_run(
    ctx: &crate::cli::Ctx,
    store: &convo::store::Store,
    remote: &str,
    allow_secrets: bool,
    syncing: bool,
) -> Result<(), crate::cli::command_error::CommandError> {
    let plan = convo::ops::sync::plan(store, remote, ctx.share_default()?)?;
    let titles = |id: &str| store.meta(id).ok().and_then(|m| m.title);
    let mut out = crate::cli::ui::Output::stdout();
    convo::render::pull::plan(out.writer(), remote, (plan.theirs, &plan.outgoing, &plan.incoming), &titles, syncing)?;
    convo::render::pull::private(out.writer(), remote, &plan.private, &titles)?;
    out.finish()?;
    if !plan.findings.is_empty() && !allow_secrets {
        return Err(convo::sync::SyncError::Secrets { secrets: plan.secrets, findings: plan.findings }.into());
    }
    Ok(())
}

/// `private` and `share`: make the conversations `queries` name private or shared, and say
/// which changed.
pub fn choose_sharing(
    ctx: &crate::cli::Ctx,
    queries: &[String],
    private: bool,
) -> Result<(), crate::cli::command_error::CommandError> {
    let store = ctx.open_store()?;
    let (ids, changed) = convo::ops::share::choose(&store, queries, private)?;
    let what = if private { "private" } else { "shared" };
    for id in &ids {
        let already = if changed.contains(id) { "" } else { " already" };
        ctx.ui.status(&format!("{id} is{already} {what}"));
    }
    Ok(())
}
