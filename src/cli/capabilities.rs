//! What operations need from the outside world, supplied by the CLI: API keys from the
//! environment, a yes/no on the terminal, a spinner while a model works; and the one
//! automatic-compaction path that follows a turn (`append`, `query`).

use convo::event::Event;
use convo::ops::{self, Planned, QueryError, Summarizer, SummaryJob};
use convo::render::thousands;
use convo::store::{Appended, Store};

use super::Ctx;
use super::command_error::CommandError;
use super::ui;

/// The value of environment variable `var` (an API key), read only when a call is made.
pub fn env_key(var: &str) -> Option<String> {
    std::env::var(var).ok()
}

/// Choices for a model summary from the command line.
#[derive(Default)]
pub struct SummaryChoice {
    pub model: Option<String>,
    pub focus: Option<String>,
    /// Skip the question before a large call.
    pub yes: bool,
}

impl Ctx {
    /// [`ops::compact::compact`] with the terminal's question before a large call (unless
    /// `choice.yes`) and a spinner while the model writes.
    pub fn compact(
        &self,
        store: &Store,
        id: &str,
        events: &[Event],
        config: &convo::config::Resolved,
        planned: Planned,
        choice: &SummaryChoice,
    ) -> Result<(Appended, Planned), CommandError> {
        let mut spinner = None;
        let mut confirm = |job: &SummaryJob| {
            choice.yes
                || ui::confirm(&format!(
                    "Send ~{} tokens to {} to summarize?",
                    thousands(job.input_tokens),
                    job.model.name
                )) != Some(false)
        };
        let quiet = self.ui.quiet;
        let mut progress = |job: &SummaryJob, i: usize, n: usize| {
            let message = if n > 1 {
                format!("summarizing with {} ({}/{n})", job.model.name, i + 1)
            } else {
                format!("summarizing with {}", job.model.name)
            };
            match &spinner {
                Some(s) => indicatif::ProgressBar::set_message(s, message),
                None => spinner = ui::spinner(quiet, message),
            }
        };
        let mut summarizer = Summarizer {
            model: choice.model.as_deref(),
            focus: choice.focus.as_deref(),
            key: &env_key,
            confirm: &mut confirm,
            progress: &mut progress,
        };
        let result = ops::compact::compact(store, id, events, config, planned, &mut summarizer, &self.clock);
        if let Some(s) = spinner {
            s.finish_and_clear();
        }
        result.map_err(|e: QueryError| e.into())
    }

    /// After a turn: with `compaction.auto.enabled`, compact when the conversation nears
    /// `model`'s (or llm.model's) context window, and say so unless --quiet. Enabled is
    /// checked first without the conversation's own `config` events, which would cost a
    /// read of every event on each append: `compaction.auto.*` is read from the defaults,
    /// the user file, the store and --config.
    pub fn auto_compact(&self, store: &Store, id: &str, model: Option<&str>) -> Result<(), CommandError> {
        let quick = self.config_quietly(store, &[])?;
        if !quick.config.compaction.auto.enabled {
            return Ok(());
        }
        let config = self.config(store, &store.events(id)?)?;
        let window = convo::llm::resolve_model(&config.config, model).ok().and_then(|m| m.context_window);
        let lock = store.lock()?;
        if let Some((appended, planned)) = ops::compact::auto_compact(store, &lock, id, &config, window, &self.clock)? {
            let c = &planned.prepared.compaction;
            self.note(&format!(
                "[context compacted: turns {}-{}, ~{} -> ~{} tokens]",
                c.from_turn,
                c.to_turn,
                thousands(planned.estimate.before),
                thousands(planned.estimate.after)
            ));
            self.ui.landed(&appended.landed);
        }
        Ok(())
    }
}
