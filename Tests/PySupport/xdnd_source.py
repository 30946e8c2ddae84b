"""Drops data on an X window as a file manager or a browser would (VideoInputTests).

    DISPLAY=:N xdnd_source.py WINDOW TYPE ITEM...

WINDOW is the target's X id (decimal or 0x hex), TYPE the one type offered (`text/uri-list` for
files, whose ITEMs are URIs; `text/plain` for text), and the ITEMs are joined with CRLF, as
text/uri-list asks (RFC 2483). Debian has no XDND sender to script, so this is the source side of
the XDND protocol (freedesktop.org's XDND specification, version 5), with python3-xlib:
XdndEnter, XdndPosition over the window's middle, XdndStatus awaited, XdndDrop, the target's
conversion of XdndSelection answered (SelectionRequest -> the data on its property ->
SelectionNotify), XdndFinished awaited. Prints "finished accepted" or "finished refused" and exits
0 when the target finished; exits 1 (with why on stderr) when it is no drop target, refuses the
drop before it happens, or says nothing for 10 s.
"""

import select
import sys
import time

from Xlib import X, Xatom, display
from Xlib.protocol import event

VERSION = 5
TIMEOUT = 10.0


def fail(message):
    print("xdnd_source: " + message, file=sys.stderr, flush=True)
    sys.exit(1)


class Source:
    def __init__(self, target_id, kind, data):
        self.display = display.Display()
        self.root = self.display.screen().root
        self.target = self.display.create_resource_object("window", target_id)
        self.kind = self.atom(kind)
        self.data = data
        # an unmapped window of our own: the drop's source and the selection's owner
        self.window = self.root.create_window(0, 0, 1, 1, 0, X.CopyFromParent)
        self.deadline = time.monotonic() + TIMEOUT

    def atom(self, name):
        return self.display.intern_atom(name)

    def send(self, name, *values):
        """One XDND client message to the target: data.l[0] is always the source's window."""
        data = [self.window.id] + list(values)
        data += [0] * (5 - len(data))
        message = event.ClientMessage(window=self.target, client_type=self.atom(name), data=(32, data))
        self.target.send_event(message, event_mask=0)
        self.display.flush()

    def next_event(self):
        while self.display.pending_events() == 0:
            left = self.deadline - time.monotonic()
            if left <= 0:
                fail("the target said nothing for %g s" % TIMEOUT)
            select.select([self.display], [], [], left)
        return self.display.next_event()

    def client_message(self, name):
        """Waits for the target's `name`, answering conversions of the selection meanwhile."""
        wanted = self.atom(name)
        while True:
            received = self.next_event()
            if received.type == X.SelectionRequest:
                self.answer(received)
            elif received.type == X.ClientMessage and received.client_type == wanted:
                return received.data[1]

    def answer(self, request):
        """The data on the requestor's property, in the type asked for, then SelectionNotify;
        a type we do not offer gets property None (ICCCM 2.2: the conversion failed)."""
        requestor = self.display.create_resource_object("window", request.requestor)
        property = request.property
        if request.target == self.kind:
            requestor.change_property(property, self.kind, 8, self.data)
        elif request.target == self.atom("TARGETS"):
            requestor.change_property(property, Xatom.ATOM, 32, [self.kind])
        else:
            property = X.NONE
        notify = event.SelectionNotify(time=request.time, requestor=request.requestor, selection=request.selection,
                                       target=request.target, property=property)
        requestor.send_event(notify, event_mask=0)
        self.display.flush()

    def drop(self):
        aware = self.target.get_full_property(self.atom("XdndAware"), Xatom.ATOM)
        if aware is None or not aware.value:
            fail("window 0x%x has no XdndAware: it takes no drops" % self.target.id)
        version = min(VERSION, aware.value[0])
        self.window.set_selection_owner(self.atom("XdndSelection"), X.CurrentTime)
        # one type, in the message itself (more than three would go in XdndTypeList)
        self.send("XdndEnter", version << 24, self.kind)
        geometry = self.target.get_geometry()
        # XdndPosition's point is in the root's coordinates: the root translates the target's middle
        middle = self.root.translate_coords(self.target, geometry.width // 2, geometry.height // 2)
        self.send("XdndPosition", 0, (middle.x << 16) | middle.y, X.CurrentTime, self.atom("XdndActionCopy"))
        status = self.client_message("XdndStatus")
        if not status[1] & 1:
            self.send("XdndLeave")
            fail("the target refused the drop (XdndStatus without the accept bit)")
        self.send("XdndDrop", 0, X.CurrentTime)
        finished = self.client_message("XdndFinished")
        # version 5: bit 0 of data.l[1] says whether the target took the data
        accepted = version < 5 or finished[1] & 1
        print("finished " + ("accepted" if accepted else "refused"), flush=True)


def main():
    if len(sys.argv) < 4:
        fail("usage: xdnd_source.py WINDOW TYPE ITEM...")
    target = int(sys.argv[1], 0)
    data = "\r\n".join(sys.argv[3:]) + "\r\n"
    Source(target, sys.argv[2], data.encode("utf-8")).drop()


if __name__ == "__main__":
    main()
