#ifndef TONEARM_CSQLITE_SHIM_H
#define TONEARM_CSQLITE_SHIM_H
#include <sqlite3.h>

/* SQLITE_TRANSIENT is a macro that casts -1 to a destructor pointer, which Swift does not import
 * (sqlite3.h, "Constants Defining Special Destructor Behavior"): it tells sqlite3_bind_text to copy. */
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }

#endif
