"""A stand-in for the systemd user manager on a test's private bus (VideoWindowTests).

It owns org.freedesktop.systemd1 and answers Properties.Get and GetAll of
org.freedesktop.systemd1.Manager's Environment (type as) on /org/freedesktop/systemd1 with the
NAME=value arguments it was given, as `busctl --user get-property` reads it from the real one.
Prints "ready" once it owns the name; ends when it is terminated or the bus goes.
"""

import sys

from jeepney import HeaderFields, MessageType, new_error, new_method_return
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import open_dbus_connection

MANAGER = "org.freedesktop.systemd1.Manager"
PROPERTIES = "org.freedesktop.DBus.Properties"


def main():
    environment = sys.argv[1:]
    connection = open_dbus_connection(bus="SESSION")
    connection.send_and_get_reply(message_bus.RequestName("org.freedesktop.systemd1"))
    print("ready", flush=True)
    while True:
        message = connection.receive()
        header = message.header
        if header.message_type != MessageType.method_call:
            continue
        interface = header.fields.get(HeaderFields.interface)
        member = header.fields.get(HeaderFields.member)
        path = header.fields.get(HeaderFields.path)
        if path == "/org/freedesktop/systemd1" and interface == PROPERTIES and member == "Get" \
                and message.body == (MANAGER, "Environment"):
            reply = new_method_return(message, "v", (("as", environment),))
        elif path == "/org/freedesktop/systemd1" and interface == PROPERTIES and member == "GetAll" \
                and message.body == (MANAGER,):
            reply = new_method_return(message, "a{sv}", ({"Environment": ("as", environment)},))
        else:
            reply = new_error(message, "org.freedesktop.DBus.Error.UnknownMethod", "s",
                              (f"the stand-in manager has no {interface}.{member}",))
        connection.send(reply)


if __name__ == "__main__":
    main()
