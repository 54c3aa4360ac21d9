//! Who and what produced events: the person whose convo recorded them, the agent (and its
//! version) whose session they were read from, the model that wrote them. All optional extra
//! fields, written by convo (the person, the machine) and by importers (agent, version,
//! model), never sent to a model. Events from before they existed carry none.

use serde_json::Value;

use super::Event;

/// The person whose convo recorded the event, `Name <email>` (see `store::identity`).
pub const PERSON: &str = "person";
/// The machine it was recorded on, when the user opted in.
pub const MACHINE: &str = "machine";
/// The agent whose session it was read from (`interop::AGENT`).
pub const AGENT: &str = "agent";
/// That agent's version, as its session said it.
pub const AGENT_VERSION: &str = "agent_version";
/// The model that wrote it.
pub const MODEL: &str = "model";

/// The people, agents (with their versions) and models of some events, each once, in the
/// order first met.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Who {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub people: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub models: Vec<String>,
}

impl Who {
    pub fn of<'a>(events: impl IntoIterator<Item = &'a Event>) -> Who {
        let mut who = Who::default();
        for e in events {
            who.add(e);
        }
        who
    }

    pub fn add(&mut self, event: &Event) {
        let field = |key: &str| event.extra.get(key).and_then(Value::as_str).filter(|s| !s.is_empty());
        let put = |list: &mut Vec<String>, value: Option<String>| {
            if let Some(value) = value
                && !list.contains(&value)
            {
                list.push(value);
            }
        };
        put(&mut self.people, field(PERSON).map(str::to_owned));
        put(&mut self.agents, agent_of(event));
        // Claude Code marks the lines it made up itself `<synthetic>`: no model wrote them.
        put(&mut self.models, field(MODEL).filter(|m| *m != "<synthetic>").map(str::to_owned));
    }

    pub fn is_empty(&self) -> bool {
        self.people.is_empty() && self.agents.is_empty() && self.models.is_empty()
    }

    /// `Alice <alice@example.com> · claude-code 2.1.3 · claude-opus-4-1`: the parts known.
    pub fn label(&self) -> String {
        [&self.people, &self.agents, &self.models]
            .into_iter()
            .filter(|l| !l.is_empty())
            .map(|l| l.join(", "))
            .collect::<Vec<_>>()
            .join(" · ")
    }
}

/// A `--author` pattern: a regular expression matched, as git matches one, anywhere in
/// `Name <email>`.
#[derive(Debug, Clone)]
pub struct Author(regex::Regex);

impl Author {
    pub fn new(pattern: &str) -> Result<Author, regex::Error> {
        regex::Regex::new(pattern).map(Author)
    }

    pub fn matches(&self, person: &str) -> bool {
        self.0.is_match(person)
    }

    /// Whether `event` was recorded by a person it matches.
    pub fn matches_event(&self, event: &Event) -> bool {
        self.matches_extra(&event.extra)
    }

    pub fn matches_extra(&self, extra: &serde_json::Map<String, Value>) -> bool {
        extra.get(PERSON).and_then(Value::as_str).is_some_and(|p| self.matches(p))
    }
}

/// The agent an event names, with its version: `codex 0.169.0`.
pub fn agent_of(event: &Event) -> Option<String> {
    let field = |key: &str| event.extra.get(key).and_then(Value::as_str).filter(|s| !s.is_empty());
    let agent = field(AGENT)?;
    Some(match field(AGENT_VERSION) {
        Some(version) => format!("{agent} {version}"),
        None => agent.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(extra: serde_json::Value) -> Event {
        Event {
            id: "e".into(),
            ts: "2026-01-01T00:00:00Z".into(),
            kind: crate::event::Kind::Assistant { content: "x".into() },
            extra: extra.as_object().unwrap().clone(),
        }
    }

    #[test]
    fn who_names_each_person_agent_and_model_once_in_order() {
        let events = [
            event(
                serde_json::json!({"person": "A <a@x>", "agent": "codex", "agent_version": "0.169.0", "model": "gpt-5"}),
            ),
            event(
                serde_json::json!({"person": "A <a@x>", "agent": "codex", "agent_version": "0.169.0", "model": "<synthetic>"}),
            ),
            event(serde_json::json!({"person": "B <b@x>", "agent": "claude-code"})),
            event(serde_json::json!({})),
        ];
        let who = Who::of(&events);
        assert_eq!(who.label(), "A <a@x>, B <b@x> · codex 0.169.0, claude-code · gpt-5");
        assert!(Who::of(&events[3..]).is_empty());
        assert_eq!(Who::of(&events[3..]).label(), "");
    }

    #[test]
    fn author_matches_anywhere_in_name_and_email_as_a_regular_expression() {
        let alice = event(serde_json::json!({"person": "Alice Doe <alice@example.com>"}));
        assert!(Author::new("Doe").unwrap().matches_event(&alice));
        assert!(Author::new("^Alice .*example\\.com>$").unwrap().matches_event(&alice));
        assert!(!Author::new("bob").unwrap().matches_event(&alice));
        assert!(!Author::new(".").unwrap().matches_event(&event(serde_json::json!({}))));
        assert!(Author::new("(").is_err());
    }
}
