
use builtin;
use str;

set edit:completion:arg-completer[convo] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'convo'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'convo'= {
            cand -C 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --store 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --color 'When to colour output (NO_COLOR is honoured by `auto`)'
            cand --config 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5'
            cand --no-pager 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
            cand -q 'Print nothing but data and errors'
            cand --quiet 'Print nothing but data and errors'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand init 'Create a store (a git repository for conversations)'
            cand new 'Start a conversation and make it the active one'
            cand list 'List conversations: id, title, turns, events, estimated tokens, last update'
            cand switch 'Make another conversation the active one'
            cand append 'Append events to a conversation, as one commit'
            cand show 'Print a conversation: its raw events, or with --compacted what an LLM is sent'
            cand log 'Show the history of a conversation, newest first'
            cand fsck 'Check the store''s integrity'
            cand compact 'Compact a conversation: append an overlay that shrinks what an LLM is sent'
            cand diff 'Show what compaction changes, or how a conversation changed between two commits'
            cand fork 'Start a new conversation from (part of) another, and make it active'
            cand config 'Read and set configuration'
            cand query 'Send a message with the conversation to an LLM and record both sides'
            cand remote 'Manage the git remotes conversations are shared through'
            cand clone 'Clone a store from a git remote'
            cand fetch 'Download a remote''s commits without changing any conversation'
            cand pull 'Fetch a remote and bring its conversations in, losing nothing'
            cand push 'Send this store''s conversations to a remote'
            cand import 'Import a session from another tool as a new conversation'
            cand export 'Write a conversation in another format'
            cand generate-docs 'Write man pages and shell completions from the command definitions'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'convo;init'= {
            cand -C 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --store 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --color 'When to colour output (NO_COLOR is honoured by `auto`)'
            cand --config 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5'
            cand --no-pager 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
            cand -q 'Print nothing but data and errors'
            cand --quiet 'Print nothing but data and errors'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'convo;new'= {
            cand -t 'A title to name it by (ids are generated)'
            cand --title 'A title to name it by (ids are generated)'
            cand -C 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --store 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --color 'When to colour output (NO_COLOR is honoured by `auto`)'
            cand --config 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5'
            cand --no-pager 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
            cand -q 'Print nothing but data and errors'
            cand --quiet 'Print nothing but data and errors'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'convo;list'= {
            cand --format 'Output format; `json` is an array of objects for scripts'
            cand -C 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --store 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --color 'When to colour output (NO_COLOR is honoured by `auto`)'
            cand --config 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5'
            cand --no-pager 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
            cand -q 'Print nothing but data and errors'
            cand --quiet 'Print nothing but data and errors'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'convo;switch'= {
            cand -C 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --store 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --color 'When to colour output (NO_COLOR is honoured by `auto`)'
            cand --config 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5'
            cand --no-pager 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
            cand -q 'Print nothing but data and errors'
            cand --quiet 'Print nothing but data and errors'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'convo;append'= {
            cand -f 'Read JSONL events from FILE instead of stdin'
            cand --file 'Read JSONL events from FILE instead of stdin'
            cand --user 'A user message (starts a new turn)'
            cand --assistant 'An assistant message'
            cand --reasoning 'The model''s reasoning'
            cand --system 'A system prompt'
            cand --tool-call 'A tool call to the tool NAME (with --args)'
            cand --args 'The tool call''s arguments, as JSON'
            cand --call-id 'The tool call''s id (default: generated)'
            cand --tool-result 'A tool result answering the call CALL_ID (with --content)'
            cand --content 'The tool result''s output'
            cand -C 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --store 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --color 'When to colour output (NO_COLOR is honoured by `auto`)'
            cand --config 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5'
            cand --error 'Mark the tool result as an error'
            cand --no-pager 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
            cand -q 'Print nothing but data and errors'
            cand --quiet 'Print nothing but data and errors'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'convo;show'= {
            cand --format 'format'
            cand -m 'With --format openai|anthropic: the model named in the body [default: llm.model]'
            cand --model 'With --format openai|anthropic: the model named in the body [default: llm.model]'
            cand -C 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --store 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --color 'When to colour output (NO_COLOR is honoured by `auto`)'
            cand --config 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5'
            cand --brief 'Fold each tool call and tool result to one line'
            cand --compacted 'The projected view: compactions applied, stripped and made-up events marked'
            cand --no-pager 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
            cand -q 'Print nothing but data and errors'
            cand --quiet 'Print nothing but data and errors'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'convo;log'= {
            cand -n 'Show at most N commits'
            cand --max-count 'Show at most N commits'
            cand --format 'Output format; `json` is an array of commits for scripts'
            cand -C 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --store 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --color 'When to colour output (NO_COLOR is honoured by `auto`)'
            cand --config 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5'
            cand --oneline 'One line per commit'
            cand --all 'Every commit of the store, all conversations'
            cand --no-pager 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
            cand -q 'Print nothing but data and errors'
            cand --quiet 'Print nothing but data and errors'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'convo;fsck'= {
            cand -C 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --store 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --color 'When to colour output (NO_COLOR is honoured by `auto`)'
            cand --config 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5'
            cand --no-pager 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
            cand -q 'Print nothing but data and errors'
            cand --quiet 'Print nothing but data and errors'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'convo;compact'= {
            cand -p 'Profile to apply (default: compaction.default_profile)'
            cand --profile 'Profile to apply (default: compaction.default_profile)'
            cand --from 'First turn to compact; alone it means `last` [default: 0]'
            cand --to 'Last turn to compact [default: -N, N = compaction.keep_last]'
            cand --keep-last 'Leave the last N turns as they are (--to -N)'
            cand --keep-recent-tools 'Leave the last N tool calls and their results whole; all before them is in range'
            cand --keep-first 'Leave the first N turns (the task statement) as they are [profile key: keep_first]'
            cand --min-bytes 'Only strip or truncate tool requests and results over B bytes [profile key: min_bytes]'
            cand --budget 'Choose the least compaction that brings the view under TOKENS (see below)'
            cand --max-lines 'Cut tool results left in place to N lines, first and last kept [profile key: max_lines]'
            cand --reasoning 'What to do with reasoning, over the profile'
            cand --tools 'What to do with tool calls, over the profile'
            cand --summary 'Replace the range with this summary'
            cand --summary-file 'Replace the range with the summary in FILE'
            cand -m 'The model that summarizes, as provider/model [default: the profile''s summary.model, then llm.model]'
            cand --model 'The model that summarizes, as provider/model [default: the profile''s summary.model, then llm.model]'
            cand --focus 'Something the summary must pay particular attention to'
            cand --undo 'Withdraw a compaction (default: the latest in force) by appending its revocation'
            cand -C 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --store 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --color 'When to colour output (NO_COLOR is honoured by `auto`)'
            cand --config 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5'
            cand --summarize 'Have a model summarize the range (from its raw events)'
            cand --digest 'Replace the range with a digest convo writes, one line per turn (no model)'
            cand -y 'Do not ask before sending a large range to the model (compaction.confirm_above_tokens)'
            cand --yes 'Do not ask before sending a large range to the model (compaction.confirm_above_tokens)'
            cand --force 'Apply a model summary even when it is estimated no smaller than the range it replaces'
            cand -n 'Print the range, policies and token estimates; write nothing'
            cand --dry-run 'Print the range, policies and token estimates; write nothing'
            cand -v 'With --dry-run, list every turn of a long range and print its projected view'
            cand --verbose 'With --dry-run, list every turn of a long range and print its projected view'
            cand --no-pager 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
            cand -q 'Print nothing but data and errors'
            cand --quiet 'Print nothing but data and errors'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'convo;diff'= {
            cand -C 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --store 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --color 'When to colour output (NO_COLOR is honoured by `auto`)'
            cand --config 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5'
            cand --compacted 'The compacted view: against the raw one, or at two revisions'
            cand --stat 'Per-turn estimated tokens, before -> after, and the totals'
            cand --no-pager 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
            cand -q 'Print nothing but data and errors'
            cand --quiet 'Print nothing but data and errors'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'convo;fork'= {
            cand --last 'Take the last N turns'
            cand --from 'First turn to take: 5, -3, 5h, 2days [default: 0]'
            cand --to 'Last turn to take, same forms [default: the last turn]'
            cand --compact 'Compact the fork afterwards, with PROFILE or compaction.default_profile'
            cand -t 'Title of the fork [default: the source''s title with " (fork)"]'
            cand --title 'Title of the fork [default: the source''s title with " (fork)"]'
            cand -C 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --store 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --color 'When to colour output (NO_COLOR is honoured by `auto`)'
            cand --config 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5'
            cand --no-pager 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
            cand -q 'Print nothing but data and errors'
            cand --quiet 'Print nothing but data and errors'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'convo;config'= {
            cand -C 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --store 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --color 'When to colour output (NO_COLOR is honoured by `auto`)'
            cand --config 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5'
            cand --no-pager 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
            cand -q 'Print nothing but data and errors'
            cand --quiet 'Print nothing but data and errors'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand get 'Print the value of KEY in force'
            cand set 'Set KEY to VALUE (TOML: 5, true, "strip") in one layer [default: the store''s]'
            cand list 'Print every key in force, with the layer it comes from, and the keys ignored'
            cand trust 'Trust a store''s own config (convo.toml, config events) to name providers'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'convo;config;get'= {
            cand --id 'Conversation whose config events count (default: the active one, if any)'
            cand -C 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --store 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --color 'When to colour output (NO_COLOR is honoured by `auto`)'
            cand --config 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5'
            cand --no-pager 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
            cand -q 'Print nothing but data and errors'
            cand --quiet 'Print nothing but data and errors'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'convo;config;set'= {
            cand --layer 'The layer to write'
            cand --id 'Conversation whose config events count (default: the active one, if any)'
            cand -C 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --store 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --color 'When to colour output (NO_COLOR is honoured by `auto`)'
            cand --config 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5'
            cand --user 'Same as --layer user'
            cand --conversation 'Same as --layer conversation'
            cand --no-pager 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
            cand -q 'Print nothing but data and errors'
            cand --quiet 'Print nothing but data and errors'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'convo;config;list'= {
            cand --id 'Conversation whose config events count (default: the active one, if any)'
            cand -C 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --store 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --color 'When to colour output (NO_COLOR is honoured by `auto`)'
            cand --config 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5'
            cand --no-pager 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
            cand -q 'Print nothing but data and errors'
            cand --quiet 'Print nothing but data and errors'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'convo;config;trust'= {
            cand -C 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --store 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --color 'When to colour output (NO_COLOR is honoured by `auto`)'
            cand --config 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5'
            cand --remove 'Stop trusting the store'
            cand --list 'Print the stores you trust, one a line'
            cand --no-pager 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
            cand -q 'Print nothing but data and errors'
            cand --quiet 'Print nothing but data and errors'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'convo;config;help'= {
            cand get 'Print the value of KEY in force'
            cand set 'Set KEY to VALUE (TOML: 5, true, "strip") in one layer [default: the store''s]'
            cand list 'Print every key in force, with the layer it comes from, and the keys ignored'
            cand trust 'Trust a store''s own config (convo.toml, config events) to name providers'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'convo;config;help;get'= {
        }
        &'convo;config;help;set'= {
        }
        &'convo;config;help;list'= {
        }
        &'convo;config;help;trust'= {
        }
        &'convo;config;help;help'= {
        }
        &'convo;query'= {
            cand --compact 'Compact before sending, with PROFILE or compaction.default_profile'
            cand -m 'The model, as provider/model [default: llm.model]'
            cand --model 'The model, as provider/model [default: llm.model]'
            cand -C 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --store 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --color 'When to colour output (NO_COLOR is honoured by `auto`)'
            cand --config 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5'
            cand --no-pager 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
            cand -q 'Print nothing but data and errors'
            cand --quiet 'Print nothing but data and errors'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'convo;remote'= {
            cand -C 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --store 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --color 'When to colour output (NO_COLOR is honoured by `auto`)'
            cand --config 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5'
            cand --no-pager 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
            cand -q 'Print nothing but data and errors'
            cand --quiet 'Print nothing but data and errors'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand add 'Add a remote'
            cand remove 'Remove a remote (the conversations stay)'
            cand set-url 'Change a remote''s URL'
            cand list 'List remotes with their URLs (the default)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'convo;remote;add'= {
            cand -C 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --store 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --color 'When to colour output (NO_COLOR is honoured by `auto`)'
            cand --config 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5'
            cand --no-pager 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
            cand -q 'Print nothing but data and errors'
            cand --quiet 'Print nothing but data and errors'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'convo;remote;remove'= {
            cand -C 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --store 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --color 'When to colour output (NO_COLOR is honoured by `auto`)'
            cand --config 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5'
            cand --no-pager 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
            cand -q 'Print nothing but data and errors'
            cand --quiet 'Print nothing but data and errors'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'convo;remote;set-url'= {
            cand -C 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --store 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --color 'When to colour output (NO_COLOR is honoured by `auto`)'
            cand --config 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5'
            cand --no-pager 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
            cand -q 'Print nothing but data and errors'
            cand --quiet 'Print nothing but data and errors'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'convo;remote;list'= {
            cand -C 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --store 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --color 'When to colour output (NO_COLOR is honoured by `auto`)'
            cand --config 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5'
            cand --no-pager 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
            cand -q 'Print nothing but data and errors'
            cand --quiet 'Print nothing but data and errors'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'convo;remote;help'= {
            cand add 'Add a remote'
            cand remove 'Remove a remote (the conversations stay)'
            cand set-url 'Change a remote''s URL'
            cand list 'List remotes with their URLs (the default)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'convo;remote;help;add'= {
        }
        &'convo;remote;help;remove'= {
        }
        &'convo;remote;help;set-url'= {
        }
        &'convo;remote;help;list'= {
        }
        &'convo;remote;help;help'= {
        }
        &'convo;clone'= {
            cand -C 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --store 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --color 'When to colour output (NO_COLOR is honoured by `auto`)'
            cand --config 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5'
            cand --no-pager 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
            cand -q 'Print nothing but data and errors'
            cand --quiet 'Print nothing but data and errors'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'convo;fetch'= {
            cand -C 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --store 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --color 'When to colour output (NO_COLOR is honoured by `auto`)'
            cand --config 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5'
            cand --no-pager 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
            cand -q 'Print nothing but data and errors'
            cand --quiet 'Print nothing but data and errors'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'convo;pull'= {
            cand -C 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --store 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --color 'When to colour output (NO_COLOR is honoured by `auto`)'
            cand --config 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5'
            cand --no-pager 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
            cand -q 'Print nothing but data and errors'
            cand --quiet 'Print nothing but data and errors'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'convo;push'= {
            cand -C 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --store 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --color 'When to colour output (NO_COLOR is honoured by `auto`)'
            cand --config 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5'
            cand --force-with-lease 'Overwrite the remote''s branch if it is still where this store last saw it'
            cand --allow-secrets 'Push even if secret-like strings were found'
            cand --no-pager 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
            cand -q 'Print nothing but data and errors'
            cand --quiet 'Print nothing but data and errors'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'convo;import'= {
            cand -f 'The format [default: detected]'
            cand --format 'The format [default: detected]'
            cand -t 'Title of the new conversation [default: from the session, else the file name]'
            cand --title 'Title of the new conversation [default: from the session, else the file name]'
            cand -C 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --store 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --color 'When to colour output (NO_COLOR is honoured by `auto`)'
            cand --config 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5'
            cand --again 'Import a file again although a conversation already holds it'
            cand --no-pager 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
            cand -q 'Print nothing but data and errors'
            cand --quiet 'Print nothing but data and errors'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'convo;export'= {
            cand -f 'f'
            cand --format 'format'
            cand -o 'Write to FILE instead of stdout'
            cand --output 'Write to FILE instead of stdout'
            cand -m 'With --format openai|anthropic: the model named in the body [default: llm.model]'
            cand --model 'With --format openai|anthropic: the model named in the body [default: llm.model]'
            cand -C 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --store 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --color 'When to colour output (NO_COLOR is honoured by `auto`)'
            cand --config 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5'
            cand --compacted 'The compacted view instead of the raw events'
            cand --no-pager 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
            cand -q 'Print nothing but data and errors'
            cand --quiet 'Print nothing but data and errors'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'convo;generate-docs'= {
            cand -C 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --store 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --color 'When to colour output (NO_COLOR is honoured by `auto`)'
            cand --config 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5'
            cand --no-pager 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)'
            cand -q 'Print nothing but data and errors'
            cand --quiet 'Print nothing but data and errors'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'convo;help'= {
            cand init 'Create a store (a git repository for conversations)'
            cand new 'Start a conversation and make it the active one'
            cand list 'List conversations: id, title, turns, events, estimated tokens, last update'
            cand switch 'Make another conversation the active one'
            cand append 'Append events to a conversation, as one commit'
            cand show 'Print a conversation: its raw events, or with --compacted what an LLM is sent'
            cand log 'Show the history of a conversation, newest first'
            cand fsck 'Check the store''s integrity'
            cand compact 'Compact a conversation: append an overlay that shrinks what an LLM is sent'
            cand diff 'Show what compaction changes, or how a conversation changed between two commits'
            cand fork 'Start a new conversation from (part of) another, and make it active'
            cand config 'Read and set configuration'
            cand query 'Send a message with the conversation to an LLM and record both sides'
            cand remote 'Manage the git remotes conversations are shared through'
            cand clone 'Clone a store from a git remote'
            cand fetch 'Download a remote''s commits without changing any conversation'
            cand pull 'Fetch a remote and bring its conversations in, losing nothing'
            cand push 'Send this store''s conversations to a remote'
            cand import 'Import a session from another tool as a new conversation'
            cand export 'Write a conversation in another format'
            cand generate-docs 'Write man pages and shell completions from the command definitions'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'convo;help;init'= {
        }
        &'convo;help;new'= {
        }
        &'convo;help;list'= {
        }
        &'convo;help;switch'= {
        }
        &'convo;help;append'= {
        }
        &'convo;help;show'= {
        }
        &'convo;help;log'= {
        }
        &'convo;help;fsck'= {
        }
        &'convo;help;compact'= {
        }
        &'convo;help;diff'= {
        }
        &'convo;help;fork'= {
        }
        &'convo;help;config'= {
            cand get 'Print the value of KEY in force'
            cand set 'Set KEY to VALUE (TOML: 5, true, "strip") in one layer [default: the store''s]'
            cand list 'Print every key in force, with the layer it comes from, and the keys ignored'
            cand trust 'Trust a store''s own config (convo.toml, config events) to name providers'
        }
        &'convo;help;config;get'= {
        }
        &'convo;help;config;set'= {
        }
        &'convo;help;config;list'= {
        }
        &'convo;help;config;trust'= {
        }
        &'convo;help;query'= {
        }
        &'convo;help;remote'= {
            cand add 'Add a remote'
            cand remove 'Remove a remote (the conversations stay)'
            cand set-url 'Change a remote''s URL'
            cand list 'List remotes with their URLs (the default)'
        }
        &'convo;help;remote;add'= {
        }
        &'convo;help;remote;remove'= {
        }
        &'convo;help;remote;set-url'= {
        }
        &'convo;help;remote;list'= {
        }
        &'convo;help;clone'= {
        }
        &'convo;help;fetch'= {
        }
        &'convo;help;pull'= {
        }
        &'convo;help;push'= {
        }
        &'convo;help;import'= {
        }
        &'convo;help;export'= {
        }
        &'convo;help;generate-docs'= {
        }
        &'convo;help;help'= {
        }
    ]
    $completions[$command]
}
