//! Input that would be dropped or accepted silently is refused, with the store byte for
//! byte as it was: event flags beside data on stdin, a reused call id, an unknown key in
//! `--config`, and a `config set` whose value names what the configuration does not hold.

use crate::common::TestEnv;

fn conversation_with_a_call() -> TestEnv {
    let env = TestEnv::new();
    env.new_conversation("calls");
    env.run(&["append", "--user", "read it"]).ok();
    env.run(&["append", "--tool-call", "fs_read", "--args", r#"{"path":"a"}"#, "--call-id", "c1"]).ok();
    env.run(&["append", "--tool-result", "c1", "--content", "text"]).ok();
    env
}

#[test]
fn an_event_flag_with_data_on_stdin_is_refused() {
    let env = conversation_with_a_call();
    let before = env.snapshot();
    let run = env.run_stdin(&["append", "--user", "y"], "{\"type\":\"user\",\"content\":\"x\"}\n");
    insta::assert_snapshot!(env.transcript(&run), @"
    exit 3
    --- stderr
    error: --user was given and stdin holds input too; append takes one source
    hint: nothing was written; pipe the events alone, or give the flag with stdin from a terminal or </dev/null
    ");
    assert_eq!(env.snapshot(), before);
    // An empty or blank stdin (a script's closed pipe) is no second source.
    env.run_stdin(&["append", "--assistant", "fine"], "\n").ok();
}

#[test]
fn a_call_id_already_in_the_conversation_is_refused() {
    let env = conversation_with_a_call();
    let before = env.snapshot();
    let flag = env.run(&["append", "--tool-call", "grep", "--args", "{}", "--call-id", "c1"]);
    insta::assert_snapshot!(env.transcript(&flag), @"
    exit 3
    --- stderr
    error: --call-id: a tool_call with call_id `c1` is already in this conversation
    hint: nothing was written; call ids are unique in a conversation (leave out --call-id for a new one)
    ");
    let jsonl = env.run_stdin(
        &["append"],
        "{\"type\":\"assistant\",\"content\":\"again\"}\n{\"type\":\"tool_call\",\"call_id\":\"c1\",\"name\":\"grep\",\"arguments\":{}}\n",
    );
    insta::assert_snapshot!(env.transcript(&jsonl), @"
    exit 3
    --- stderr
    error: input line 2, field `call_id`: a tool_call with call_id `c1` is already in this conversation
    hint: nothing was written
    ");
    let twice = env.run_stdin(
        &["append"],
        "{\"type\":\"tool_call\",\"call_id\":\"c2\",\"name\":\"a\",\"arguments\":{}}\n{\"type\":\"tool_call\",\"call_id\":\"c2\",\"name\":\"b\",\"arguments\":{}}\n",
    );
    insta::assert_snapshot!(env.transcript(&twice), @"
    exit 3
    --- stderr
    error: input line 2, field `call_id`: a tool_call with call_id `c2` is already in this conversation
    hint: nothing was written
    ");
    assert_eq!(env.snapshot(), before);
}

#[test]
fn an_unknown_config_flag_key_is_refused_like_config_set() {
    let env = conversation_with_a_call();
    let before = env.snapshot();
    let flag = env.run(&["--config", "nosuch=1", "list"]);
    insta::assert_snapshot!(env.transcript(&flag), @"
    exit 3
    --- stderr
    error: --config: unknown field `nosuch`, expected one of `compaction`, `tools`, `llm`, `providers`, `models`, `trust`, `hooks`, `store`, `prices`, `user`, `share`
    hint: `convo config list` shows every setting and where it comes from
    ");
    let set = env.run(&["config", "set", "nosuch", "1"]);
    assert_eq!(set.code, flag.code, "{}", set.stderr);
    assert_eq!(env.snapshot(), before);
}

#[test]
fn config_set_of_a_profile_that_does_not_exist_is_refused_before_writing() {
    let env = conversation_with_a_call();
    let before = env.snapshot();
    let store = env.run(&["config", "set", "--shared", "compaction.default_profile", r#""nosuch""#]);
    insta::assert_snapshot!(env.transcript(&store), @r#"
    exit 3
    --- stderr
    error: compaction.default_profile = "nosuch": unknown profile `nosuch` (profiles: default, light, strip, summarize)
    hint: nothing was written; profiles live in config under [compaction.profiles.NAME]
    "#);
    let user = env.run(&["config", "set", "--user", "compaction.auto.profile", "nosuch"]);
    insta::assert_snapshot!(env.transcript(&user), @r#"
    exit 3
    --- stderr
    error: compaction.auto.profile = "nosuch": unknown profile `nosuch` (profiles: default, light, strip, summarize)
    hint: nothing was written; profiles live in config under [compaction.profiles.NAME]
    "#);
    assert!(!env.home().join(".config/convo/config.toml").exists());
    assert_eq!(env.snapshot(), before);
    // A profile defined first can then be named.
    env.run(&["config", "set", "compaction.profiles.lean.reasoning", "strip"]).ok();
    env.run(&["config", "set", "compaction.default_profile", "lean"]).ok();
    env.run(&["compact", "--dry-run"]).ok();
}
