use convo::ops::project;
use convo::render;

use super::Format;
use crate::cli::Ctx;
use crate::cli::command_error::CommandError;
use crate::cli::ui::Output;

/// List conversations: id, title, turns, events, estimated tokens, last update
///
/// The active conversation is marked with `*`. Ids are shown by their first 8 characters, which
/// convo makes unique in the store (more where an older or pulled id needs them), the shortest
/// unique prefix highlighted; any unique prefix names a conversation. A subagent's conversation (`└`) and a
/// fork (`⑂`) follow the one they came from, indented. Lines fit the terminal (or `COLUMNS`):
/// titles are cut and the least useful columns dropped; piped with no `COLUMNS`, nothing is
/// cut. Token counts are estimates (characters / 4). A conversation made private (`convo
/// private`: no push sends it) shows `[private]` before its title (`"private": true` in
/// JSON); which others a push leaves out under `share.default` is `convo push --dry-run`'s
/// to say, as it depends on the remote.
///
/// `--here` lists the conversations of the repository the current directory is in: those
/// whose session ran in a clone of it, matched by its remote URL (https, ssh and `host:path`
/// spellings alike), so sessions captured on another machine or at another path count too;
/// by the repository's path when it has no remote (or the session recorded none). Outside
/// a repository, those that ran in the directory or below it. Subagents and forks of a
/// listed conversation are listed with it.
#[derive(clap::Args)]
pub struct Args {
    /// Output format; `json` is an array of objects for scripts (whole ids, `subagent_of`,
    /// `forked_from`, where the session ran: `cwd`, `branch`, `remote`, and `project`: the
    /// remote as `usage --by project` names it, a fork's its parent's; who took part:
    /// `people`, `agents`, `models`)
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Only the conversations of the current directory's repository
    #[arg(long, conflicts_with = "project")]
    here: bool,
    /// Only the conversations of DIR's repository (as --here run in DIR)
    #[arg(long, value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    project: Option<std::path::PathBuf>,
    /// A column of the tokens each conversation's model calls used, as recorded (`convo
    /// usage` has them by kind and cost)
    #[arg(long)]
    usage: bool,
    /// Only conversations a person matching PATTERN (a regular expression, matched anywhere in
    /// `Name <email>`) recorded an event in or committed to
    #[arg(long, value_name = "PATTERN")]
    author: Option<String>,
    /// Only the conversations made private (`convo private`), which no push sends
    #[arg(long)]
    private: bool,
}

/// What an empty store's `list` suggests: the three ways conversations arrive. The agents
/// `watch` follows are named from its registry, so a new one is never left out.
fn begin() -> [String; 3] {
    let titles: Vec<&str> = convo::agents::ALL.iter().map(|a| a.title()).collect();
    let agents = match titles.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    };
    [
        "no conversations yet: `convo new` starts one".into(),
        format!("`convo watch` imports your {agents} sessions as they are written"),
        "`convo clone URL` copies a store you keep elsewhere".into(),
    ]
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let author = super::author(args.author.as_deref())?;
    // Before its first write the default store is not there: listed as the empty store it is.
    let store = ctx.open_store_if_made()?;
    let dir = match (args.here, args.project) {
        (true, _) => Some(std::env::current_dir()?),
        (false, dir) => dir,
    };
    let summaries = match &store {
        // A lazy store lists what its hub's catalog names besides what it fetched.
        Some(store) => convo::ops::lazy::summaries(store)?,
        None => Vec::new(),
    };
    let empty = summaries.is_empty();
    // Shortest prefixes unique in the whole store, not only among those listed.
    let ids = render::ShortIds::new(summaries.iter().map(|s| s.id.clone()));
    let projects = project::names(&summaries);
    let summaries = match &dir {
        Some(dir) => project::within(summaries, &project::Scope::of(dir)?),
        None => summaries,
    };
    let summaries = match (&author, &store) {
        (Some(author), Some(store)) => convo::ops::who::conversations_by(store, summaries, author)?,
        _ => summaries,
    };
    let private = match &store {
        Some(store) => store.sharing()?.private,
        None => Default::default(),
    };
    let mut summaries = summaries;
    if args.private {
        summaries.retain(|s| private.contains(&s.id));
    }
    if empty {
        // A first `list` is where a new user looks; stdout stays empty for scripts.
        for hint in begin() {
            ctx.ui.status(&format!("hint: {hint}"));
        }
    }
    let active = match &store {
        Some(store) => store.active()?,
        None => None,
    };
    // Input, output and cache tokens together, as each conversation's events recorded them.
    let used: Option<std::collections::HashMap<String, u64>> = match (args.usage, &store) {
        (false, _) => None,
        (true, None) => Some(Default::default()),
        (true, Some(store)) => Some(
            store
                .usage_tallies()?
                .into_iter()
                .map(|(id, tally)| {
                    let u = tally.total();
                    let sum = [u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens];
                    (id, sum.iter().flatten().sum())
                })
                .collect(),
        ),
    };
    let mut out = Output::stdout();
    match args.format {
        Format::Text => {
            let (width, theme) = (ctx.ui.width, ctx.ui.theme);
            for s in summaries.iter_mut().filter(|s| private.contains(&s.id)) {
                s.title = Some(match s.title.take() {
                    Some(title) => format!("[private] {title}"),
                    None => "[private]".to_owned(),
                });
            }
            render::list(out.writer(), &summaries, active.as_deref(), &ids, width, theme, used.as_ref())?
        }
        Format::Json => {
            let rows: Vec<serde_json::Value> = summaries
                .iter()
                .map(|s| {
                    let mut row = serde_json::to_value(s).unwrap_or_default();
                    row["project"] = projects.get(&s.id).cloned().flatten().into();
                    row["active"] = serde_json::Value::Bool(active.as_deref() == Some(s.id.as_str()));
                    row["private"] = serde_json::Value::Bool(private.contains(&s.id));
                    // `tokens` is the raw events' chars/4: list reads no event to calibrate it.
                    row["tokens_basis"] = serde_json::Value::String("chars/4".into());
                    if let Some(used) = &used {
                        row["tokens_used"] = used.get(&s.id).copied().unwrap_or(0).into();
                    }
                    let who = &s.who;
                    (row["people"], row["agents"], row["models"]) =
                        (who.people.clone().into(), who.agents.clone().into(), who.models.clone().into());
                    row
                })
                .collect();
            serde_json::to_writer_pretty(out.writer(), &rows).map_err(std::io::Error::from)?;
            writeln!(out.writer())?;
        }
    }
    out.finish()?;
    Ok(())
}
