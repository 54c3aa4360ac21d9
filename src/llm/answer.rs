//! What providers answer, as far as convo reads it: the JSON of a whole answer and of each
//! server-sent event, per wire format.
//!
//! Servers that speak a dialect of these protocols differ in what they leave out or send as
//! `null`, so every field is optional and one of the wrong type reads as absent (an element
//! of a list that is not what it should be reads as an empty one): only the JSON itself must
//! be well formed. The client decides what a missing piece means.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::event::Usage;

/// A field that reads as `None` when it is missing, `null` or of the wrong type.
fn lenient<'de, D: Deserializer<'de>, T: DeserializeOwned>(d: D) -> Result<Option<T>, D::Error> {
    Ok(serde_json::from_value(Value::deserialize(d)?).ok())
}

/// A finish reason: absent or `null` is none; a string is itself; anything else is a reason
/// with no name (the answer is still whole).
fn reason<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Null => None,
        Value::String(s) => Some(s),
        _ => Some(String::new()),
    })
}

/// A list whose elements of the wrong shape read as their default; not a list reads as empty.
fn lenient_list<'de, D: Deserializer<'de>, T: DeserializeOwned + Default>(d: D) -> Result<Vec<T>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Array(items) => items.into_iter().map(|v| serde_json::from_value(v).unwrap_or_default()).collect(),
        _ => Vec::new(),
    })
}

/// Parse one piece of JSON as `T`; JSON of another shape reads as `T::default()`, JSON that
/// does not parse is an error.
pub fn parse<T: DeserializeOwned + Default>(text: &str) -> Result<T, serde_json::Error> {
    match serde_json::from_str(text) {
        Ok(t) => Ok(t),
        Err(e) if e.is_data() => Ok(T::default()),
        Err(e) => Err(e),
    }
}

// OpenAI Chat Completions: a whole answer and a stream chunk share one shape.

/// An answer, or (with `delta` in place of `message`) one chunk of a streamed answer.
#[derive(Debug, Default, Deserialize)]
pub struct OpenaiChunk {
    /// A failure reported inside a 200 stream; shown as it came.
    #[serde(default)]
    pub error: Option<Value>,
    /// The usage object as sent (read with [`openai_usage`]).
    #[serde(default, deserialize_with = "object")]
    pub usage: Option<Value>,
    #[serde(default, deserialize_with = "lenient_list")]
    pub choices: Vec<OpenaiChoice>,
}

/// A JSON object, kept as it is; anything else reads as absent.
fn object<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Ok(Some(Value::deserialize(d)?).filter(Value::is_object))
}

/// A count at `path` in `usage`, when it is a number.
fn count(usage: &Value, path: &[&str]) -> Option<u64> {
    path.iter().try_fold(usage, |v, key| v.get(key))?.as_u64()
}

/// OpenAI's usage, normalised: `prompt_tokens` includes `prompt_tokens_details.cached_tokens`,
/// which become the cache read; `completion_tokens_details.reasoning_tokens` where sent.
pub fn openai_usage(usage: &Value) -> Usage {
    let prompt = count(usage, &["prompt_tokens"]);
    let cached = count(usage, &["prompt_tokens_details", "cached_tokens"]);
    Usage {
        input_tokens: prompt.map(|p| p.saturating_sub(cached.unwrap_or(0))),
        output_tokens: count(usage, &["completion_tokens"]),
        cache_read_tokens: cached,
        cache_write_tokens: None,
        reasoning_tokens: count(usage, &["completion_tokens_details", "reasoning_tokens"]),
    }
}

/// Anthropic's usage, normalised: its `input_tokens` leaves out `cache_read_input_tokens`
/// and `cache_creation_input_tokens`, as convo's does.
pub fn anthropic_usage(usage: &Value) -> Usage {
    Usage {
        input_tokens: count(usage, &["input_tokens"]),
        output_tokens: count(usage, &["output_tokens"]),
        cache_read_tokens: count(usage, &["cache_read_input_tokens"]),
        cache_write_tokens: count(usage, &["cache_creation_input_tokens"]),
        reasoning_tokens: None,
    }
}

#[derive(Debug, Default, Deserialize)]
pub struct OpenaiChoice {
    /// A whole answer's message.
    #[serde(default, deserialize_with = "lenient")]
    pub message: Option<OpenaiMessage>,
    /// A stream chunk's piece of the message.
    #[serde(default, deserialize_with = "lenient")]
    pub delta: Option<OpenaiMessage>,
    /// Set (not `null`): the answer is whole. `length`: cut off at `max_tokens`.
    /// (Any value not a string reads as an unnamed reason.)
    #[serde(default, deserialize_with = "reason")]
    pub finish_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub struct OpenaiMessage {
    #[serde(default, deserialize_with = "lenient")]
    pub content: Option<String>,
    /// What reasoning models served through OpenAI-compatible servers think aloud.
    #[serde(default, deserialize_with = "lenient")]
    pub reasoning_content: Option<String>,
    #[serde(default, deserialize_with = "lenient_list")]
    pub tool_calls: Vec<OpenaiToolCall>,
}

/// A tool call, or in a stream a piece of one: pieces with the same `index` are concatenated.
#[derive(Debug, Default, Deserialize)]
pub struct OpenaiToolCall {
    #[serde(default, deserialize_with = "lenient")]
    pub index: Option<u64>,
    #[serde(default, deserialize_with = "lenient")]
    pub id: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub function: Option<OpenaiFunction>,
}

#[derive(Debug, Default, Deserialize)]
pub struct OpenaiFunction {
    #[serde(default, deserialize_with = "lenient")]
    pub name: Option<String>,
    /// JSON text.
    #[serde(default, deserialize_with = "lenient")]
    pub arguments: Option<String>,
}

// Anthropic Messages.

/// A whole answer.
#[derive(Debug, Default, Deserialize)]
pub struct AnthropicMessage {
    #[serde(default, deserialize_with = "lenient_list_or_none")]
    pub content: Option<Vec<AnthropicBlock>>,
    /// The usage object as sent (read with [`anthropic_usage`]).
    #[serde(default, deserialize_with = "object")]
    pub usage: Option<Value>,
    /// `max_tokens`: cut off at the cap.
    #[serde(default, deserialize_with = "lenient")]
    pub stop_reason: Option<String>,
}

/// `None` when the field is not a list, else its elements read as [`lenient_list`] does.
fn lenient_list_or_none<'de, D: Deserializer<'de>, T: DeserializeOwned + Default>(
    d: D,
) -> Result<Option<Vec<T>>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Array(items) => Some(items.into_iter().map(|v| serde_json::from_value(v).unwrap_or_default()).collect()),
        _ => None,
    })
}

/// A content block of an answer, or the start of one in a stream.
#[derive(Debug, Default, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AnthropicBlock {
    Text {
        #[serde(default, deserialize_with = "lenient")]
        text: Option<String>,
    },
    Thinking {
        #[serde(default, deserialize_with = "lenient")]
        thinking: Option<String>,
    },
    ToolUse {
        #[serde(default, deserialize_with = "lenient")]
        id: Option<String>,
        #[serde(default, deserialize_with = "lenient")]
        name: Option<String>,
        /// The arguments; a stream sends `{}` here and the JSON text in `input_json_delta`s.
        #[serde(default)]
        input: Option<Value>,
    },
    /// Any other type (redacted thinking, server tools, …): not read.
    #[default]
    #[serde(other)]
    Other,
}

/// One event of a streamed answer, by its `type`.
#[derive(Debug, Default, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AnthropicEvent {
    MessageStart {
        #[serde(default, deserialize_with = "lenient")]
        message: Option<AnthropicMessage>,
    },
    ContentBlockStart {
        #[serde(default, deserialize_with = "lenient")]
        content_block: Option<AnthropicBlock>,
    },
    ContentBlockDelta {
        #[serde(default, deserialize_with = "lenient")]
        delta: Option<AnthropicDelta>,
    },
    MessageDelta {
        #[serde(default, deserialize_with = "lenient")]
        delta: Option<AnthropicMessageDelta>,
        #[serde(default, deserialize_with = "object")]
        usage: Option<Value>,
    },
    MessageStop,
    Error {
        #[serde(default, deserialize_with = "lenient")]
        error: Option<AnthropicError>,
    },
    /// `ping`, `content_block_stop`, and types added later: nothing to read.
    #[default]
    #[serde(other)]
    Other,
}

/// What a `message_delta` changes of the message: why it stopped.
#[derive(Debug, Default, Deserialize)]
pub struct AnthropicMessageDelta {
    #[serde(default, deserialize_with = "lenient")]
    pub stop_reason: Option<String>,
}

/// A piece of the content block last started.
#[derive(Debug, Default, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AnthropicDelta {
    TextDelta {
        #[serde(default, deserialize_with = "lenient")]
        text: Option<String>,
    },
    ThinkingDelta {
        #[serde(default, deserialize_with = "lenient")]
        thinking: Option<String>,
    },
    /// A piece of a tool call's arguments, as JSON text.
    InputJsonDelta {
        #[serde(default, deserialize_with = "lenient")]
        partial_json: Option<String>,
    },
    #[default]
    #[serde(other)]
    Other,
}

#[derive(Debug, Default, Deserialize)]
pub struct AnthropicError {
    #[serde(default, deserialize_with = "lenient")]
    pub message: Option<String>,
}

// Either provider's error body (non-2xx answers).

/// `{"error": {"message": ...}}`, `{"error": ...}` or `{"message": ...}`.
#[derive(Debug, Default, Deserialize)]
pub struct ErrorBody {
    #[serde(default)]
    pub error: Option<ErrorField>,
    #[serde(default)]
    pub message: Option<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum ErrorField {
    Object { message: Value },
    Other(Value),
}

impl ErrorBody {
    /// The most specific message it holds: a string as it is, anything else as JSON.
    pub fn message(self) -> Option<String> {
        let value = match self.error {
            Some(ErrorField::Object { message } | ErrorField::Other(message)) => message,
            None => self.message?,
        };
        Some(match value {
            Value::String(s) => s,
            other => other.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_chunks_read_what_is_there_and_ignore_the_rest() {
        let chunk: OpenaiChunk = parse(
            r#"{"choices":[{"index":0,"delta":{"content":"hi","tool_calls":[7,{"index":2,"function":{"name":"f"}}]},
                "finish_reason":"stop"}],"usage":null}"#,
        )
        .unwrap();
        let choice = &chunk.choices[0];
        let delta = choice.delta.as_ref().unwrap();
        assert_eq!(delta.content.as_deref(), Some("hi"));
        assert!(choice.finish_reason.is_some());
        assert!(chunk.usage.is_none() && chunk.error.is_none());
        assert_eq!(delta.tool_calls.len(), 2);
        assert!(delta.tool_calls[0].index.is_none(), "an element of the wrong shape reads as empty");
        assert_eq!(delta.tool_calls[1].function.as_ref().unwrap().name.as_deref(), Some("f"));

        let chunk: OpenaiChunk =
            parse(r#"{"choices":[{"delta":{"content":null},"finish_reason":null}],"usage":{"prompt_tokens":"x"}}"#)
                .unwrap();
        assert!(chunk.choices[0].delta.as_ref().unwrap().content.is_none());
        assert!(chunk.choices[0].finish_reason.is_none());
        assert_eq!(openai_usage(&chunk.usage.unwrap()).input_tokens, None, "the wrong type reads as absent");
        assert!(parse::<OpenaiChunk>(r#"{"choices": 7}"#).unwrap().choices.is_empty());
        assert!(parse::<OpenaiChunk>("[1]").unwrap().choices.is_empty(), "another shape reads as empty");
        assert!(parse::<OpenaiChunk>("{not json").is_err());
    }

    #[test]
    fn anthropic_events_by_type() {
        let event = |text: &str| parse::<AnthropicEvent>(text).unwrap();
        match event(r#"{"type":"message_start","message":{"usage":{"input_tokens":40}}}"#) {
            AnthropicEvent::MessageStart { message: Some(m) } => {
                assert_eq!(anthropic_usage(&m.usage.unwrap()).input_tokens, Some(40))
            }
            other => panic!("{other:?}"),
        }
        match event(
            r#"{"type":"content_block_start","content_block":{"type":"tool_use","id":"t","name":"n","input":{}}}"#,
        ) {
            AnthropicEvent::ContentBlockStart { content_block: Some(AnthropicBlock::ToolUse { id, name, .. }) } => {
                assert_eq!((id.as_deref(), name.as_deref()), (Some("t"), Some("n")))
            }
            other => panic!("{other:?}"),
        }
        match event(r#"{"type":"content_block_delta","delta":{"type":"input_json_delta","partial_json":"{\"a\""}}"#) {
            AnthropicEvent::ContentBlockDelta { delta: Some(AnthropicDelta::InputJsonDelta { partial_json }) } => {
                assert_eq!(partial_json.as_deref(), Some("{\"a\""))
            }
            other => panic!("{other:?}"),
        }
        match event(r#"{"type":"error","error":{"type":"overloaded_error","message":"busy"}}"#) {
            AnthropicEvent::Error { error: Some(e) } => assert_eq!(e.message.as_deref(), Some("busy")),
            other => panic!("{other:?}"),
        }
        assert!(matches!(event(r#"{"type":"message_stop"}"#), AnthropicEvent::MessageStop));
        assert!(matches!(event(r#"{"type":"ping"}"#), AnthropicEvent::Other));
        assert!(matches!(event(r#"{"no":"type"}"#), AnthropicEvent::Other));
        assert!(matches!(
            event(r#"{"type":"content_block_delta","delta":{"type":"signature_delta"}}"#),
            AnthropicEvent::ContentBlockDelta { delta: Some(AnthropicDelta::Other) }
        ));
    }

    #[test]
    fn usage_is_normalised_and_unknown_stays_absent() {
        let usage = |text: &str| serde_json::from_str::<Value>(text).unwrap();
        // llama.cpp's two endpoints, one prompt of 1,047 tokens, 1,028 of them cached.
        let openai = openai_usage(&usage(
            r#"{"prompt_tokens":1047,"completion_tokens":20,"prompt_tokens_details":{"cached_tokens":1028}}"#,
        ));
        let anthropic =
            anthropic_usage(&usage(r#"{"input_tokens":19,"cache_read_input_tokens":1028,"output_tokens":20}"#));
        assert_eq!(openai, anthropic);
        assert_eq!(openai.prompt_tokens(), Some(1047));
        let cached = anthropic_usage(&usage(r#"{"input_tokens":5,"cache_creation_input_tokens":100}"#));
        assert_eq!(
            (cached.cache_write_tokens, cached.prompt_tokens(), cached.output_tokens),
            (Some(100), Some(105), None)
        );
        let reasoning =
            openai_usage(&usage(r#"{"completion_tokens":50,"completion_tokens_details":{"reasoning_tokens":30}}"#));
        assert_eq!((reasoning.reasoning_tokens, reasoning.input_tokens), (Some(30), None));
        assert!(openai_usage(&usage("{}")).is_empty());
        assert_eq!(openai_usage(&usage("{}")).prompt_tokens(), None);
    }

    #[test]
    fn error_bodies_give_their_most_specific_message() {
        let message = |text: &str| parse::<ErrorBody>(text).unwrap().message();
        assert_eq!(message(r#"{"error":{"message":"slow down","type":"x"}}"#).as_deref(), Some("slow down"));
        assert_eq!(message(r#"{"error":"plain"}"#).as_deref(), Some("plain"));
        assert_eq!(message(r#"{"error":{"code":5}}"#).as_deref(), Some(r#"{"code":5}"#));
        assert_eq!(message(r#"{"message":3}"#).as_deref(), Some("3"));
        assert_eq!(message(r#"{"other":1}"#), None);
    }
}
