#!/usr/bin/env python3
"""Writes tonearm-dbus(7), the reference of Tonearm's D-Bus surface, from dbus/surface.json.

    scripts/dbus-manpage.py dbus/surface.json [--date YYYY-MM-DD] > tonearm-dbus.7

dbus/surface.json is what the service's interface tables serve (Sources/MPRIS/SurfaceDump.swift):
every interface, method, property, signal and error name, with its D-Bus type, the description of
its XML in dbus/, and the player events that announce a property. MPRISTests fail when the file
and the tables differ, so this page cannot drift from the service. The prose below is only what
holds for the whole surface.
"""
import argparse
import datetime
import json
import sys

from manpage import roff

BUS_NAME = "org.mpris.MediaPlayer2.tonearm"
PATH = "/org/mpris/MediaPlayer2"


def bold(text):
    return "\\fB%s\\fR" % roff(text)


def arguments(args, direction=""):
    parts = []
    for arg in args:
        name = (" " + roff(arg["name"])) if arg["name"] else ""
        parts.append("%s\\fI%s\\fR%s" % (direction, roff(arg["type"]), name))
    return ", ".join(parts)


def arg_docs(args, out):
    documented = [a for a in args if a["doc"]]
    if documented:
        out.append(".RS")
        for arg in documented:
            out += [".TP", "\\fI%s\\fR" % roff(arg["name"]), roff(arg["doc"])]
        out.append(".RE")


def interface_section(interface, out):
    out.append(".SH INTERFACE %s" % roff(interface["name"]))
    if interface["doc"]:
        out += [".PP", roff(interface["doc"])]
    if interface["methods"]:
        out.append(".SS Methods")
        for method in interface["methods"]:
            returns = arguments(method["returns"])
            signature = "%s(%s)" % (bold(method["name"]), arguments(method["arguments"]))
            if returns:
                signature += " \\(-> " + returns
            out += [".TP", signature, roff(method["doc"] or "")]
            arg_docs(method["arguments"] + method["returns"], out)
    if interface["properties"]:
        out.append(".SS Properties")
        for prop in interface["properties"]:
            access = {"read": "read-only", "readwrite": "read-write", "write": "write-only"}[prop["access"]]
            out += [".TP", "%s \\fI%s\\fR (%s)" % (bold(prop["name"]), roff(prop["type"]), access)]
            text = prop["doc"] or ""
            if prop["emitsChanged"] == "false":
                text += " Never announced: read it when needed."
            elif prop["emitsChanged"] == "invalidates":
                text += " Announced without its value (in PropertiesChanged's invalidated list)."
            elif prop["emitsChanged"] == "const":
                text += " Never changes while the service runs."
            out.append(roff(text.strip()))
            if prop["announcedWhen"]:
                out += [".br", roff("Announced with PropertiesChanged, when its value really changed, after: "
                                    + "; ".join(prop["announcedWhen"]) + ".")]
    if interface["signals"]:
        out.append(".SS Signals")
        for signal in interface["signals"]:
            out += [".TP", "%s(%s)" % (bold(signal["name"]), arguments(signal["arguments"])), roff(signal["doc"] or "")]
            arg_docs(signal["arguments"], out)


def page(surface, date):
    out = ['.TH "TONEARM\\-DBUS" "7" "%s" "Tonearm" "Tonearm Manual"' % date]
    out += [".SH NAME", "tonearm\\-dbus \\- the D\\-Bus interfaces of the Tonearm player service"]
    out += [".SH SYNOPSIS", ".nf",
            "Bus:        the session bus",
            "Name:       %s (%s.instance<pid> when taken;" % (roff(BUS_NAME), roff(BUS_NAME)),
            "            %s.<name> with tonearmd \\-\\-instance)" % roff(BUS_NAME),
            "Object:     %s" % roff(PATH),
            "Interfaces: " + ", ".join(roff(i["name"]) for i in surface["interfaces"]),
            "            org.freedesktop.DBus.Properties, .Introspectable, .Peer",
            ".fi"]
    out += [".SH DESCRIPTION", roff(
        "tonearmd(1) is an MPRIS 2.2 player: media keys, playerctl(1), the desktop's media controls and any other "
        "MPRIS client drive it. What MPRIS cannot say (an item's load status and error, what the transport is "
        "actually doing and why it waits, buffering, sound and video settings, the outputs) is in the extension "
        "interface io.github.tonearm.Player1 on the same object. This page lists every method, property, signal "
        "and error name the service serves, with its D-Bus type; it is made from the service's own interface "
        "tables. Introspect answers with the XML installed in /usr/share/dbus-1/interfaces/.")]
    out += [".PP", roff(
        "All times are microseconds, as in MPRIS. Track ids are object paths under "
        "/io/github/tonearm/Track/ (MPRIS reserves /org/mpris/ for NoTrack) and are the same in Metadata's mpris:trackid, the TrackList interface "
        "and the extension. States are properties: a client reads them with GetAll once, then follows "
        "org.freedesktop.DBus.Properties.PropertiesChanged, which the service sends only for a value that really "
        "changed (never for Position: the Seeked signal says when the position jumps). Moments are signals. A "
        "change a call causes is announced before the call's reply.")]
    for interface in surface["interfaces"]:
        interface_section(interface, out)
    out.append(".SH ERRORS")
    out.append(roff(
        "A call with a wrong argument fails with org.freedesktop.DBus.Error.InvalidArgs (a Set whose variant holds "
        "the wrong type too, before its value is read); an unknown method, interface or property with "
        "org.freedesktop.DBus.Error.UnknownMethod, UnknownInterface or UnknownProperty; a Set of a read-only "
        "property with org.freedesktop.DBus.Error.PropertyReadOnly. The service's own errors, also the names "
        "in ItemError and ItemFailed, each come with a message a person can act on:"))
    for error in surface["errors"]:
        out += [".TP", bold(error["name"]), roff(error["doc"])]
    out += [".SH EXAMPLES", ".nf",
            roff("busctl --user get-property %s %s io.github.tonearm.Player1 ItemStatus" % (BUS_NAME, PATH)),
            roff("busctl --user set-property %s %s io.github.tonearm.Player1 Muted b true" % (BUS_NAME, PATH)),
            roff("busctl --user call %s %s io.github.tonearm.Player1 SeekTo xxx 60000000 0 0" % (BUS_NAME, PATH)),
            roff("dbus-monitor \"type='signal',sender='%s'\"" % BUS_NAME),
            ".fi"]
    out += [".SH SEE ALSO", "\\fBtonearmd\\fR(1), \\fBtonearm\\fR(1), \\fBplayerctl\\fR(1), \\fBbusctl\\fR(1),",
            "the MPRIS D\\-Bus Interface Specification 2.2: https://specifications.freedesktop.org/mpris\\-spec/latest/"]
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("surface")
    parser.add_argument("--date", default=datetime.date.today().isoformat())
    options = parser.parse_args()
    with open(options.surface, encoding="utf-8") as file:
        sys.stdout.write(page(json.load(file), options.date))


if __name__ == "__main__":
    main()
