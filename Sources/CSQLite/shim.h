#ifndef TELWATCH_CSQLITE_SHIM_H
#define TELWATCH_CSQLITE_SHIM_H

#include <sqlite3.h>

/* Swift imports neither SQLITE_TRANSIENT (a cast of -1 to a function pointer) nor variadic
   functions such as sqlite3_db_config. */
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }

/* Defensive mode: no statement can corrupt the file on purpose (writable_schema, direct page
   writes), whatever a query or a hostile database file asks for. */
static inline int csqlite_set_defensive(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)0);
}

/* Extended result codes are composed macros, which Swift does not import. */
static const int CSQLITE_IOERR_WRITE = SQLITE_IOERR_WRITE;

#endif
