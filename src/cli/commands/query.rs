use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use convo::compaction::plan::Request;
use convo::llm::client::LlmError;
use convo::llm::client::{Delta, Endpoint, Secret};
use convo::ops::{self, QueryError};

use crate::cli::Ctx;
use crate::cli::command_error::{CommandError, Kind};

/// Send a message with the conversation to an LLM and record both sides
///
/// The projected (compacted) view plus MESSAGE is sent to the model; the answer streams to
/// stdout as it arrives and is appended with the message as one commit. If the call fails
/// nothing is written; if the stream is cut (or Ctrl-C), what arrived is kept, marked
/// interrupted. With compaction.auto.enabled the conversation is compacted afterwards when it
/// nears the model's context window.
#[derive(clap::Args)]
pub struct Args {
    /// Compact before sending, with PROFILE or compaction.default_profile
    #[arg(long, value_name = "PROFILE", num_args = 0..=1, default_missing_value = "", require_equals = true)]
    compact: Option<String>,
    /// The model, as provider/model [default: llm.model]
    #[arg(long, short)]
    model: Option<String>,
    /// [ID] MESSAGE: the conversation (default: the active one), then the message (`-`
    /// reads it from stdin)
    #[arg(value_name = "ARGS", num_args = 1..=2, required = true)]
    args: Vec<String>,
}

/// The endpoint for `model`, with its key read from the environment now.
pub fn endpoint(model: &convo::llm::Model) -> Result<Endpoint, CommandError> {
    let key = match &model.api_key_env {
        None => None,
        Some(var) => match std::env::var(var) {
            Ok(key) if !key.is_empty() => Some(Secret::new(key)),
            _ => {
                return Err(CommandError::input(format!("{var} is not set: it holds the key for {}", model.name))
                    .hint(format!("export {var}=..., or use a local model such as ollama/llama3.2")));
            }
        },
    };
    Ok(Endpoint {
        label: model.name.clone(),
        kind: model.kind,
        base_url: model.base_url.clone(),
        key,
        timeout: Duration::from_secs(model.timeout_secs),
    })
}

/// A failed LLM call: exit status 6, and nothing was written.
pub fn query_error(e: QueryError) -> CommandError {
    match e {
        QueryError::Llm(e @ LlmError::Redirect { .. }) => CommandError::new(Kind::Remote, e.to_string())
            .hint("nothing was written; if you trust the new address, make it the provider's base_url"),
        QueryError::Llm(e) => CommandError::new(Kind::Remote, e.to_string()).hint("nothing was written"),
        QueryError::Ops(e) => e.into(),
    }
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let (query, message) = match args.args.as_slice() {
        [id, message] => (Some(id.clone()), message.clone()),
        [message] => (None, message.clone()),
        _ => return Err(CommandError::input("expected [ID] MESSAGE")),
    };
    let message = if message == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text).map_err(|e| CommandError::input(format!("stdin: {e}")))?;
        text
    } else {
        message
    };
    if message.trim().is_empty() {
        return Err(CommandError::input("the message is empty").hint("nothing was written"));
    }
    let store = ctx.open_store()?;
    let id = store.resolve_or_active(query.as_deref())?;
    let events = store.events(&id)?;
    let config = ctx.config(&store, &events)?;
    let model = convo::llm::resolve_model(&config.config, args.model.as_deref()).map_err(|m| {
        CommandError::input(m.to_string()).hint("models are named provider/model; providers live in config")
    })?;
    let endpoint = endpoint(&model)?;

    if let Some(profile) = args.compact {
        let request = Request { profile: Some(profile).filter(|p| !p.is_empty()), ..Default::default() };
        let planned = ops::plan_compaction(&events, &config, &request, &ctx.clock)?;
        let options = super::compact::SummaryOptions { model: args.model.clone(), focus: None, yes: false };
        let (appended, _) = super::compact::finish(ctx, &store, &id, &events, &config, planned, &options)?;
        ctx.note(&format!("[{id} {}] {}", super::short_hash(&appended.commit), appended.subject));
    }

    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        // A second Ctrl-C after the first is ignored: the first already stops the stream.
        let _ = ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst));
    }
    let mut stdout = std::io::stdout();
    let mut stderr = std::io::stderr();
    let theme = ctx.ui.theme;
    let quiet = ctx.ui.quiet;
    let mut on_delta = |delta: Delta| match delta {
        // The model's text is untrusted too: its control characters show escaped.
        Delta::Text(text) => {
            let _ = stdout.write_all(convo::render::escape(text).as_bytes());
            let _ = stdout.flush();
        }
        Delta::Reasoning(text) if !quiet => {
            let _ = write!(stderr, "{}", theme.dim(&convo::render::escape(text)));
        }
        Delta::Reasoning(_) => {}
    };
    let queried =
        ops::query(&store, &id, message, &model, &endpoint, &mut on_delta, &|| stop.load(Ordering::SeqCst), &ctx.clock)
            .map_err(query_error)?;
    writeln!(std::io::stdout())?;
    if queried.reply.interrupted {
        ctx.note("warning: the answer was interrupted; what arrived is kept, marked interrupted");
    }
    ctx.note(&format!("[{id} {}] {}", super::short_hash(&queried.appended.commit), queried.appended.subject));
    ctx.report_commit(queried.appended.gc, queried.appended.warning.as_deref());

    let lock = store.lock()?;
    let events = store.events(&id)?;
    let config = ctx.config(&store, &events)?;
    if let Some((appended, planned)) = ops::auto_compact(&store, &lock, &id, &config, model.context_window, &ctx.clock)?
    {
        let c = &planned.prepared.compaction;
        eprintln!(
            "[context compacted: turns {}-{}, ~{} -> ~{} tokens]",
            c.from_turn,
            c.to_turn,
            convo::render::thousands(planned.estimate.before),
            convo::render::thousands(planned.estimate.after)
        );
        ctx.report_commit(appended.gc, appended.warning.as_deref());
    }
    Ok(())
}
