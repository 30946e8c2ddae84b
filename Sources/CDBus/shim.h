#ifndef TONEARM_CDBUS_SHIM_H
#define TONEARM_CDBUS_SHIM_H
#include <dbus/dbus.h>
#endif
