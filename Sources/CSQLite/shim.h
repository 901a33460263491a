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

/* Closing the last connection leaves the WAL as it is rather than copying it into the file: a
   damaged file is moved aside as it was found, with its WAL beside it. */
static inline int csqlite_no_checkpoint_on_close(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0);
}

/* The first `count` bytes of the main database file as they are on disk now, read through
   SQLite's own descriptor: opening and closing another descriptor of the file would drop
   SQLite's POSIX locks on it. SQLITE_OK, SQLITE_IOERR_SHORT_READ (a shorter file), or an error. */
static inline int csqlite_read_main_file(sqlite3 *db, void *buffer, int count) {
    sqlite3_file *file = 0;
    if (sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &file) != SQLITE_OK || !file || !file->pMethods) {
        return SQLITE_ERROR;
    }
    return file->pMethods->xRead(file, buffer, count, 0);
}

/* Syncs the WAL through SQLite's own descriptor (SQLITE_FCNTL_JOURNAL_POINTER is the WAL's file
   in WAL mode): every transaction committed so far then survives a power cut, as a commit with
   synchronous=FULL would have made it, but paid once for many commits. SQLITE_OK when there is
   no WAL open (nothing to sync). */
static inline int csqlite_sync_wal(sqlite3 *db) {
    sqlite3_file *file = 0;
    if (sqlite3_file_control(db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &file) != SQLITE_OK) return SQLITE_ERROR;
    if (!file || !file->pMethods) return SQLITE_OK;
    return file->pMethods->xSync(file, SQLITE_SYNC_NORMAL);
}

/* Extended result codes are composed macros, which Swift does not import. */
static const int CSQLITE_IOERR_WRITE = SQLITE_IOERR_WRITE;

#endif
