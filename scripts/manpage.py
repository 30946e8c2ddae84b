#!/usr/bin/env python3
"""Writes a man page (roff, section 1) for a built executable from its own parser.

    scripts/manpage.py EXECUTABLE [--date YYYY-MM-DD] > NAME.1

swift-argument-parser (tonearm) and tonearmd's own reader (Sources/CommandLineOptions, which adds
the environment and the exit statuses) describe every command, option and argument as JSON when the
executable is run with --experimental-dump-help; this turns that description into a page, so the page says what
the parser accepts and cannot drift from it. README.md stays the place for the longer story.
"""
import argparse
import datetime
import json
import os
import subprocess
import sys


def roff(text):
    """Text for a roff line: backslashes doubled, a leading dot or quote guarded, dashes literal."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    lines = []
    for line in text.split("\n"):
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def flag_names(argument):
    names = []
    for name in argument.get("names", []):
        prefix = "-" if name["kind"] == "short" else "--"
        names.append(prefix + name["name"])
    return names


def synopsis_item(argument):
    value = argument.get("valueName", "value")
    if argument["kind"] == "positional":
        text = "<%s>" % value + ("..." if argument.get("isRepeating") else "")
    else:
        preferred = argument.get("preferredName") or argument["names"][0]
        name = ("-" if preferred["kind"] == "short" else "--") + preferred["name"]
        text = name if argument["kind"] == "flag" else "%s <%s>" % (name, value)
    return "[%s]" % text if argument.get("isOptional") else text


def shown(arguments):
    # --help and --version are on every page through the main command's OPTIONS
    return [a for a in arguments if a.get("shouldDisplay", True)]


def options_section(arguments, out):
    for argument in shown(arguments):
        value = argument.get("valueName", "value")
        if argument["kind"] == "positional":
            label = "\\fI<%s>\\fR" % roff(value)
        else:
            names = ", ".join("\\fB%s\\fR" % roff(n) for n in flag_names(argument))
            label = names if argument["kind"] == "flag" else "%s \\fI<%s>\\fR" % (names, roff(value))
        out.append(".TP")
        out.append(label)
        text = argument.get("abstract", "")
        if argument.get("discussion"):
            text += " " + argument["discussion"]
        if argument.get("allValues"):
            text += " One of: " + ", ".join(argument["allValues"]) + "."
        if argument.get("defaultValue"):
            text += " Default: " + argument["defaultValue"] + "."
        out.append(roff(text.strip()))


def page(tool, date):
    command = tool["command"]
    name = command["commandName"]
    out = ['.TH "%s" "1" "%s" "Tonearm" "User Commands"' % (name.upper(), date)]
    out += [".SH NAME", "%s \\- %s" % (roff(name), roff(command.get("abstract", "")))]
    out += [".SH SYNOPSIS", ".B %s" % roff(name)]
    subcommands = [s for s in command.get("subcommands", []) if s.get("shouldDisplay", True)]
    items = [synopsis_item(a) for a in shown(command.get("arguments", []))]
    if subcommands:
        items = ["<command>"] + items
    if items:
        out.append(roff(" ".join(items)))
    if command.get("discussion"):
        out += [".SH DESCRIPTION", roff(command["discussion"])]
    if command.get("arguments"):
        out.append(".SH OPTIONS")
        options_section(command["arguments"], out)
    if subcommands:
        out.append(".SH COMMANDS")
        for sub in subcommands:
            arguments = [a for a in shown(sub.get("arguments", []))
                         if not any(n["name"] in ("help", "version") for n in a.get("names", []))]
            out.append(".SS %s" % roff(" ".join([sub["commandName"]] + [synopsis_item(a) for a in arguments])))
            out.append(roff(sub.get("abstract", "")))
            if sub.get("discussion"):
                out += [".PP", roff(sub["discussion"])]
            if arguments:
                out.append(".RS")
                options_section(arguments, out)
                out.append(".RE")
    # two keys of tonearmd's own reader (Sources/CommandLineOptions/HelpDump.swift), which
    # swift-argument-parser's dump does not have
    if command.get("environment"):
        out.append(".SH ENVIRONMENT")
        for variable in command["environment"]:
            out += [".TP", "\\fB%s\\fR" % roff(variable["name"]), roff(variable.get("abstract", ""))]
    if command.get("exitStatuses"):
        out.append(".SH EXIT STATUS")
        for status in command["exitStatuses"]:
            out += [".TP", "\\fB%d\\fR" % status["status"], roff(status.get("abstract", ""))]
    if name == "tonearmd":
        daemon_sections(out)
    out += [".SH SEE ALSO", ", ".join("\\fB%s\\fR(1)" % n for n in ("tonearm", "tonearmd", "playerctl") if n != name)
            + ", \\fBtonearm\\-dbus\\fR(7)"]
    return "\n".join(out) + "\n"


# What tonearmd's parser does not describe: the files it keeps (Sources/Store/StateStore.swift,
# Sources/EngineLink/CoverCache.swift and FormatsCache.swift, Sources/Playlists/PlaylistCatalog.swift),
# the signals it handles (Sources/TonearmService/Lifecycle.swift), and the systemd user unit, which is
# read from packaging/tonearmd.service itself.
FILES = [
    ("$XDG_STATE_HOME/tonearm/state.sqlite",
     "The saved state: the queue, the current track and position, volume, mute, loop, shuffle, rate, sound and video "
     "settings, equalizer presets (state-NAME.sqlite with --instance NAME). Default XDG_STATE_HOME: ~/.local/state."),
    ("$XDG_STATE_HOME/tonearm/queues/", "Queues saved with SaveQueue (tonearm save), as M3U8 files, offered as playlists."),
    ("$XDG_MUSIC_DIR/Playlists/", "Playlist files (M3U, M3U8, PLS, XSPF) offered through MPRIS Playlists, followed as they change."),
    ("$XDG_CACHE_HOME/tonearm/", "The formats GStreamer plays (formats) and cover art taken from tags (covers/). Default: ~/.cache."),
]
SIGNALS = [
    ("SIGTERM, SIGINT", "Save the state, announce PlaybackStatus Stopped, release the bus name and exit 0 (as a client's Quit)."),
    ("SIGPIPE, SIGXFSZ", "Ignored: a write that fails is an error the service reports and survives."),
]


def daemon_sections(out):
    out.append(".SH FILES")
    for path, text in FILES:
        out += [".TP", "\\fI%s\\fR" % roff(path), roff(text)]
    out.append(".SH SIGNALS")
    for names, text in SIGNALS:
        out += [".TP", "\\fB%s\\fR" % roff(names), roff(text)]
    unit = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "packaging", "tonearmd.service")
    out += [".SH SYSTEMD", roff(
        "Installed as the systemd user unit tonearmd.service (Type=dbus), which D-Bus activation starts at the first "
        "call to org.mpris.MediaPlayer2.tonearm; systemctl --user enable --now tonearmd starts it at login "
        "instead. Options go in an override (systemctl --user edit tonearmd: an empty ExecStart= line, then "
        "ExecStart= with the options). The unit as the Debian package installs it (make install writes its own prefix into ExecStart):"),
        ".PP", ".nf"]
    with open(unit, encoding="utf-8") as file:
        out += [roff(line) for line in file.read().rstrip("\n").split("\n")]
    out.append(".fi")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("executable")
    parser.add_argument("--date", default=datetime.date.today().isoformat())
    options = parser.parse_args()
    dump = subprocess.run([options.executable, "--experimental-dump-help"], check=True, capture_output=True, text=True)
    sys.stdout.write(page(json.loads(dump.stdout), options.date))


if __name__ == "__main__":
    main()
