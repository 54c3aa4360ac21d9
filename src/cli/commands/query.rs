use convo::event::outline::Outlined;
use convo::ops::plan::Conversation;
use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use convo::llm::client::Delta;
use convo::ops;
use convo::ops::plan::Request;

use crate::cli::Ctx;
use crate::cli::capabilities::{SummaryChoice, env_key};
use crate::cli::command_error::CommandError;

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
    let endpoint = ops::query::endpoint(&model, &env_key)?;

    if let Some(profile) = args.compact {
        let outlined = Outlined::of(&events);
        let conversation = Conversation::full(&outlined, &events);
        let request = Request { profile: Some(profile).filter(|p| !p.is_empty()), ..Default::default() };
        let planned = ops::compact::plan_compaction(conversation, &config, &request, &ctx.clock)?;
        let choice = SummaryChoice { model: args.model.clone(), ..Default::default() };
        let (appended, _) = ctx.compact(&store, &id, conversation, &config, planned, &choice)?;
        ctx.ui.committed(Some(&id), &appended);
    }

    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        // A second Ctrl-C after the first is ignored: the first already stops the stream.
        let _ = ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst));
    }
    let mut stdout = ctx.ui.stdout();
    let mut stderr = ctx.ui.stderr();
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
    let mut apply = ctx.automatic(&store)?;
    let mut on_step = |step: ops::query::Step| match step {
        ops::query::Step::Compacted(compacted) => ctx.report_automatic(*compacted),
        ops::query::Step::Resending => {
            ctx.note("the server found the conversation over its context: compacted, sending again")
        }
    };
    let stopped = || stop.load(Ordering::SeqCst);
    let queried = ops::query::ask(
        &store,
        &id,
        message,
        &model,
        &endpoint,
        &mut apply,
        &mut on_delta,
        &mut on_step,
        &stopped,
        &ctx.clock,
    )?;
    writeln!(ctx.ui.stdout())?;
    if queried.reply.interrupted {
        ctx.ui.warning("the answer was interrupted; what arrived is kept, marked interrupted");
    }
    if queried.reply.truncated() {
        ctx.ui.warning(&format!(
            "the answer was cut off at max_tokens {} (finish_reason {:?}); it is kept, marked so",
            model.max_output_tokens,
            queried.reply.finish_reason.as_deref().unwrap_or_default(),
        ));
        ctx.ui.hint(&format!("raise models.\"{}\".max_output_tokens for longer answers", model.name));
    }
    ctx.ui.committed(Some(&id), &queried.appended);

    ctx.auto_compact(&store, &id, Some(&model.name))
}
