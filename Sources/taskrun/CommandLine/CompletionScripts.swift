// CompletionScripts: `taskrun --generate-completion-script bash|zsh|fish`, scripts that ask taskrun what to complete.
import TaskEngine

/// The shells' completion scripts. Each hands the words before the cursor and the word being
/// completed to `taskrun --complete --` (Completer) and adds the files it is told to, so the
/// three shells complete the same subcommands, options, values and targets. (The scripts
/// swift-argument-parser generates cannot describe a command with both a positional
/// argument and subcommands: zsh refused them on every Tab.)
enum CompletionScripts {
  static func script(for shell: String) -> String? {
    switch shell {
    case "bash": bash
    case "zsh": zsh
    case "fish": fish
    default: nil
    }
  }

  /// `taskrun --generate-completion-script SHELL`: the script, or a usage error.
  static func generate(_ shell: String?) -> Never {
    guard let shell, let text = script(for: shell) else {
      writeStandardError("taskrun: --generate-completion-script takes bash, zsh or fish\n")
      Taskrun.leave(ExitCode.usage.rawValue)
    }
    print(text, terminator: "")
    Taskrun.leave(ExitCode.success.rawValue)
  }

  static let bash = #"""
    # bash completion for taskrun (taskrun --generate-completion-script bash)
    _taskrun() {
        local current=${COMP_WORDS[COMP_CWORD]} kind
        local -a answer
        mapfile -t answer < <("${COMP_WORDS[0]}" --complete -- "${COMP_WORDS[@]:1:COMP_CWORD-1}" "$current" 2>/dev/null)
        kind=${answer[0]}
        COMPREPLY=("${answer[@]:1}")
        compopt -o filenames 2>/dev/null  # names with spaces (targets too) are quoted
        case $kind in
            files) mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -f -- "$current") ;;
            dirs) mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -d -- "$current") ;;
            lua) mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -d -- "$current"; compgen -f -X '!*.lua' -- "$current") ;;
        esac
    }
    complete -F _taskrun taskrun

    """#

  static let zsh = #"""
    #compdef taskrun
    # zsh completion for taskrun (taskrun --generate-completion-script zsh)
    _taskrun() {
        local -a answer candidates
        answer=("${(@f)$("${words[1]}" --complete -- "${(@)words[2,CURRENT-1]}" "$PREFIX" 2>/dev/null)}")
        candidates=("${(@)answer[2,-1]}")
        candidates=("${(@)candidates:#}")
        (( ${#candidates} )) && compadd -- "${candidates[@]}"
        case ${answer[1]} in
            files) _files ;;
            dirs) _files -/ ;;
            lua) _files -g '*.lua' ;;
        esac
        return 0
    }
    if [[ "${funcstack[1]}" = _taskrun ]]; then
        _taskrun "$@"
    else
        compdef _taskrun taskrun
    fi

    """#

  static let fish = #"""
    # fish completion for taskrun (taskrun --generate-completion-script fish)
    function __taskrun_complete
        set -l words (commandline -opc)
        set -l program $words[1]
        set -e words[1]
        set -l current (commandline -ct)
        set -l answer ($program --complete -- $words $current 2>/dev/null)
        set -l kind $answer[1]
        set -e answer[1]
        printf '%s\n' $answer
        switch "$kind"
            case files
                __fish_complete_path $current
            case dirs
                __fish_complete_directories $current ''
            case lua
                __fish_complete_directories $current ''
                set -l scripts $current*.lua
                printf '%s\n' $scripts
        end
    end
    complete -c taskrun -f -a '(__taskrun_complete)'

    """#
}
