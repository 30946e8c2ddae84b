/// The completion scripts of bash, zsh and fish, written from the table: every option with its
/// help, the values of a closed list, folders or files where the value is a path, and files for the
/// items. `make install` installs what the built program prints (Makefile, `generated`).
extension CommandDescription {
    public func completionScript(for shell: Shell) -> String {
        switch shell {
        case .bash: bashScript
        case .zsh: zshScript
        case .fish: fishScript
        }
    }

    /// Every option as the user types it, the built-in ones last.
    private var allSpellings: [String] { options.map(\.spelling) + ["--version", "-h", "--help"] }

    private var function: String { "_" + name.map { $0.isLetter || $0.isNumber ? String($0) : "_" }.joined() }

    // bash splits `--name=value` at `=` (COMP_WORDBREAKS): the option is then two words back.
    private var bashScript: String {
        var cases = ""
        for option in options where option.valueName != nil {
            let reply = switch option.completion {
            case .choices: "COMPREPLY=($(compgen -W '\(option.choices.joined(separator: " "))' -- \"$cur\"))"
            case .directories: "COMPREPLY=($(compgen -d -- \"$cur\"))"
            case .files: "COMPREPLY=($(compgen -f -- \"$cur\"))"
            case .none: "COMPREPLY=()"
            }
            cases += "    \(option.spelling)) \(reply); return ;;\n"
        }
        let items = switch items?.completion {
        case .directories?: "COMPREPLY=($(compgen -d -- \"$cur\"))"
        case .files?: "COMPREPLY=($(compgen -f -- \"$cur\"))"
        default: "COMPREPLY=()"
        }
        return """
            # bash completion for \(name), written by `\(name) --generate-completion-script bash`
            \(function)() {
                local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"
                if [[ "$prev" == "=" && $COMP_CWORD -ge 2 ]]; then
                    prev="${COMP_WORDS[COMP_CWORD-2]}"
                elif [[ "$cur" == "=" ]]; then
                    cur=""
                fi
                case "$prev" in
            \(cases)    esac
                local word
                for word in "${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
                    [[ "$word" == "--" ]] && { \(items); return; }
                done
                if [[ "$cur" == -* ]]; then
                    COMPREPLY=($(compgen -W '\(allSpellings.joined(separator: " "))' -- "$cur"))
                    return
                fi
                \(items)
            }
            complete -o filenames -F \(function) \(name)

            """
    }

    private var zshScript: String {
        var specs: [String] = []
        for option in options {
            let help = Self.zshQuoted(option.help)
            guard let valueName = option.valueName else {
                specs.append("'\(option.spelling)[\(help)]'")
                continue
            }
            let action = switch option.completion {
            case .choices: "(" + option.choices.joined(separator: " ") + ")"
            case .directories: "_files -/"
            case .files: "_files"
            case .none: " "
            }
            specs.append("'\(option.spelling)=[\(help)]:\(valueName):\(action)'")
        }
        if let items {
            specs.append("'*:\(items.valueName):\(items.completion == .directories ? "_files -/" : items.completion == .files ? "_files" : " ")'")
        }
        specs.append("'(- *)--version[Show the version.]'")
        specs.append("'(- *)'{-h,--help}'[Show help information.]'")
        return """
            #compdef \(name)
            # zsh completion for \(name), written by `\(name) --generate-completion-script zsh`
            \(function)() {
                _arguments -s -S \\
                    \(specs.joined(separator: " \\\n        "))
            }
            if [[ "${funcstack[1]}" = \(function) ]]; then
                \(function) "$@"
            else
                compdef \(function) \(name)
            fi

            """
    }

    /// Text for zsh's `_arguments` inside single quotes: its brackets and colons escaped.
    private static func zshQuoted(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "\\", "[", "]", ":": result += "\\" + String(character)
            case "'": result += "'\\''"
            default: result.append(character)
            }
        }
        return result
    }

    /// Text for fish inside single quotes.
    private static func fishQuoted(_ text: String) -> String {
        "'" + text.replacingAll("\\", with: "\\\\").replacingAll("'", with: "\\'") + "'"
    }

    private var fishScript: String {
        var lines = ["# fish completion for \(name), written by `\(name) --generate-completion-script fish`"]
        if items == nil { lines.append("complete -c \(name) -f") }
        for option in options {
            var line = "complete -c \(name) -l \(option.name) -d \(Self.fishQuoted(option.help))"
            if option.valueName != nil {
                switch option.completion {
                case .choices: line += " -r -f -a \(Self.fishQuoted(option.choices.joined(separator: " ")))"
                case .directories: line += " -r -f -a '(__fish_complete_directories)'"
                case .files: line += " -r -F"
                case .none: line += " -r -f"
                }
            }
            lines.append(line)
        }
        lines.append("complete -c \(name) -l version -d 'Show the version.'")
        lines.append("complete -c \(name) -s h -l help -d 'Show help information.'")
        return lines.joined(separator: "\n") + "\n"
    }
}

extension String {
    /// Every `target` replaced by `replacement` (FoundationEssentials is not imported here).
    func replacingAll(_ target: Character, with replacement: String) -> String {
        var result = ""
        for character in self {
            if character == target { result += replacement } else { result.append(character) }
        }
        return result
    }
}
