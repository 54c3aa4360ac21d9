//! Naming a conversation: by id or title, or a unique prefix of either, ids first; and
//! what `rename` says when its new title stops naming one.

use std::path::Path;

use crate::common::TestEnv;

const SESSION: &str = "../shared/corpus/claude-code/ccviewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl";

/// The conversation `show QUERY` shows (its title and id), or the error.
fn named(env: &TestEnv, query: &str) -> String {
    let out = env.run(&["show", query]);
    match out.code {
        0 => out.stdout.lines().next().unwrap_or_default().to_owned(),
        _ => env.transcript(&out),
    }
}

#[test]
fn a_unique_title_prefix_names_a_conversation_as_an_id_prefix_does() {
    let env = TestEnv::new();
    let refactor = env.new_conversation("Refactor the store");
    env.run(&["append", "--user", "refactor"]).ok();
    env.new_conversation("Release notes");
    env.run(&["append", "--user", "release"]).ok();
    // A title that starts like an id: the id prefix wins.
    env.new_conversation(&format!("{} look-alike", &refactor[..7]));
    env.run(&["append", "--user", "look-alike"]).ok();
    env.run(&["import", Path::new(env!("CARGO_MANIFEST_DIR")).join(SESSION).to_str().unwrap()]).ok();

    insta::assert_snapshot!(named(&env, "Ref"), @"Refactor the store 01KDVDQ4K00000000000000001");
    // Lower case matches either case (smart case, as ripgrep's); an upper-case letter asks
    // for it.
    insta::assert_snapshot!(named(&env, "rel"), @"Release notes 01KDVDTSS00000000000000001");
    assert_eq!(env.run(&["show", "rEL"]).code, 4);
    insta::assert_snapshot!(named(&env, &refactor[..7]), @"Refactor the store 01KDVDQ4K00000000000000001");
    insta::assert_snapshot!(named(&env, "01KDVDQ look"), @"01KDVDQ look-alike 01KDVDYEZ00000000000000001");
    // The session's subagents are titled after it: its title's prefix names the session, a
    // longer one a subagent.
    insta::assert_snapshot!(named(&env, "/orch"), @"/orchestrator @CLAUDE.md を最新の状態にアップデートしてください 01KDVE24500000000000000001");
    insta::assert_snapshot!(named(&env, "/orchestrator @CLAUDE.md を最新の状態にアップデートしてください: C"), @"/orchestrator @CLAUDE.md を最新の状態にアップデートしてください: Check package configuration 01KDVE24500000000000000002");
    // Two that came from nowhere else: neither is named, both are listed.
    insta::assert_snapshot!(named(&env, "Re"), @r#"
    exit 4
    --- stderr
    error: `Re` is ambiguous: 2 conversations match
    hint: candidates: 01KDVDQ4K00000000000000001 "Refactor the store", 01KDVDTSS00000000000000001 "Release notes"
    "#);

    // Every command that takes a name takes a title prefix.
    env.run(&["switch", "ref"]).ok();
    insta::assert_snapshot!(env.run(&["show"]).ok().lines().next().unwrap(), @"Refactor the store 01KDVDQ4K00000000000000001");
    env.run(&["rename", "release", "Release notes, final"]).ok();
    env.run(&["rm", "Release notes, f"]).ok();
    assert_eq!(env.run(&["show", "rel"]).code, 4);
}

/// A title is a name only while no other conversation has it: taking one that is taken
/// works, and says so.
#[test]
fn rename_to_a_title_another_has_warns_and_still_renames() {
    let env = TestEnv::new();
    env.new_conversation("login bug");
    let second = env.new_conversation("login bug, part 2");
    let out = env.run(&["rename", &second, "login bug"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stderr
    [01KDVDRZ600000000000000001 3013ef1] rename: "login bug, part 2" -> "login bug"
    warning: another conversation is titled "login bug" too (01KDVDQ): the title alone names none of them now
    "#);
    insta::assert_snapshot!(named(&env, "login bug"), @r#"
    exit 4
    --- stderr
    error: `login bug` is ambiguous: 2 conversations match
    hint: candidates: 01KDVDQ4K00000000000000001 "login bug", 01KDVDRZ600000000000000001 "login bug"
    "#);
}

/// `rename TITLE` renames the active conversation, which a forgotten argument also leads to
/// (`convo rename "login bug"`, meant as a name): a line says which conversation it was.
#[test]
fn rename_with_one_argument_says_which_conversation_it_renamed() {
    let env = TestEnv::new();
    env.new_conversation("login bug");
    let out = env.run(&["rename", "login bug, part 2"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stderr
    [01KDVDQ4K00000000000000001 1d8892d] rename: "login bug" -> "login bug, part 2"
    renamed the active conversation 01KD: "login bug" -> "login bug, part 2"
    "#);
    // Named explicitly, it needs no such line.
    let out = env.run(&["rename", "login", "login bug, part 3"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stderr
    [01KDVDQ4K00000000000000001 5ce3aa0] rename: "login bug, part 2" -> "login bug, part 3"
    "#);
}
