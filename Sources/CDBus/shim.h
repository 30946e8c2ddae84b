#ifndef TONEARM_CDBUS_SHIM_H
#define TONEARM_CDBUS_SHIM_H
#include <dbus/dbus.h>

/* Every libdbus function used by the DBus target imports as is.
 * The DBUS_TYPE_* macros are casts ((int) 's') that Swift does not import; their values are fixed by the
 * D-Bus specification, so Sources/DBus/MessageCoding.swift spells them (TypeCode) instead of shimming.
 * Add a static inline function here only for what Swift cannot import, with a one-line comment on why. */

#endif
