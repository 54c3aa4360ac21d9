
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
            cand show 'Print a conversation''s raw events'
            cand log 'Show the history of a conversation, newest first'
            cand fsck 'Check the store''s integrity'
            cand generate-docs 'Write man pages and shell completions from the command definitions'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'convo;init'= {
            cand -C 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --store 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --color 'When to colour output (NO_COLOR is honoured by `auto`)'
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
            cand -C 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --store 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)'
            cand --color 'When to colour output (NO_COLOR is honoured by `auto`)'
            cand --brief 'Fold each tool call and tool result to one line'
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
            cand show 'Print a conversation''s raw events'
            cand log 'Show the history of a conversation, newest first'
            cand fsck 'Check the store''s integrity'
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
        &'convo;help;generate-docs'= {
        }
        &'convo;help;help'= {
        }
    ]
    $completions[$command]
}
