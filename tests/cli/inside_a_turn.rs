//! Compaction inside a turn (agent sessions: one prompt, then dozens of tool calls):
//! event-granular ranges, `--keep-recent-tools`, micro-compaction with exempt tools,
//! truncation, `--keep-first`, and bounds that leave nothing to do.

use crate::common::TestEnv;
use crate::common::sessions::{append_events, heavy_tail_session, reading_session};

/// Tool result `i`: `lines` numbered lines.
fn output(i: usize, lines: usize) -> String {
    (0..lines).map(|l| format!("out {i}.{l} {}", "x".repeat(40))).collect::<Vec<_>>().join("\n")
}

/// One turn of an agent at work: a prompt, then `calls` tool calls (a TodoWrite first),
/// each followed by its result and a line of assistant text, then a final answer.
fn agent_session(env: &TestEnv, calls: usize) -> String {
    let id = env.new_conversation("agent");
    let mut lines = vec![
        serde_json::json!({"type": "system", "content": "You are a coding agent."}),
        serde_json::json!({"type": "user", "content": "Fix the flaky login test."}),
        serde_json::json!({"type": "tool_call", "call_id": "todo", "name": "TodoWrite",
            "arguments": {"todos": [{"content": "find the flake ".repeat(20), "status": "in_progress"}]}}),
        serde_json::json!({"type": "tool_result", "call_id": "todo", "content": "todos saved ".repeat(100)}),
    ];
    for i in 0..calls {
        lines.push(serde_json::json!({"type": "tool_call", "call_id": format!("c{i}"), "name": "Read",
            "arguments": {"file_path": format!("src/f{i}.rs")}}));
        // Every other result is big (40 lines, ~2 KB), the rest small (one line, under the
        // default profile's 50 bytes).
        let n = if i % 2 == 0 { 40 } else { 1 };
        lines.push(serde_json::json!({"type": "tool_result", "call_id": format!("c{i}"), "content": output(i, n)}));
        lines.push(serde_json::json!({"type": "assistant", "content": format!("Read f{i}.")}));
    }
    lines.push(serde_json::json!({"type": "assistant", "content": "Fixed: the test waited on a timer."}));
    append_events(env, &id, &lines);
    id
}

/// The compacted view as one line per event: type, call id, and how its content changed.
fn outline(env: &TestEnv) -> String {
    let view = env.run(&["show", "--compacted", "--format", "jsonl"]).ok().to_owned();
    let mut out = String::new();
    for line in view.lines() {
        let e: serde_json::Value = serde_json::from_str(line).unwrap();
        let content = e["content"].as_str().map(|c| {
            let first = c.lines().next().unwrap_or("");
            format!("{} lines, first: {}", c.lines().count(), &first[..first.len().min(40)])
        });
        let args = e.get("arguments").map(|a| if a == &serde_json::json!({}) { "{}" } else { "{…}" });
        out += &format!(
            "{} {} {}\n",
            e["type"].as_str().unwrap(),
            e["call_id"].as_str().unwrap_or(""),
            content.or(args.map(str::to_owned)).unwrap_or_default()
        );
    }
    out
}

#[test]
fn a_plain_compact_shrinks_a_single_turn_agent_session() {
    let env = TestEnv::new();
    agent_session(&env, 8);
    let out = env.run(&["compact"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stderr
    [01KDVDQ4K00000000000000001 7f45308] compact: "agent" turns 0-0 [strip reasoning, strip tool calls, over 50 bytes] ~2,521 -> 1,541 tokens
    "#);
    // Big results before the last 5 calls are replaced, small ones and the exempt TodoWrite
    // stay; the last 5 calls, the prompt and every assistant text are verbatim.
    insta::assert_snapshot!(outline(&env), @"
    system  1 lines, first: You are a coding agent.
    user  1 lines, first: Fix the flaky login test.
    tool_call todo {…}
    tool_result todo 1 lines, first: todos saved todos saved todos saved todo
    tool_call c0 {…}
    tool_result c0 1 lines, first: [compacted …00000006] success
    assistant  1 lines, first: Read f0.
    tool_call c1 {…}
    tool_result c1 1 lines, first: out 1.0 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
    assistant  1 lines, first: Read f1.
    tool_call c2 {…}
    tool_result c2 1 lines, first: [compacted …0000000C] success
    assistant  1 lines, first: Read f2.
    tool_call c3 {…}
    tool_result c3 1 lines, first: out 3.0 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
    assistant  1 lines, first: Read f3.
    tool_call c4 {…}
    tool_result c4 40 lines, first: out 4.0 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
    assistant  1 lines, first: Read f4.
    tool_call c5 {…}
    tool_result c5 1 lines, first: out 5.0 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
    assistant  1 lines, first: Read f5.
    tool_call c6 {…}
    tool_result c6 40 lines, first: out 6.0 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
    assistant  1 lines, first: Read f6.
    tool_call c7 {…}
    tool_result c7 1 lines, first: out 7.0 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
    assistant  1 lines, first: Read f7.
    assistant  1 lines, first: Fixed: the test waited on a timer.
    ");
    env.run(&["fsck"]).ok();
}

#[test]
fn keep_recent_tools_ends_the_range_inside_the_turn_and_from_last_continues_there() {
    let env = TestEnv::new();
    agent_session(&env, 6);
    let out = env.run(&["compact", "-p", "strip", "--keep-recent-tools", "3"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stderr
    [01KDVDQ4K00000000000000001 4891915] compact: "agent" turns 0-0 [strip reasoning, strip tool calls] ~1,994 -> 1,009 tokens
    "#);
    // Three more calls arrive; `--from last` starts right after the first compaction.
    let more: String = (6..9)
        .flat_map(|i| {
            [
                serde_json::json!({"type": "tool_call", "call_id": format!("c{i}"), "name": "Read", "arguments": {}}),
                serde_json::json!({"type": "tool_result", "call_id": format!("c{i}"), "content": output(i, 1)}),
            ]
        })
        .map(|l| format!("{l}\n"))
        .collect();
    env.run_stdin(&["append"], &more).ok();
    let out = env.run(&["compact", "-p", "strip", "--from", "last", "--keep-recent-tools", "3"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stderr
    [01KDVDQ4K00000000000000001 66cc454] compact: "agent" turns 0-0 [strip reasoning, strip tool calls] ~1,049 -> 550 tokens
    "#);
    insta::assert_snapshot!(outline(&env), @"
    system  1 lines, first: You are a coding agent.
    user  1 lines, first: Fix the flaky login test.
    tool_call todo {…}
    tool_result todo 1 lines, first: todos saved todos saved todos saved todo
    tool_call c0 {…}
    tool_result c0 1 lines, first: [compacted …00000006] success
    assistant  1 lines, first: Read f0.
    tool_call c1 {…}
    tool_result c1 1 lines, first: [compacted …00000009] success
    assistant  1 lines, first: Read f1.
    tool_call c2 {…}
    tool_result c2 1 lines, first: [compacted …0000000C] success
    assistant  1 lines, first: Read f2.
    tool_call c3 {…}
    tool_result c3 1 lines, first: [compacted …0000000F] success
    assistant  1 lines, first: Read f3.
    tool_call c4 {…}
    tool_result c4 1 lines, first: [compacted …0000000J] success
    assistant  1 lines, first: Read f4.
    tool_call c5 {…}
    tool_result c5 1 lines, first: [compacted …0000000N] success
    assistant  1 lines, first: Read f5.
    assistant  1 lines, first: Fixed: the test waited on a timer.
    tool_call c6 {}
    tool_result c6 1 lines, first: out 6.0 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
    tool_call c7 {}
    tool_result c7 1 lines, first: out 7.0 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
    tool_call c8 {}
    tool_result c8 1 lines, first: out 8.0 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
    ");
    // Undo the second: the first still holds.
    env.run(&["compact", "--undo"]).ok();
    insta::assert_snapshot!(outline(&env), @"
    system  1 lines, first: You are a coding agent.
    user  1 lines, first: Fix the flaky login test.
    tool_call todo {…}
    tool_result todo 1 lines, first: todos saved todos saved todos saved todo
    tool_call c0 {…}
    tool_result c0 1 lines, first: [compacted …00000006] success
    assistant  1 lines, first: Read f0.
    tool_call c1 {…}
    tool_result c1 1 lines, first: [compacted …00000009] success
    assistant  1 lines, first: Read f1.
    tool_call c2 {…}
    tool_result c2 1 lines, first: [compacted …0000000C] success
    assistant  1 lines, first: Read f2.
    tool_call c3 {…}
    tool_result c3 1 lines, first: out 3.0 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
    assistant  1 lines, first: Read f3.
    tool_call c4 {…}
    tool_result c4 40 lines, first: out 4.0 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
    assistant  1 lines, first: Read f4.
    tool_call c5 {…}
    tool_result c5 1 lines, first: out 5.0 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
    assistant  1 lines, first: Read f5.
    assistant  1 lines, first: Fixed: the test waited on a timer.
    tool_call c6 {}
    tool_result c6 1 lines, first: out 6.0 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
    tool_call c7 {}
    tool_result c7 1 lines, first: out 7.0 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
    tool_call c8 {}
    tool_result c8 1 lines, first: out 8.0 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
    ");
}

#[test]
fn truncation_keeps_the_first_and_last_lines_around_one_marker() {
    let env = TestEnv::new();
    agent_session(&env, 2);
    let out = env.run(&["compact", "-p", "light", "--max-lines", "4", "--keep-recent-tools", "0"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stderr
    [01KDVDQ4K00000000000000001 66d3d91] compact: "agent" turns 0-0 [strip reasoning, truncate tool output to 4 lines] ~938 -> 498 tokens
    "#);
    let view = env.run(&["show", "--compacted", "--format", "jsonl"]).ok().to_owned();
    let results: Vec<String> = view
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|e| e["type"] == "tool_result")
        .map(|e| e["content"].as_str().unwrap().to_owned())
        .collect();
    insta::assert_snapshot!(results.join("\n---\n"), @"
    todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved todos saved 
    ---
    out 0.0 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
    out 0.1 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
    [… 36 lines cut by compaction …]
    out 0.38 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
    out 0.39 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
    ---
    out 1.0 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
    ");
}

#[test]
fn keep_first_leaves_the_task_statement_and_the_middle_is_compacted() {
    let env = TestEnv::new();
    let id = env.new_conversation("turns");
    for t in 0..6 {
        env.run(&["append", &id, "--user", &format!("ask {t}")]).ok();
        env.run(&["append", &id, "--reasoning", &format!("thinking {t}")]).ok();
        env.run(&["append", &id, "--assistant", &format!("answer {t}")]).ok();
    }
    let out = env.run(&["compact", "-p", "light", "--keep-first", "2", "--keep-last", "2"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stderr
    [01KDVDQ4K00000000000000001 59b7b74] compact: "turns" turns 2-3 [strip reasoning] ~35 -> 30 tokens
    "#);
    insta::assert_snapshot!(outline(&env), @"
    user  1 lines, first: ask 0
    reasoning  1 lines, first: thinking 0
    assistant  1 lines, first: answer 0
    user  1 lines, first: ask 1
    reasoning  1 lines, first: thinking 1
    assistant  1 lines, first: answer 1
    user  1 lines, first: ask 2
    assistant  1 lines, first: answer 2
    user  1 lines, first: ask 3
    assistant  1 lines, first: answer 3
    user  1 lines, first: ask 4
    reasoning  1 lines, first: thinking 4
    assistant  1 lines, first: answer 4
    user  1 lines, first: ask 5
    reasoning  1 lines, first: thinking 5
    assistant  1 lines, first: answer 5
    ");
}

#[test]
fn bounds_that_leave_nothing_say_why_and_exit_0() {
    let env = TestEnv::new();
    let id = env.new_conversation("short");
    for t in 0..3 {
        env.run(&["append", &id, "--user", &format!("ask {t}")]).ok();
        env.run(&["append", &id, "--assistant", &format!("answer {t}")]).ok();
    }
    let before = env.snapshot();
    let mut said = String::new();
    for args in [
        vec!["compact"],
        vec!["compact", "--keep-last", "3"],
        vec!["compact", "--to", "-5"],
        vec!["compact", "--keep-first", "3"],
        vec!["compact", "-p", "light", "--keep-recent-tools", "2"],
    ] {
        let out = env.run(&args);
        said += &format!("$ convo {}\n{}\n", args.join(" "), env.transcript(&out));
    }
    insta::assert_snapshot!(said, @"
    $ convo compact
    exit 0
    --- stderr
    nothing to compact: the conversation has 3 turns and 0 tool calls; the last 3 turns stay as they are (compaction.keep_last = 3), and the last 5 tool calls stay whole (compaction.profiles.default.keep_recent_tools = 5)

    $ convo compact --keep-last 3
    exit 0
    --- stderr
    nothing to compact: the conversation has 3 turns and 0 tool calls; the last 3 turns stay as they are (--keep-last 3)

    $ convo compact --to -5
    exit 0
    --- stderr
    nothing to compact: the conversation has 3 turns and 0 tool calls; the last 5 turns stay as they are (--to -5)

    $ convo compact --keep-first 3
    exit 0
    --- stderr
    nothing to compact: the first 3 turns stay as they are (--keep-first 3) and the conversation has 3 turns

    $ convo compact -p light --keep-recent-tools 2
    exit 0
    --- stderr
    nothing to compact: the conversation has 3 turns and 0 tool calls; the last 2 tool calls stay whole (--keep-recent-tools 2)
    ");
    assert!(env.snapshot() == before, "a no-op changed the store");
}

/// Seed 002's example of J-CLI's micro-compaction: with the 3 most recent tool results kept,
/// the older large results (Bash 1,500 bytes, Read 2,000) become a placeholder naming the
/// tool, and the exempt LoadSkill result (3,000 bytes) stays whole.
#[test]
fn seed_002_micro_compaction_vector() {
    let env = TestEnv::new();
    let id = env.new_conversation("j-cli");
    let mut lines =
        vec![serde_json::json!({"type": "user", "content": "Find the config loader and follow the skill."})];
    let pairs = [
        ("call_456", "Bash", "I'll search for that file", 1500),
        ("call_789", "Read", "Found 3 matches, let me read them", 2000),
        ("call_abc", "LoadSkill", "I'm loading the skill", 3000),
        ("r1", "Read", "Reading the first match", 900),
        ("r2", "Read", "Reading the second match", 900),
        ("r3", "Read", "Reading the third match", 900),
    ];
    for (call, tool, say, bytes) in pairs {
        lines.push(serde_json::json!({"type": "assistant", "content": say}));
        lines.push(serde_json::json!({"type": "tool_call", "call_id": call, "name": tool, "arguments": {}}));
        lines.push(serde_json::json!({"type": "tool_result", "call_id": call, "content": "x".repeat(bytes)}));
    }
    append_events(&env, &id, &lines);
    let out = env.run(&[
        "--config",
        "tools.LoadSkill.compaction.response=\"keep\"",
        "compact",
        "-p",
        "light",
        "--tools",
        "strip-responses",
        "--min-bytes",
        "800",
        "--keep-recent-tools",
        "3",
    ]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stderr
    [01KDVDQ4K00000000000000001 56a2ed1] compact: "j-cli" turns 0-0 [strip reasoning, strip tool responses, over 800 bytes] ~2,359 -> 1,498 tokens
    "#);
    insta::assert_snapshot!(outline(&env), @"
    user  1 lines, first: Find the config loader and follow the sk
    assistant  1 lines, first: I'll search for that file
    tool_call call_456 {}
    tool_result call_456 1 lines, first: [compacted …00000004] success
    assistant  1 lines, first: Found 3 matches, let me read them
    tool_call call_789 {}
    tool_result call_789 1 lines, first: [compacted …00000007] success
    assistant  1 lines, first: I'm loading the skill
    tool_call call_abc {}
    tool_result call_abc 1 lines, first: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
    assistant  1 lines, first: Reading the first match
    tool_call r1 {}
    tool_result r1 1 lines, first: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
    assistant  1 lines, first: Reading the second match
    tool_call r2 {}
    tool_result r2 1 lines, first: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
    assistant  1 lines, first: Reading the third match
    tool_call r3 {}
    tool_result r3 1 lines, first: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
    ");
}

/// Seed 004's sections: the first turns verbatim (keep_first), the middle summarised within
/// max_summary_tokens (keep_compacted, here the digest), the recent turns with tool output
/// truncated to tool_output_max_lines (keep_recent): two stacked compactions.
#[test]
fn seed_004_keep_first_middle_and_recent_sections() {
    let env = TestEnv::new();
    let id = env.new_conversation("sections");
    let mut jsonl = String::new();
    for t in 0..8 {
        let lines = [
            serde_json::json!({"type": "user", "content": format!("step {t}")}),
            serde_json::json!({"type": "tool_call", "call_id": format!("c{t}"), "name": "Bash", "arguments": {"command": "make"}}),
            serde_json::json!({"type": "tool_result", "call_id": format!("c{t}"), "content": output(t, 12)}),
            serde_json::json!({"type": "assistant", "content": format!("Step {t} built. Next.")}),
        ];
        jsonl += &lines.iter().map(|l| format!("{l}\n")).collect::<String>();
    }
    env.run_stdin(&["append", &id], &jsonl).ok();
    // keep_first_turns = 2, keep_recent_turns = 4: the middle is turns 2-3.
    let middle = env.run(&["compact", "--digest", "--keep-first", "2", "--keep-last", "4"]);
    let recent = env.run(&["compact", "-p", "light", "--max-lines", "4", "--from", "-3", "--to", "-0"]);
    insta::assert_snapshot!(format!("{}{}", env.transcript(&middle), env.transcript(&recent)), @r#"
    exit 0
    --- stderr
    [01KDVDQ4K00000000000000001 5d01b9a] compact: "sections" turns 2-3 [summary by convo/digest] ~1,272 -> 1,021 tokens
    exit 0
    --- stderr
    [01KDVDQ4K00000000000000001 ac60b12] compact: "sections" turns 4-7 [strip reasoning, truncate tool output to 4 lines] ~1,021 -> 661 tokens
    "#);
    insta::assert_snapshot!(outline(&env), @"
    user  1 lines, first: step 0
    tool_call c0 {…}
    tool_result c0 12 lines, first: out 0.0 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
    assistant  1 lines, first: Step 0 built. Next.
    user  1 lines, first: step 1
    tool_call c1 {…}
    tool_result c1 12 lines, first: out 1.0 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
    assistant  1 lines, first: Step 1 built. Next.
    user  1 lines, first: [Summary of previous conversation: event
    assistant  3 lines, first: Digest of turns 2-3 (written by convo, n
    user  1 lines, first: step 4
    tool_call c4 {…}
    tool_result c4 5 lines, first: out 4.0 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
    assistant  1 lines, first: Step 4 built. Next.
    user  1 lines, first: step 5
    tool_call c5 {…}
    tool_result c5 5 lines, first: out 5.0 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
    assistant  1 lines, first: Step 5 built. Next.
    user  1 lines, first: step 6
    tool_call c6 {…}
    tool_result c6 5 lines, first: out 6.0 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
    assistant  1 lines, first: Step 6 built. Next.
    user  1 lines, first: step 7
    tool_call c7 {…}
    tool_result c7 5 lines, first: out 7.0 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
    assistant  1 lines, first: Step 7 built. Next.
    ");
}

/// Issue 12: a dry run over a long range shows its first and last turns, not one row per
/// turn; -v lists them all.
#[test]
fn a_long_dry_run_is_summarised_unless_verbose() {
    let env = TestEnv::new();
    let id = env.new_conversation("long");
    let jsonl: String = (0..40)
        .flat_map(|t| {
            [
                serde_json::json!({"type": "user", "content": format!("ask {t}")}),
                serde_json::json!({"type": "reasoning", "content": format!("thinking {t}")}),
                serde_json::json!({"type": "assistant", "content": format!("answer {t}")}),
            ]
        })
        .map(|l| format!("{l}\n"))
        .collect();
    env.run_stdin(&["append", &id], &jsonl).ok();
    insta::assert_snapshot!(env.run(&["compact", "-p", "light", "-n"]).ok(), @r#"
    Would compact "long" turns 0-36 [strip reasoning] (profile light)
      turn         now       after
         0          ~6          ~4
         1          ~6          ~4
         2          ~6          ~4
         3          ~6          ~4
         4          ~6          ~4
         …  (27 more turns; -v lists every one)
        32          ~7          ~4
        33          ~7          ~4
        34          ~7          ~4
        35          ~7          ~4
        36          ~7          ~4
    total  ~253 -> ~154 tokens (chars/4), 39.1% smaller; nothing written (--dry-run)
    "#);
    let verbose = env.run(&["compact", "-p", "light", "-n", "-v"]).ok().to_owned();
    assert_eq!(verbose.lines().filter(|l| l.trim_start().starts_with(char::is_numeric)).count(), 37, "{verbose}");
}

/// A budget that only the protected tail stands in the way of gives the tail up step by
/// step, and says which protection went, in the dry run, after the commit and in the commit
/// message.
#[test]
fn a_budget_gives_up_the_protected_tail_only_when_it_must_and_says_so() {
    let env = TestEnv::new();
    heavy_tail_session(&env, 6);
    let dry = env.run(&["compact", "--budget", "800", "--dry-run"]);
    insta::assert_snapshot!(env.transcript(&dry), @"
    exit 0
    --- stdout
    Budget 800 tokens; the view is ~3,044 now
      step             after  policies
      truncate        ~2,802  [truncate tool output to 20 lines, over 50 bytes]
      micro           ~2,554  [strip tool calls, over 50 bytes]
      reasoning       ~2,554  [strip reasoning, strip tool calls, over 50 bytes]
      tool-calls      ~2,554  [strip reasoning, strip tool calls]
      summary         ~2,568  [summary by convo/digest]
    Chosen: micro over turns 0-0, ~594 tokens
    Gave up: the last 5 tool calls kept whole: only 1
    Would compact \"tail\" turns 0-0 [strip tool calls, over 50 bytes] (profile default)
      turn         now       after
         0      ~3,044        ~594
    total  ~3,044 -> ~594 tokens (chars/4), 80.5% smaller; nothing written (--dry-run)
    Trail kept: files 0/0, commands 6/6, errors 0/0, commits 0/0
    ");
    let out = env.run(&["compact", "--budget", "800"]);
    let said: Vec<&str> = out.ok_status().lines().filter(|l| l.starts_with("note")).collect();
    assert_eq!(said, ["note: to fit the budget, gave up the last 5 tool calls kept whole: only 1"]);
    insta::assert_snapshot!(env.git(&["log", "-1", "--format=%s"]), @r#"compact: "tail" turns 0-0 [strip tool calls, over 50 bytes] ~3,044 -> 594 tokens (budget: gave up the last 5 tool calls kept whole: only 1)"#);
}

/// Automatic compaction climbs the same ladder: where only the protected tail stands in the
/// way, it gives part of it up, and says so.
#[test]
fn automatic_compaction_gives_up_the_tail_to_fit_and_says_so() {
    let env = TestEnv::new();
    heavy_tail_session(&env, 6);
    let mut args = vec![];
    for flag in [
        "compaction.auto.enabled=true",
        "compaction.auto.min_turns=0",
        "llm.model=\"ollama/llama3.2\"",
        "models.\"ollama/llama3.2\".context_window=1100",
    ] {
        args.extend(["--config", flag]);
    }
    args.extend(["append", "--user", "next"]);
    let out = env.run(&args);
    let said: Vec<&str> = out.ok_status().lines().filter(|l| l.starts_with("[context")).collect();
    insta::assert_snapshot!(said.join("\n"), @"[context compacted by micro: turns 0-0, ~3,045 -> ~595 tokens; gave up the last 5 tool calls kept whole: only 1]");
}

/// The digest a budget chooses takes what the rest of the view leaves of the budget, not
/// `compaction.max_summary_tokens` (which bounds a model's summary), names every command
/// when that fits, and fills what is left with the end of its range, so the view reaches
/// the budget.
#[test]
fn a_budget_digest_takes_the_room_the_budget_leaves() {
    let env = TestEnv::new();
    heavy_tail_session(&env, 30);
    let args =
        ["--config", "compaction.max_summary_tokens=20", "compact", "--budget", "800", "--keep-recent-tools", "1"];
    let out = env.run(&[&args[..], &["--dry-run"]].concat());
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stdout
    Budget 800 tokens; the view is ~15,399 now
      step             after  policies
      truncate        ~8,293  [truncate tool output to 20 lines, over 50 bytes]
      micro             ~999  [strip tool calls, over 50 bytes]
      reasoning         ~999  [strip reasoning, strip tool calls, over 50 bytes]
      tool-calls        ~999  [strip reasoning, strip tool calls]
      summary           ~724  [summary by convo/digest]  <- the first that fits
    Chosen: summary over turns 0-0, ~800 tokens
    Would compact "tail" turns 0-0 [summary by convo/digest] (profile default)
      turn         now       after
         0     ~15,399        ~800
    total  ~15,399 -> ~800 tokens (chars/4), 94.8% smaller; nothing written (--dry-run)
    Trail kept: files 0/0, commands 30/30, errors 0/0, commits 0/0
    "#);
    env.run(&args).ok();
    let view = env.run(&["show", "--compacted", "--format", "jsonl"]).ok().to_owned();
    let digest = view.lines().find(|l| l.contains("Digest of")).expect("a digest");
    assert!((0..29).all(|n| digest.contains(&format!("cargo test flake_{n}`"))), "{digest}");
    // The room its lines leave is spent on the end of the range as it was.
    assert!(digest.contains("The range ends (as it was, oldest first):"), "{digest}");
}

/// A step with a size threshold spends what the budget leaves by raising it: micro strips
/// only the parts too large for the budget, and keeps the rest whole.
#[test]
fn a_budget_raises_the_steps_threshold_to_spend_what_is_left() {
    let env = TestEnv::new();
    let id = env.new_conversation("sizes");
    let mut lines = vec![serde_json::json!({"type": "user", "content": "Look around."})];
    for i in 0..20 {
        lines.push(serde_json::json!({"type": "tool_call", "call_id": format!("c{i}"), "name": "Bash",
            "arguments": {"command": format!("ls dir{i}")}}));
        lines.push(serde_json::json!({"type": "tool_result", "call_id": format!("c{i}"), "content": output(i, i + 1)}));
    }
    append_events(&env, &id, &lines);
    let out = env.run(&["compact", "--budget", "2000", "--keep-recent-tools", "1", "--dry-run"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stdout
    Budget 2,000 tokens; the view is ~2,751 now
      step             after  policies
      truncate        ~2,751  [truncate tool output to 20 lines, over 50 bytes]
      micro             ~526  [strip tool calls, over 50 bytes]  <- the first that fits
      reasoning         ~526  [strip reasoning, strip tool calls, over 50 bytes]
      tool-calls        ~521  [strip reasoning, strip tool calls]
      summary           ~354  [summary by convo/digest]
    Chosen: micro over turns 0-0, ~1,898 tokens
    Would compact "sizes" turns 0-0 [strip tool calls, over 804 bytes] (profile default)
      turn         now       after
         0      ~2,751      ~1,898
    total  ~2,751 -> ~1,898 tokens (chars/4), 31.0% smaller; nothing written (--dry-run)
    Trail kept: files 0/0, commands 20/20, errors 0/0, commits 0/0
    "#);
}

/// A budget no compaction can meet, even with the protected tail given up, is a one-line
/// error naming the smallest view reachable, and the store is exactly as before.
#[test]
fn a_budget_nothing_can_meet_fails_naming_the_smallest_view_and_writes_nothing() {
    let env = TestEnv::new();
    heavy_tail_session(&env, 6);
    let before = env.snapshot();
    let out = env.run(&["compact", "--budget", "50"]);
    insta::assert_snapshot!(env.transcript(&out), @"
    exit 3
    --- stderr
    error: no compaction brings the view (~3,044 tokens) under the budget of 50: the smallest reachable is ~543 tokens (summary over turns 0-0, giving up the last 5 tool calls kept whole: only 1)
    hint: a budget of 543 or more can be met (the recent tail given up first); nothing was written
    ");
    assert_eq!(env.snapshot(), before, "the store is as it was");
}

/// `--budget`: the first step that fits is chosen, over only the oldest part of the range it
/// needs, and the dry run says what of the trail it keeps; when no compaction fits, even with
/// the protected tail given up, it fails naming the smallest view reachable; never a step
/// that would make the view larger (a digest of a tiny range can be).
#[test]
fn a_budget_chooses_the_first_step_that_fits_and_spends_what_is_left() {
    let env = TestEnv::new();
    agent_session(&env, 12);
    let mut said = String::new();
    for args in [
        vec!["compact", "--budget", "2500", "--dry-run"],
        vec!["compact", "--budget", "10", "--dry-run"],
        vec!["compact", "--budget", "100000"],
    ] {
        let out = env.run(&args);
        said += &format!("$ convo {}\n{}\n", args.join(" "), env.transcript(&out));
    }
    insta::assert_snapshot!(said, @r#"
    $ convo compact --budget 2500 --dry-run
    exit 0
    --- stdout
    Budget 2,500 tokens; the view is ~3,588 now
      step             after  policies
      truncate        ~2,621  [truncate tool output to 20 lines, over 50 bytes]
      micro           ~1,628  [strip tool calls, over 50 bytes]  <- the first that fits
      reasoning       ~1,628  [strip reasoning, strip tool calls, over 50 bytes]
      tool-calls      ~1,614  [strip reasoning, strip tool calls]
      summary         ~1,174  [summary by convo/digest]
    Chosen: micro over turns 0-0, only the oldest part needed, ~2,118 tokens
    Would compact "agent" turns 0-0 [strip tool calls, over 50 bytes] (profile default)
      turn         now       after
         0      ~3,582      ~2,112
    total  ~3,588 -> ~2,118 tokens (chars/4), 41.0% smaller; nothing written (--dry-run)
    Trail kept: files 12/12, commands 0/0, errors 0/0, commits 0/0

    $ convo compact --budget 10 --dry-run
    exit 3
    --- stderr
    error: no compaction brings the view (~3,588 tokens) under the budget of 10: the smallest reachable is ~71 tokens (summary over turns 0-0, giving up the last 5 tool calls kept whole: only 1)
    hint: a budget of 71 or more can be met (the recent tail given up first); nothing was written

    $ convo compact --budget 100000
    exit 0
    --- stderr
    nothing to compact: the view is ~3,588 tokens, within the budget of 100,000 (--budget 100000)
    "#);
    let tiny = TestEnv::new();
    let id = tiny.new_conversation("tiny");
    tiny.run(&["append", &id, "--user", "hi"]).ok();
    tiny.run(&["append", &id, "--assistant", "hello"]).ok();
    let out = tiny.run(&["compact", "--budget", "1", "--keep-last", "0"]);
    insta::assert_snapshot!(tiny.transcript(&out), @"
    exit 0
    --- stderr
    nothing to compact: no step makes the view (~2 tokens) smaller
    ");
}

/// Where a digest is the first step that fits, it covers only the oldest part needed and
/// the rest stays at a cheaper step's view: two compaction events in one commit, the
/// cheaper step under the digest. The dry run shows both parts and the trail kept, the
/// hooks read both, `show --compacted` and `diff --compacted` render both, the commit says
/// both, and one `compact --undo` withdraws both.
#[test]
fn a_budget_digest_covers_only_the_oldest_part_and_the_rest_stays_at_the_cheaper_step() {
    let env = TestEnv::new();
    reading_session(&env);
    let raw = env.run(&["show", "--compacted"]).ok().to_owned();
    let args = ["compact", "--budget", "700", "--keep-recent-tools", "1"];
    let dry = env.run(&[&args[..], &["--dry-run"]].concat());
    insta::assert_snapshot!(env.transcript(&dry), @r#"
    exit 0
    --- stdout
    Budget 700 tokens; the view is ~7,069 now
      step             after  policies
      truncate        ~6,238  [truncate tool output to 20 lines, over 50 bytes]
      micro             ~981  [strip tool calls, over 50 bytes]
      reasoning         ~981  [strip reasoning, strip tool calls, over 50 bytes]
      tool-calls        ~981  [strip reasoning, strip tool calls]
      summary           ~455  [summary by convo/digest]  <- the first that fits
    Chosen: summary over turns 0-0, only the oldest part needed, the rest at truncate, ~698 tokens
    Would compact "paths" turns 0-0 [summary by convo/digest] (profile default)
      over the oldest part (to event 0000002M); under it, turns 0-0 [truncate tool output to 20 lines, over 50 bytes] (one commit)
      turn         now       after
         0      ~7,069        ~698
    total  ~7,069 -> ~698 tokens (chars/4), 90.1% smaller; nothing written (--dry-run)
    Trail kept: files 30/30, commands 0/0, errors 0/0, commits 0/0
    "#);
    let hook = env.root.join("pre.json");
    let pre = format!("hooks.pre_compact=\"cat > {}\"", hook.to_str().unwrap());
    let out = env.run(&[&["--config", pre.as_str()][..], &args[..]].concat());
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stderr
    [01KDVDQ4K00000000000000001 f335945] compact: "paths" turns 0-0 [summary by convo/digest] over the oldest part, [truncate tool output to 20 lines, over 50 bytes] under it ~7,069 -> 698 tokens
    "#);
    insta::assert_snapshot!(std::fs::read_to_string(&hook).unwrap(), @r#"{"hook":"pre_compact","conversation":"01KDVDQ4K00000000000000001","title":"paths","range":{"from_turn":0,"to_turn":0,"from_event":"01KDVDRZ600000000000000001","to_event":"01KDVDRZ60000000000000002M"},"policies":"[summary by convo/digest]","profile":"default","tokens_before":7069,"tokens_after":698,"under":{"range":{"from_turn":0,"to_turn":0,"from_event":"01KDVDRZ600000000000000001","to_event":"01KDVDRZ60000000000000002R"},"policies":"[truncate tool output to 20 lines, over 50 bytes]"}}"#);
    // Two compaction events in the one commit: the cheaper step first, the digest on top.
    let added = env.git(&["show", "--format=", "--unified=0", "HEAD"]);
    let kinds: Vec<String> = added
        .lines()
        .filter(|l| l.starts_with("+{"))
        .map(|l| {
            let e: serde_json::Value = serde_json::from_str(&l[1..]).unwrap();
            format!(
                "{} summary={} max_lines={} laid_with={}",
                e["type"],
                e["summary"].is_object(),
                e["max_lines"],
                e["laid_with"].is_string()
            )
        })
        .collect();
    insta::assert_snapshot!(kinds.join("\n"), @r#"
    "compaction" summary=false max_lines=20 laid_with=true
    "compaction" summary=true max_lines=null laid_with=false
    "#);
    let shown = env.run(&["show", "--compacted"]).ok().to_owned();
    assert!(shown.contains("compacted view: ~698 tokens"), "{shown}");
    // The digest names the oldest files; the newer ones are read in part (truncated), not
    // whole and not digested.
    assert!(shown.contains("read: src/mod_0/file_0.rs"), "{shown}");
    assert!(shown.contains("[… 4 lines cut by compaction …]"), "{shown}");
    let diff = env.run(&["diff", "--compacted"]).ok().to_owned();
    assert!(diff.contains("+    [… 4 lines cut by compaction …]") && diff.contains("+    Digest of turn 0"), "{diff}");
    let undo = env.run(&["compact", "--undo"]);
    insta::assert_snapshot!(env.transcript(&undo), @r#"
    exit 0
    --- stderr
    [01KDVDQ4K00000000000000001 7a606ab] compact: "paths" undo 01KDVDYEZ0 turns 0-0 [summary by convo/digest] over the oldest part, [truncate tool output to 20 lines, over 50 bytes] under it ~698 -> 7,069 tokens
    "#);
    // The same view as before (the header counts the events appended since).
    let view = |shown: &str| shown.lines().skip(2).map(str::to_owned).collect::<Vec<_>>();
    assert_eq!(view(env.run(&["show", "--compacted"]).ok()), view(&raw), "one undo withdrew both");
    let again = env.run(&["compact", "--undo"]);
    insta::assert_snapshot!(env.transcript(&again), @r#"
    exit 0
    --- stderr
    nothing to undo: no compaction in force in this conversation
    "#);
    // Naming the cheaper step's own event withdraws the digest on top of it too; a name
    // that is no compaction in force is a one-line error and writes nothing.
    env.run(&args).ok();
    let added = env.git(&["show", "--format=", "--unified=0", "HEAD"]);
    let under = added
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l.strip_prefix('+')?).ok())
        .find(|e| e["laid_with"].is_string())
        .expect("the cheaper step's event");
    let before = env.snapshot();
    let bad = env.run(&["compact", "--undo", "nope"]);
    insta::assert_snapshot!(env.transcript(&bad), @r#"
    exit 3
    --- stderr
    error: no compaction `nope` in force (in force: 01KDVE9EH00000000000000002, 01KDVE9EH00000000000000001)
    hint: nothing was written
    hint: `convo compact --undo` with no id withdraws the latest in force
    "#);
    assert_eq!(env.snapshot(), before, "the store is as it was");
    let two = env.run(&["compact", "--undo", "01KDVE9EH"]);
    insta::assert_snapshot!(env.transcript(&two), @r"
    exit 3
    --- stderr
    error: `01KDVE9EH` names 2 compactions in force: 01KDVE9EH00000000000000002, 01KDVE9EH00000000000000001
    hint: nothing was written
    hint: a longer prefix names one
    ");
    assert_eq!(env.snapshot(), before, "the store is as it was");
    env.run(&["compact", "--undo", under["id"].as_str().unwrap()]).ok();
    assert_eq!(view(env.run(&["show", "--compacted"]).ok()), view(&raw), "naming the step under withdrew both");
}

/// `laid_with` is what a compaction event claims, and a pulled one is a teammate's data: an
/// event another commit appended, naming our digest (a copy of the step under it, the same
/// time, a new id), does not pair with it. Undoing the digest withdraws it and the step laid
/// in its own commit; undoing the pulled event withdraws that one alone.
#[test]
fn a_pulled_laid_with_naming_another_compaction_does_not_widen_an_undo() {
    use crate::common::{conversation_dir, two_people};
    use crate::hostile_remotes::{blob, commit, git_str, with_entry};
    use serde_json::Value;
    let w = two_people();
    let id = reading_session(&w.a);
    w.a.run(&["compact", "--budget", "700", "--keep-recent-tools", "1"]).ok();
    let added = |env: &TestEnv| -> Vec<Value> {
        env.git(&["show", "--format=", "--unified=0", "HEAD"])
            .lines()
            .filter_map(|l| serde_json::from_str(l.strip_prefix('+')?).ok())
            .collect()
    };
    let [under, digest] = <[Value; 2]>::try_from(added(&w.a)).unwrap();
    let digest_id = digest["id"].as_str().unwrap().to_owned();
    assert_eq!(under["laid_with"], digest_id.as_str());
    w.a.run(&["remote", "add", "origin", &w.url]).ok();
    w.a.run(&["push"]).ok();

    // The teammate's commit, made with plumbing: the step under the digest appended again
    // to the conversation's last segment, under another id.
    let tip = git_str(&w.hub, &["rev-parse", "refs/heads/main"]);
    let dir = conversation_dir(&id);
    let listed = git_str(&w.hub, &["ls-tree", "-r", "--name-only", &tip, &dir]);
    let segment = listed.lines().rfind(|p| p.ends_with(".jsonl")).unwrap().to_owned();
    let mut text = git_str(&w.hub, &["cat-file", "blob", &format!("{tip}:{segment}")]);
    let mut planted = under.clone();
    let planted_id = format!("{}Z", &digest_id[..digest_id.len() - 1]);
    planted["id"] = Value::from(planted_id.as_str());
    text += &format!("\n{planted}\n");
    let (folders, name) = segment.rsplit_once('/').unwrap();
    let folders: Vec<&str> = folders.split('/').collect();
    let entry = ("100644".to_owned(), name.as_bytes().to_vec(), blob(&w.hub, text.as_bytes()));
    let tree = with_entry(&w.hub, &format!("{tip}^{{tree}}"), &folders, entry);
    git_str(&w.hub, &["update-ref", "refs/heads/main", &commit(&w.hub, &tree, Some(&tip), "innocent update")]);
    w.a.run(&["pull"]).ok();
    let in_force = |env: &TestEnv| env.run(&["compact", "--undo", "nope"]).fails_with(3).to_owned();
    let all = in_force(&w.a);
    assert!(all.contains(&planted_id) && all.contains(&digest_id), "the pull took the planted event: {all}");

    // Undoing the digest: it and the step laid with it, not the planted one.
    w.a.run(&["compact", "--undo", &digest_id]).ok();
    let revoked = |env: &TestEnv| -> Vec<String> {
        added(env).iter().filter_map(|e| e["revokes"].as_str().map(str::to_owned)).collect()
    };
    let mut withdrawn = revoked(&w.a);
    withdrawn.sort();
    let mut laid = vec![under["id"].as_str().unwrap().to_owned(), digest_id.clone()];
    laid.sort();
    assert_eq!(withdrawn, laid);
    assert!(in_force(&w.a).contains(&format!("(in force: {planted_id})")), "{}", in_force(&w.a));

    // Compacted again, then the planted event named: it alone is withdrawn.
    w.a.run(&["compact", "--budget", "700", "--keep-recent-tools", "1"]).ok();
    let digest = added(&w.a).pop().unwrap();
    w.a.run(&["compact", "--undo", &planted_id]).ok();
    assert_eq!(revoked(&w.a), [planted_id]);
    assert!(in_force(&w.a).contains(digest["id"].as_str().unwrap()));
}
