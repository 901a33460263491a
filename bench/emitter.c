/* bench/emitter.c — a fake ModemManager for telwatch's benchmarks: it owns
 * org.freedesktop.ModemManager1 on a bus, answers what a client asks at start-up, and sends
 * call signals with the real daemon's shapes, fast.
 *
 * Build:  cc -O2 -Wall -o bench/out/emitter bench/emitter.c $(pkg-config --cflags --libs dbus-1)
 * (bench/dbus-storm and bench/telwatch-bench build it into bench/out/ when missing or stale.)
 *
 * Objects (docs/modem-stacks.md §2.1), all answered in every mode:
 *   /org/freedesktop/ModemManager1            org.freedesktop.DBus.ObjectManager.GetManagedObjects
 *                                             -> a{oa{sa{sv}}}: Modem/0..M-1, each with
 *                                             ...ModemManager1.Modem and ...Modem.Voice (Calls ao)
 *   /org/freedesktop/ModemManager1/Modem/N    ...Modem.Voice.ListCalls -> ao (that modem's calls)
 *   /org/freedesktop/ModemManager1/Call/N     org.freedesktop.DBus.Properties.GetAll("...Call")
 *                                             -> State i, StateReason i, Direction i, Number s,
 *                                                Multiparty b, AudioPort s
 *                                             ...Call.Hangup: the call ends as ModemManager ends it
 *                                             (StateChanged ->7 reason 4 terminated +
 *                                             PropertiesChanged, then the reply); it stays listed
 *                                             until its CallDeleted (interactive "delete")
 *   Properties.Get/GetAll on modems and calls, Introspectable.Introspect on every node.
 * Calls are NOT in the ObjectManager (as in ModemManager); terminated calls stay listed until
 * their CallDeleted.
 *
 * Signals:
 *   ...Modem.Voice.CallAdded(o) / CallDeleted(o)               on the modem's path
 *   ...Call.StateChanged(i old, i new, u reason)                on the call's path
 *   org.freedesktop.DBus.Properties.PropertiesChanged(
 *       s "org.freedesktop.ModemManager1.Call", a{sv} {"State": <i>, "StateReason": <i>}, as [])
 *
 * Modes (--mode):
 *   storm       (default) --calls C calls exist from the start (listed by ListCalls, round robin
 *               over the modems; even ones ringing in, odd ones dialing). After the go signal,
 *               --count signals: transitions round robin over the calls, each a StateChanged
 *               followed by its PropertiesChanged with --with-properties (the total is still
 *               --count). Each call walks a realistic cycle: ringing-in -> active, or dialing ->
 *               ringing-out -> active; then hold / resume (active <-> held) until its last
 *               transition, which terminates it. Sent as fast as the bus reads: libdbus queues
 *               and we flush only past --queue-kb.
 *   lifecycles  --count N call lifecycles, one after the other, each on a new path
 *               Call/C, Call/C+1 … on modem i % M: CallAdded (State 3 ringing-in, incoming),
 *               [wait until its Properties.GetAll was answered, --wait-fetch-ms], StateChanged
 *               3->4 + PropertiesChanged, StateChanged 4->7 + PropertiesChanged, CallDeleted;
 *               --spacing-us U between those steps (the emitter keeps answering meanwhile).
 *   interactive (alias ring) commands on stdin, one per line, each answered by one line on stdout:
 *                 ring     a new ringing incoming call (CallAdded); "ring PATH SERIAL SEND_NS"
 *                 hangup   the newest ringing call ends (StateChanged ->7 + PropertiesChanged),
 *                          then CallDeleted; "hangup PATH 0 SEND_NS"
 *                 stuck N  N new ringing incoming calls (CallAdded each) whose Properties.Get/GetAll
 *                          is never answered: the method call is received and left without a reply
 *                          (the bus counts it against the caller until we answer or leave);
 *                          "stuck N FIRST_PATH LAST_PATH"
 *                 unstick  CallDeleted for every stuck call (their reads stay unanswered): "unstick N"
 *                 screen-ring [WAIT_MS]   a new ringing incoming call (CallAdded), then answers
 *                          until that call's Hangup arrives or WAIT_MS (default 5000) pass;
 *                          "screen-ring PATH SERIAL ADDED_NS NUMBER_NS HANGUP_NS": CallAdded's send,
 *                          the send of the first reply carrying its Number (GetAll, or Get of
 *                          Number), the arrival of its Hangup (CLOCK_REALTIME; -1 when none). A
 *                          call not hung up stays the ringing one "hangup" ends
 *                 delete   CallDeleted for every terminated call still listed: "delete N"
 *                 stuck-reads   "stuck-reads COUNT FIRST_AGE_MS LAST_AGE_MS": reads of stuck calls
 *                          received so far (none answered), how long ago the first and the latest
 *                          came (-1 while there is none)
 *                 lifecycles N [SPACING_US [WAIT_FETCH_MS]]   as --mode lifecycles; "sent …"
 *                 storm N  as --mode storm over the --calls calls (--with-properties applies);
 *                          "sent …". The calls end with the storm: a second one sends nothing.
 *                 times PATH|-   where --times lines go from now on (- : nowhere); "ok"
 *                 quit     exit (so does end of input, SIGTERM or SIGINT)
 *               unknown or failed commands answer "error …".
 *   serve       only answers methods, until SIGTERM/SIGINT (an idle ModemManager).
 *
 * Go signal (storm, lifecycles): --ready-file PATH (sending starts once PATH exists) or
 * --wait-go (a line "go" on stdin). Until then, and always in between, method calls are answered.
 * --linger: after sending, keep answering until SIGTERM/SIGINT (or stdin closes with --wait-go).
 *
 * Latency: --spacing-us U in storm mode sleeps U µs between signals and flushes each one.
 * --times PATH writes one line per signal sent: "serial send_time_ns path member new_state"
 * (CLOCK_REALTIME taken just before the send; new_state is -1 for CallAdded/CallDeleted).
 *
 * stdout: "sent N in S s (R/s)" once sending is over (storm, lifecycles); ring/hangup lines in
 * ring mode. stderr: diagnostics; "emitter: … owns …; waiting for ready file|go" (or "; sending",
 * or "; serving") once the name is owned and the objects are answered: harnesses wait for it.
 */
#define _GNU_SOURCE
#include <dbus/dbus.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MM_NAME "org.freedesktop.ModemManager1"
#define MM_ROOT "/org/freedesktop/ModemManager1"
#define MM_MODEM_IFACE "org.freedesktop.ModemManager1.Modem"
#define MM_VOICE_IFACE "org.freedesktop.ModemManager1.Modem.Voice"
#define MM_CALL_IFACE "org.freedesktop.ModemManager1.Call"
#define MM_MODEM_PREFIX MM_ROOT "/Modem/"
#define MM_CALL_PREFIX MM_ROOT "/Call/"
#define OM_IFACE "org.freedesktop.DBus.ObjectManager"
#define INTROSPECT_IFACE "org.freedesktop.DBus.Introspectable"

/* MMCallState (docs/modem-stacks.md §1.1) */
enum { ST_UNKNOWN = 0, ST_DIALING = 1, ST_RINGING_OUT = 2, ST_RINGING_IN = 3, ST_ACTIVE = 4, ST_HELD = 5,
       ST_WAITING = 6, ST_TERMINATED = 7 };
/* MMCallStateReason */
enum { RS_UNKNOWN = 0, RS_OUTGOING_STARTED = 1, RS_INCOMING_NEW = 2, RS_ACCEPTED = 3, RS_TERMINATED = 4 };
/* MMCallDirection */
enum { DIR_UNKNOWN = 0, DIR_INCOMING = 1, DIR_OUTGOING = 2 };

/* ---------------------------------------------------------------- state */

struct call {
    int exists;
    int modem;
    dbus_int32_t state, reason, direction;
    dbus_bool_t multiparty;
    char number[24];
    int fetched;   /* a Properties.GetAll for it was answered */
    int stuck;     /* its Properties.Get/GetAll are never answered (interactive "stuck") */
    uint64_t number_ns;   /* CLOCK_REALTIME just before the first reply carrying Number was sent */
    uint64_t hangup_ns;   /* CLOCK_REALTIME when its Call.Hangup was received */
};

static DBusConnection *conn;
static long n_modems = 4;
static struct call *calls;      /* indexed by the number in Call/N */
static long calls_cap, calls_next;
static volatile sig_atomic_t stop_requested;
static int stdin_open = 1;
static char stdin_buf[4096];
static size_t stdin_len;

static void die(const char *what, DBusError *err) {
    fprintf(stderr, "emitter: %s%s%s\n", what, err && dbus_error_is_set(err) ? ": " : "",
            err && dbus_error_is_set(err) ? err->message : "");
    exit(2);
}

static void oom(void) { die("out of memory", NULL); }

static double now_mono(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t now_real_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static long new_call(int modem, dbus_int32_t state, dbus_int32_t reason, dbus_int32_t direction) {
    if (calls_next == calls_cap) {
        long cap = calls_cap ? calls_cap * 2 : 256;
        struct call *grown = realloc(calls, (size_t)cap * sizeof *calls);
        if (!grown) oom();
        memset(grown + calls_cap, 0, (size_t)(cap - calls_cap) * sizeof *calls);
        calls = grown;
        calls_cap = cap;
    }
    long id = calls_next++;
    struct call *c = &calls[id];
    c->exists = 1;
    c->modem = modem;
    c->state = state;
    c->reason = reason;
    c->direction = direction;
    c->multiparty = FALSE;
    c->fetched = 0;
    c->stuck = 0;
    c->number_ns = 0;
    c->hangup_ns = 0;
    snprintf(c->number, sizeof c->number, "+1555%07ld", id % 10000000);
    return id;
}

static void call_path(long id, char *buf, size_t size) { snprintf(buf, size, MM_CALL_PREFIX "%ld", id); }
static void modem_path(long m, char *buf, size_t size) { snprintf(buf, size, MM_MODEM_PREFIX "%ld", m); }

/* "/prefix/N" with N a plain decimal: N, else -1. */
static long path_index(const char *path, const char *prefix) {
    size_t n = strlen(prefix);
    if (!path || strncmp(path, prefix, n) != 0 || !path[n]) return -1;
    long v = 0;
    for (const char *p = path + n; *p; p++) {
        if (*p < '0' || *p > '9' || v > 100000000) return -1;
        v = v * 10 + (*p - '0');
    }
    if (path[n] == '0' && path[n + 1]) return -1;
    return v;
}

static long call_of_path(const char *path) {
    long id = path_index(path, MM_CALL_PREFIX);
    return id >= 0 && id < calls_next && calls[id].exists ? id : -1;
}

static long modem_of_path(const char *path) {
    long m = path_index(path, MM_MODEM_PREFIX);
    return m >= 0 && m < n_modems ? m : -1;
}

/* ---------------------------------------------------------------- marshalling helpers */

static void check(dbus_bool_t ok) { if (!ok) oom(); }

static void open_entry(DBusMessageIter *dict, DBusMessageIter *entry, DBusMessageIter *variant, const char *key,
                       const char *sig) {
    check(dbus_message_iter_open_container(dict, DBUS_TYPE_DICT_ENTRY, NULL, entry));
    check(dbus_message_iter_append_basic(entry, DBUS_TYPE_STRING, &key));
    check(dbus_message_iter_open_container(entry, DBUS_TYPE_VARIANT, sig, variant));
}

static void close_entry(DBusMessageIter *dict, DBusMessageIter *entry, DBusMessageIter *variant) {
    check(dbus_message_iter_close_container(entry, variant));
    check(dbus_message_iter_close_container(dict, entry));
}

static void entry_basic(DBusMessageIter *dict, const char *key, int type, const void *value) {
    DBusMessageIter entry, variant;
    char sig[2] = {(char)type, 0};
    open_entry(dict, &entry, &variant, key, sig);
    check(dbus_message_iter_append_basic(&variant, type, value));
    close_entry(dict, &entry, &variant);
}

static void entry_i(DBusMessageIter *d, const char *k, dbus_int32_t v) { entry_basic(d, k, DBUS_TYPE_INT32, &v); }
static void entry_u(DBusMessageIter *d, const char *k, dbus_uint32_t v) { entry_basic(d, k, DBUS_TYPE_UINT32, &v); }
static void entry_b(DBusMessageIter *d, const char *k, dbus_bool_t v) { entry_basic(d, k, DBUS_TYPE_BOOLEAN, &v); }
static void entry_s(DBusMessageIter *d, const char *k, const char *v) { entry_basic(d, k, DBUS_TYPE_STRING, &v); }
static void entry_o(DBusMessageIter *d, const char *k, const char *v) { entry_basic(d, k, DBUS_TYPE_OBJECT_PATH, &v); }

static void append_modem_calls(DBusMessageIter *it, long m) {
    DBusMessageIter arr;
    check(dbus_message_iter_open_container(it, DBUS_TYPE_ARRAY, DBUS_TYPE_OBJECT_PATH_AS_STRING, &arr));
    for (long id = 0; id < calls_next; id++) {
        if (!calls[id].exists || calls[id].modem != m) continue;
        char path[96];
        const char *p = path;
        call_path(id, path, sizeof path);
        check(dbus_message_iter_append_basic(&arr, DBUS_TYPE_OBJECT_PATH, &p));
    }
    check(dbus_message_iter_close_container(it, &arr));
}

static void entry_strings(DBusMessageIter *dict, const char *key, const char *const *values, int n) {
    DBusMessageIter entry, variant, arr;
    open_entry(dict, &entry, &variant, key, "as");
    check(dbus_message_iter_open_container(&variant, DBUS_TYPE_ARRAY, DBUS_TYPE_STRING_AS_STRING, &arr));
    for (int i = 0; i < n; i++) check(dbus_message_iter_append_basic(&arr, DBUS_TYPE_STRING, &values[i]));
    check(dbus_message_iter_close_container(&variant, &arr));
    close_entry(dict, &entry, &variant);
}

/* The Modem interface's properties: a plausible subset of ModemManager 1.20's. */
static void append_modem_props(DBusMessageIter *dict, long m) {
    char buf[96];
    entry_s(dict, "Manufacturer", "telwatch-bench");
    entry_s(dict, "Model", "emitter");
    entry_s(dict, "Revision", "1.0");
    snprintf(buf, sizeof buf, "35000000000%04ld", m);
    entry_s(dict, "EquipmentIdentifier", buf);
    snprintf(buf, sizeof buf, "/sys/devices/bench/modem%ld", m);
    entry_s(dict, "Device", buf);
    const char *drivers[] = {"option"};
    entry_strings(dict, "Drivers", drivers, 1);
    entry_s(dict, "Plugin", "generic");
    snprintf(buf, sizeof buf, "ttyUSB%ld", m);
    entry_s(dict, "PrimaryPort", buf);
    snprintf(buf, sizeof buf, MM_ROOT "/SIM/%ld", m);
    entry_o(dict, "Sim", buf);
    entry_i(dict, "State", 8);        /* MM_MODEM_STATE_REGISTERED */
    entry_u(dict, "StateFailedReason", 0);
    entry_u(dict, "PowerState", 3);   /* MM_MODEM_POWER_STATE_ON */
    entry_u(dict, "AccessTechnologies", 1 << 14); /* LTE */
}

static void append_voice_props(DBusMessageIter *dict, long m) {
    DBusMessageIter entry, variant;
    open_entry(dict, &entry, &variant, "Calls", "ao");
    append_modem_calls(&variant, m);
    close_entry(dict, &entry, &variant);
    entry_b(dict, "EmergencyOnly", FALSE);
}

static void append_call_props(DBusMessageIter *dict, const struct call *c) {
    entry_i(dict, "State", c->state);
    entry_i(dict, "StateReason", c->reason);
    entry_i(dict, "Direction", c->direction);
    entry_s(dict, "Number", c->number);
    entry_b(dict, "Multiparty", c->multiparty);
    entry_s(dict, "AudioPort", "");
}

/* ---------------------------------------------------------------- signals */

static FILE *times;

static void send_signal(DBusMessage *m, const char *path, const char *member, int new_state, int flush) {
    dbus_uint32_t serial = 0;
    uint64_t ts = times ? now_real_ns() : 0;
    if (!dbus_connection_send(conn, m, &serial)) oom();
    if (flush) dbus_connection_flush(conn);
    if (times) fprintf(times, "%" PRIu32 " %" PRIu64 " %s %s %d\n", serial, ts, path, member, new_state);
}

static DBusMessage *state_changed(const char *path, dbus_int32_t o, dbus_int32_t n, dbus_uint32_t r) {
    DBusMessage *m = dbus_message_new_signal(path, MM_CALL_IFACE, "StateChanged");
    if (!m) oom();
    check(dbus_message_append_args(m, DBUS_TYPE_INT32, &o, DBUS_TYPE_INT32, &n, DBUS_TYPE_UINT32, &r,
                                   DBUS_TYPE_INVALID));
    return m;
}

static DBusMessage *properties_changed(const char *path, dbus_int32_t state, dbus_int32_t reason) {
    DBusMessage *m = dbus_message_new_signal(path, DBUS_INTERFACE_PROPERTIES, "PropertiesChanged");
    if (!m) oom();
    DBusMessageIter it, dict, inval;
    const char *iface = MM_CALL_IFACE;
    dbus_message_iter_init_append(m, &it);
    check(dbus_message_iter_append_basic(&it, DBUS_TYPE_STRING, &iface));
    check(dbus_message_iter_open_container(&it, DBUS_TYPE_ARRAY, "{sv}", &dict));
    entry_i(&dict, "State", state);
    entry_i(&dict, "StateReason", reason); /* the property is i, the signal's argument u */
    check(dbus_message_iter_close_container(&it, &dict));
    check(dbus_message_iter_open_container(&it, DBUS_TYPE_ARRAY, DBUS_TYPE_STRING_AS_STRING, &inval));
    check(dbus_message_iter_close_container(&it, &inval));
    return m;
}

static DBusMessage *voice_signal(long modem, const char *member, const char *call) {
    char mpath[96];
    modem_path(modem, mpath, sizeof mpath);
    DBusMessage *m = dbus_message_new_signal(mpath, MM_VOICE_IFACE, member);
    if (!m) oom();
    check(dbus_message_append_args(m, DBUS_TYPE_OBJECT_PATH, &call, DBUS_TYPE_INVALID));
    return m;
}

/* A call changes state: StateChanged, then (with_props) PropertiesChanged, as ModemManager does. */
static void change_state(long id, dbus_int32_t new_state, dbus_int32_t reason, int with_props, int flush) {
    struct call *c = &calls[id];
    char path[96];
    call_path(id, path, sizeof path);
    dbus_int32_t old = c->state;
    c->state = new_state;
    c->reason = reason;
    DBusMessage *m = state_changed(path, old, new_state, (dbus_uint32_t)reason);
    send_signal(m, path, "StateChanged", new_state, flush);
    dbus_message_unref(m);
    if (with_props) {
        m = properties_changed(path, new_state, reason);
        send_signal(m, path, "PropertiesChanged", new_state, flush);
        dbus_message_unref(m);
    }
}

/* Returns the serial of the CallAdded signal. */
static dbus_uint32_t add_call_signal(long id, uint64_t *sent_ns) {
    char path[96];
    call_path(id, path, sizeof path);
    DBusMessage *m = voice_signal(calls[id].modem, "CallAdded", path);
    dbus_uint32_t serial = 0;
    uint64_t ts = now_real_ns();
    if (!dbus_connection_send(conn, m, &serial)) oom();
    dbus_connection_flush(conn);
    dbus_message_unref(m);
    if (times) fprintf(times, "%" PRIu32 " %" PRIu64 " %s CallAdded -1\n", serial, ts, path);
    if (sent_ns) *sent_ns = ts;
    return serial;
}

static void delete_call(long id, int flush) {
    char path[96];
    call_path(id, path, sizeof path);
    DBusMessage *m = voice_signal(calls[id].modem, "CallDeleted", path);
    calls[id].exists = 0;
    send_signal(m, path, "CallDeleted", -1, flush);
    dbus_message_unref(m);
}

/* ---------------------------------------------------------------- methods */

static void reply_error(DBusMessage *msg, const char *name, const char *fmt, ...) {
    if (dbus_message_get_no_reply(msg)) return;
    char text[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    DBusMessage *r = dbus_message_new_error(msg, name, text);
    if (!r) oom();
    check(dbus_connection_send(conn, r, NULL));
    dbus_message_unref(r);
}

static void send_reply(DBusMessage *msg, DBusMessage *r) {
    if (!dbus_message_get_no_reply(msg)) check(dbus_connection_send(conn, r, NULL));
    dbus_message_unref(r);
}

static DBusMessage *new_reply(DBusMessage *msg) {
    DBusMessage *r = dbus_message_new_method_return(msg);
    if (!r) oom();
    return r;
}

static void get_managed_objects(DBusMessage *msg) {
    DBusMessage *r = new_reply(msg);
    DBusMessageIter it, objs, obj, ifaces, iface, props;
    dbus_message_iter_init_append(r, &it);
    check(dbus_message_iter_open_container(&it, DBUS_TYPE_ARRAY, "{oa{sa{sv}}}", &objs));
    for (long m = 0; m < n_modems; m++) {
        char path[96];
        const char *p = path;
        modem_path(m, path, sizeof path);
        check(dbus_message_iter_open_container(&objs, DBUS_TYPE_DICT_ENTRY, NULL, &obj));
        check(dbus_message_iter_append_basic(&obj, DBUS_TYPE_OBJECT_PATH, &p));
        check(dbus_message_iter_open_container(&obj, DBUS_TYPE_ARRAY, "{sa{sv}}", &ifaces));
        /* GDBus's object manager lists the standard interfaces too, with no properties. */
        static const char *const standard[] = {"org.freedesktop.DBus.Introspectable",
                                               "org.freedesktop.DBus.Properties", "org.freedesktop.DBus.Peer"};
        const char *names[] = {standard[0], standard[1], standard[2], MM_MODEM_IFACE, MM_VOICE_IFACE};
        for (int k = 0; k < 5; k++) {
            check(dbus_message_iter_open_container(&ifaces, DBUS_TYPE_DICT_ENTRY, NULL, &iface));
            check(dbus_message_iter_append_basic(&iface, DBUS_TYPE_STRING, &names[k]));
            check(dbus_message_iter_open_container(&iface, DBUS_TYPE_ARRAY, "{sv}", &props));
            if (k == 3) append_modem_props(&props, m);
            if (k == 4) append_voice_props(&props, m);
            check(dbus_message_iter_close_container(&iface, &props));
            check(dbus_message_iter_close_container(&ifaces, &iface));
        }
        check(dbus_message_iter_close_container(&obj, &ifaces));
        check(dbus_message_iter_close_container(&objs, &obj));
    }
    check(dbus_message_iter_close_container(&it, &objs));
    send_reply(msg, r);
}

/* Fills `dict` with the properties of `iface` on `path`; 0 when there is no such interface. */
static int object_props(const char *path, const char *iface, DBusMessageIter *dict) {
    long m = modem_of_path(path), id = call_of_path(path);
    if (m >= 0 && strcmp(iface, MM_MODEM_IFACE) == 0) append_modem_props(dict, m);
    else if (m >= 0 && strcmp(iface, MM_VOICE_IFACE) == 0) append_voice_props(dict, m);
    else if (id >= 0 && strcmp(iface, MM_CALL_IFACE) == 0) {
        append_call_props(dict, &calls[id]);
        calls[id].fetched = 1;
    } else return 0;
    return 1;
}

/* Reads of stuck calls received (and never answered); CLOCK_MONOTONIC ns of the first and the latest. */
static long stuck_reads;
static int64_t stuck_first_ns, stuck_last_ns;

static void properties_method(DBusMessage *msg, const char *path, const char *member) {
    DBusError err;
    dbus_error_init(&err);
    const char *iface = NULL, *name = NULL;
    int get_all = strcmp(member, "GetAll") == 0;
    if (!get_all && strcmp(member, "Get") != 0) {
        reply_error(msg, DBUS_ERROR_NOT_SUPPORTED, "Properties.%s is not supported here", member);
        return;
    }
    dbus_bool_t ok = get_all ? dbus_message_get_args(msg, &err, DBUS_TYPE_STRING, &iface, DBUS_TYPE_INVALID)
                             : dbus_message_get_args(msg, &err, DBUS_TYPE_STRING, &iface, DBUS_TYPE_STRING, &name,
                                                     DBUS_TYPE_INVALID);
    if (!ok) {
        reply_error(msg, DBUS_ERROR_INVALID_ARGS, "%s", err.message);
        dbus_error_free(&err);
        return;
    }
    if (modem_of_path(path) < 0 && call_of_path(path) < 0) {
        reply_error(msg, DBUS_ERROR_UNKNOWN_OBJECT, "No such object path '%s'", path);
        return;
    }
    long call_id = call_of_path(path);
    if (call_id >= 0 && calls[call_id].stuck && strcmp(iface, MM_CALL_IFACE) == 0) {
        /* A stack that does not answer: no reply at all (libdbus sends none for a handled call). */
        int64_t now = mono_ns();
        if (stuck_reads++ == 0) stuck_first_ns = now;
        stuck_last_ns = now;
        return;
    }
    /* Build the whole dict, then (Get) copy the one entry out. */
    DBusMessage *tmp = dbus_message_new_method_return(msg);
    if (!tmp) oom();
    DBusMessageIter it, dict;
    dbus_message_iter_init_append(tmp, &it);
    check(dbus_message_iter_open_container(&it, DBUS_TYPE_ARRAY, "{sv}", &dict));
    int known = object_props(path, iface, &dict);
    check(dbus_message_iter_close_container(&it, &dict));
    if (!known) {
        dbus_message_unref(tmp);
        reply_error(msg, DBUS_ERROR_INVALID_ARGS, "No such interface '%s'", iface);
        return;
    }
    int carries_number = call_id >= 0 && strcmp(iface, MM_CALL_IFACE) == 0 && (get_all || strcmp(name, "Number") == 0);
    if (carries_number && !calls[call_id].number_ns) calls[call_id].number_ns = now_real_ns();
    if (get_all) {
        send_reply(msg, tmp);
        return;
    }
    DBusMessageIter rd, entries;
    dbus_message_iter_init(tmp, &rd);
    dbus_message_iter_recurse(&rd, &entries);
    while (dbus_message_iter_get_arg_type(&entries) == DBUS_TYPE_DICT_ENTRY) {
        DBusMessageIter entry, variant;
        const char *key;
        dbus_message_iter_recurse(&entries, &entry);
        dbus_message_iter_get_basic(&entry, &key);
        if (strcmp(key, name) == 0) {
            dbus_message_iter_next(&entry);
            DBusMessage *r = new_reply(msg);
            DBusMessageIter out;
            dbus_message_iter_init_append(r, &out);
            /* copy the variant: open one of the same signature and copy its single value */
            dbus_message_iter_recurse(&entry, &variant);
            char *sig = dbus_message_iter_get_signature(&variant);
            DBusMessageIter outv;
            check(dbus_message_iter_open_container(&out, DBUS_TYPE_VARIANT, sig, &outv));
            if (dbus_type_is_basic(dbus_message_iter_get_arg_type(&variant))) {
                DBusBasicValue v;
                dbus_message_iter_get_basic(&variant, &v);
                check(dbus_message_iter_append_basic(&outv, dbus_message_iter_get_arg_type(&variant), &v));
            } else { /* an array of object paths or strings */
                DBusMessageIter in_arr, out_arr;
                dbus_message_iter_recurse(&variant, &in_arr);
                check(dbus_message_iter_open_container(&outv, DBUS_TYPE_ARRAY, sig + 1, &out_arr));
                while (dbus_message_iter_get_arg_type(&in_arr) != DBUS_TYPE_INVALID) {
                    DBusBasicValue v;
                    dbus_message_iter_get_basic(&in_arr, &v);
                    check(dbus_message_iter_append_basic(&out_arr, dbus_message_iter_get_arg_type(&in_arr), &v));
                    dbus_message_iter_next(&in_arr);
                }
                check(dbus_message_iter_close_container(&outv, &out_arr));
            }
            check(dbus_message_iter_close_container(&out, &outv));
            dbus_free(sig);
            dbus_message_unref(tmp);
            send_reply(msg, r);
            return;
        }
        dbus_message_iter_next(&entries);
    }
    dbus_message_unref(tmp);
    reply_error(msg, DBUS_ERROR_UNKNOWN_PROPERTY, "No such property '%s'", name);
}

/* Call.Hangup, as ModemManager answers it: the call goes TERMINATED with reason 4 (its
 * StateChanged and PropertiesChanged go out before the reply, as mm-base-call sends them); a call
 * already terminated is refused. */
static void hangup_method(DBusMessage *msg, long id) {
    uint64_t received = now_real_ns();
    struct call *c = &calls[id];
    if (!c->exists || c->state == ST_TERMINATED) {
        reply_error(msg, "org.freedesktop.ModemManager1.Error.Core.WrongState", "This call was already hung up");
        return;
    }
    if (!c->hangup_ns) c->hangup_ns = received;
    change_state(id, ST_TERMINATED, RS_TERMINATED, 1, 0);
    send_reply(msg, new_reply(msg));
    dbus_connection_flush(conn);
}

/* ---------------------------------------------------------------- introspection */

struct strbuf { char *s; size_t len, cap; };

static void sb_add(struct strbuf *b, const char *fmt, ...) {
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) oom();
        if (b->s && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = (b->cap ? b->cap * 2 : 4096) + (size_t)n;
        char *s = realloc(b->s, cap);
        if (!s) oom();
        b->s = s;
        b->cap = cap;
    }
}

static const char *const XML_STANDARD =
    "  <interface name=\"org.freedesktop.DBus.Introspectable\">\n"
    "    <method name=\"Introspect\"><arg type=\"s\" name=\"xml_data\" direction=\"out\"/></method>\n"
    "  </interface>\n"
    "  <interface name=\"org.freedesktop.DBus.Peer\">\n"
    "    <method name=\"Ping\"/>\n"
    "    <method name=\"GetMachineId\"><arg type=\"s\" name=\"machine_uuid\" direction=\"out\"/></method>\n"
    "  </interface>\n";

static const char *const XML_PROPERTIES =
    "  <interface name=\"org.freedesktop.DBus.Properties\">\n"
    "    <method name=\"Get\"><arg type=\"s\" name=\"interface_name\" direction=\"in\"/>"
    "<arg type=\"s\" name=\"property_name\" direction=\"in\"/><arg type=\"v\" name=\"value\" direction=\"out\"/></method>\n"
    "    <method name=\"GetAll\"><arg type=\"s\" name=\"interface_name\" direction=\"in\"/>"
    "<arg type=\"a{sv}\" name=\"properties\" direction=\"out\"/></method>\n"
    "    <signal name=\"PropertiesChanged\"><arg type=\"s\" name=\"interface_name\"/>"
    "<arg type=\"a{sv}\" name=\"changed_properties\"/><arg type=\"as\" name=\"invalidated_properties\"/></signal>\n"
    "  </interface>\n";

static void introspect(DBusMessage *msg, const char *path) {
    struct strbuf b = {0};
    sb_add(&b, "%s", DBUS_INTROSPECT_1_0_XML_DOCTYPE_DECL_NODE);
    sb_add(&b, "<node>\n%s", XML_STANDARD);
    long m = modem_of_path(path), id = call_of_path(path);
    if (strcmp(path, "/") == 0) sb_add(&b, "  <node name=\"org\"/>\n");
    else if (strcmp(path, "/org") == 0) sb_add(&b, "  <node name=\"freedesktop\"/>\n");
    else if (strcmp(path, "/org/freedesktop") == 0) sb_add(&b, "  <node name=\"ModemManager1\"/>\n");
    else if (strcmp(path, MM_ROOT) == 0) {
        sb_add(&b, "  <interface name=\"" OM_IFACE "\">\n"
                   "    <method name=\"GetManagedObjects\"><arg type=\"a{oa{sa{sv}}}\" "
                   "name=\"object_paths_interfaces_and_properties\" direction=\"out\"/></method>\n"
                   "    <signal name=\"InterfacesAdded\"><arg type=\"o\" name=\"object_path\"/>"
                   "<arg type=\"a{sa{sv}}\" name=\"interfaces_and_properties\"/></signal>\n"
                   "    <signal name=\"InterfacesRemoved\"><arg type=\"o\" name=\"object_path\"/>"
                   "<arg type=\"as\" name=\"interfaces\"/></signal>\n"
                   "  </interface>\n");
        if (n_modems > 0) sb_add(&b, "  <node name=\"Modem\"/>\n");
        for (long i = 0; i < calls_next; i++)
            if (calls[i].exists) { sb_add(&b, "  <node name=\"Call\"/>\n"); break; }
    } else if (strcmp(path, MM_ROOT "/Modem") == 0) {
        for (long i = 0; i < n_modems; i++) sb_add(&b, "  <node name=\"%ld\"/>\n", i);
    } else if (strcmp(path, MM_ROOT "/Call") == 0) {
        for (long i = 0; i < calls_next; i++)
            if (calls[i].exists) sb_add(&b, "  <node name=\"%ld\"/>\n", i);
    } else if (m >= 0) {
        sb_add(&b, "%s", XML_PROPERTIES);
        sb_add(&b, "  <interface name=\"" MM_MODEM_IFACE "\">\n"
                   "    <property type=\"s\" name=\"Manufacturer\" access=\"read\"/>\n"
                   "    <property type=\"s\" name=\"Model\" access=\"read\"/>\n"
                   "    <property type=\"s\" name=\"Revision\" access=\"read\"/>\n"
                   "    <property type=\"s\" name=\"EquipmentIdentifier\" access=\"read\"/>\n"
                   "    <property type=\"s\" name=\"Device\" access=\"read\"/>\n"
                   "    <property type=\"as\" name=\"Drivers\" access=\"read\"/>\n"
                   "    <property type=\"s\" name=\"Plugin\" access=\"read\"/>\n"
                   "    <property type=\"s\" name=\"PrimaryPort\" access=\"read\"/>\n"
                   "    <property type=\"o\" name=\"Sim\" access=\"read\"/>\n"
                   "    <property type=\"i\" name=\"State\" access=\"read\"/>\n"
                   "    <property type=\"u\" name=\"StateFailedReason\" access=\"read\"/>\n"
                   "    <property type=\"u\" name=\"PowerState\" access=\"read\"/>\n"
                   "    <property type=\"u\" name=\"AccessTechnologies\" access=\"read\"/>\n"
                   "  </interface>\n"
                   "  <interface name=\"" MM_VOICE_IFACE "\">\n"
                   "    <method name=\"ListCalls\"><arg type=\"ao\" name=\"result\" direction=\"out\"/></method>\n"
                   "    <signal name=\"CallAdded\"><arg type=\"o\" name=\"path\"/></signal>\n"
                   "    <signal name=\"CallDeleted\"><arg type=\"o\" name=\"path\"/></signal>\n"
                   "    <property type=\"ao\" name=\"Calls\" access=\"read\"/>\n"
                   "    <property type=\"b\" name=\"EmergencyOnly\" access=\"read\"/>\n"
                   "  </interface>\n");
    } else if (id >= 0) {
        sb_add(&b, "%s", XML_PROPERTIES);
        sb_add(&b, "  <interface name=\"" MM_CALL_IFACE "\">\n"
                   "    <method name=\"Hangup\"/>\n"
                   "    <signal name=\"StateChanged\"><arg type=\"i\" name=\"old\"/><arg type=\"i\" name=\"new\"/>"
                   "<arg type=\"u\" name=\"reason\"/></signal>\n"
                   "    <property type=\"i\" name=\"State\" access=\"read\"/>\n"
                   "    <property type=\"i\" name=\"StateReason\" access=\"read\"/>\n"
                   "    <property type=\"i\" name=\"Direction\" access=\"read\"/>\n"
                   "    <property type=\"s\" name=\"Number\" access=\"read\"/>\n"
                   "    <property type=\"b\" name=\"Multiparty\" access=\"read\"/>\n"
                   "    <property type=\"s\" name=\"AudioPort\" access=\"read\"/>\n"
                   "  </interface>\n");
    } else {
        free(b.s);
        reply_error(msg, DBUS_ERROR_UNKNOWN_OBJECT, "No such object path '%s'", path);
        return;
    }
    sb_add(&b, "</node>\n");
    DBusMessage *r = new_reply(msg);
    const char *xml = b.s;
    check(dbus_message_append_args(r, DBUS_TYPE_STRING, &xml, DBUS_TYPE_INVALID));
    send_reply(msg, r);
    free(b.s);
}

static DBusHandlerResult on_message(DBusConnection *c, DBusMessage *msg, void *data) {
    (void)c;
    (void)data;
    if (dbus_message_get_type(msg) != DBUS_MESSAGE_TYPE_METHOD_CALL) return DBUS_HANDLER_RESULT_NOT_YET_HANDLED;
    const char *path = dbus_message_get_path(msg), *iface = dbus_message_get_interface(msg),
               *member = dbus_message_get_member(msg);
    if (!path || !member) return DBUS_HANDLER_RESULT_NOT_YET_HANDLED;
    /* org.freedesktop.DBus.Peer is answered by libdbus itself. */
    if (iface && strcmp(iface, DBUS_INTERFACE_PEER) == 0) return DBUS_HANDLER_RESULT_NOT_YET_HANDLED;
    if ((!iface || strcmp(iface, INTROSPECT_IFACE) == 0) && strcmp(member, "Introspect") == 0) {
        introspect(msg, path);
    } else if (iface && strcmp(iface, DBUS_INTERFACE_PROPERTIES) == 0) {
        properties_method(msg, path, member);
    } else if (strcmp(path, MM_ROOT) == 0 && (!iface || strcmp(iface, OM_IFACE) == 0) &&
               strcmp(member, "GetManagedObjects") == 0) {
        get_managed_objects(msg);
    } else if (modem_of_path(path) >= 0 && (!iface || strcmp(iface, MM_VOICE_IFACE) == 0) &&
               strcmp(member, "ListCalls") == 0) {
        DBusMessage *r = new_reply(msg);
        DBusMessageIter it;
        dbus_message_iter_init_append(r, &it);
        append_modem_calls(&it, modem_of_path(path));
        send_reply(msg, r);
    } else if (call_of_path(path) >= 0 && (!iface || strcmp(iface, MM_CALL_IFACE) == 0) &&
               strcmp(member, "Hangup") == 0) {
        hangup_method(msg, call_of_path(path));
    } else if (modem_of_path(path) < 0 && call_of_path(path) < 0 && strcmp(path, MM_ROOT) != 0) {
        reply_error(msg, DBUS_ERROR_UNKNOWN_OBJECT, "No such object path '%s'", path);
    } else {
        reply_error(msg, DBUS_ERROR_UNKNOWN_METHOD, "No such method '%s' on interface '%s' at '%s'", member,
                    iface ? iface : "(none)", path);
    }
    return DBUS_HANDLER_RESULT_HANDLED;
}

/* ---------------------------------------------------------------- the loop */

static void dispatch_all(void) {
    while (dbus_connection_dispatch(conn) == DBUS_DISPATCH_DATA_REMAINS) {}
    if (!dbus_connection_get_is_connected(conn)) die("disconnected from the bus", NULL);
}

static void on_stop(int sig) { (void)sig; stop_requested = 1; }

/* Reads what stdin has; returns a complete line (static buffer) or NULL. */
static char *stdin_line(void) {
    static char line[4096];
    char *nl = memchr(stdin_buf, '\n', stdin_len);
    if (!nl) {
        if (stdin_len == sizeof stdin_buf) stdin_len = 0; /* an absurd line: forget it */
        return NULL;
    }
    size_t n = (size_t)(nl - stdin_buf);
    memcpy(line, stdin_buf, n);
    line[n] = 0;
    memmove(stdin_buf, nl + 1, stdin_len - n - 1);
    stdin_len -= n + 1;
    return line;
}

static int pending_line(void) { return memchr(stdin_buf, '\n', stdin_len) != NULL; }

/* Answers method calls until `done()` says so, `deadline_ns` (CLOCK_MONOTONIC; <0: none) passes,
 * SIGTERM/SIGINT arrives, or (watch_stdin) a full line or end of input is on stdin.
 * The only wait is ppoll() on the bus socket (and stdin): no wakeups when nothing happens. */
static void serve_until(int64_t deadline_ns, int (*done)(void), int watch_stdin) {
    int fd = -1;
    if (!dbus_connection_get_unix_fd(conn, &fd)) die("no unix fd for the connection", NULL);
    sigset_t unblocked;
    sigprocmask(SIG_SETMASK, NULL, &unblocked);
    sigdelset(&unblocked, SIGTERM);
    sigdelset(&unblocked, SIGINT);
    for (;;) {
        dispatch_all();
        if (dbus_connection_has_messages_to_send(conn)) dbus_connection_flush(conn);
        if (stop_requested || (done && done())) return;
        if (watch_stdin && (pending_line() || !stdin_open)) return;
        struct timespec ts, *tsp = NULL;
        if (deadline_ns >= 0) {
            int64_t left = deadline_ns - mono_ns();
            if (left <= 0) return;
            ts.tv_sec = left / 1000000000;
            ts.tv_nsec = left % 1000000000;
            tsp = &ts;
        }
        struct pollfd pfd[2] = {{.fd = fd, .events = POLLIN}, {.fd = 0, .events = POLLIN}};
        int n = ppoll(pfd, watch_stdin && stdin_open ? 2 : 1, tsp, &unblocked);
        if (n < 0) {
            if (errno == EINTR) continue;
            die("ppoll failed", NULL);
        }
        if (pfd[0].revents) {
            if (!dbus_connection_read_write(conn, 0)) die("disconnected from the bus", NULL);
        }
        if (watch_stdin && stdin_open && pfd[1].revents) {
            ssize_t r = read(0, stdin_buf + stdin_len, sizeof stdin_buf - stdin_len);
            if (r <= 0) stdin_open = 0;
            else stdin_len += (size_t)r;
        }
    }
}

/* ---------------------------------------------------------------- storm */

/* A call's transitions in the storm: the head takes it to ACTIVE, then hold/resume, and its last
 * transition terminates it. */
struct step { dbus_int32_t new_state, reason; };

static struct step storm_step(const struct call *c, int last) {
    if (last) return (struct step){ST_TERMINATED, RS_TERMINATED};
    switch (c->state) {
    case ST_RINGING_IN: return (struct step){ST_ACTIVE, RS_ACCEPTED};
    case ST_DIALING: return (struct step){ST_RINGING_OUT, RS_OUTGOING_STARTED};
    case ST_RINGING_OUT: return (struct step){ST_ACTIVE, RS_ACCEPTED};
    case ST_ACTIVE: return (struct step){ST_HELD, RS_UNKNOWN};
    default: return (struct step){ST_ACTIVE, RS_UNKNOWN}; /* HELD (or anything else): resumed */
    }
}

/* Message templates per (call, old state, new state), built once: each send is then a
 * dbus_message_copy(), about twice as cheap as marshalling afresh. */
#define NSTATES 8
static DBusMessage **templates; /* [call][old][new][part] */

static DBusMessage *storm_template(long id, struct step s, dbus_int32_t old, int part) {
    size_t k = (((size_t)id * NSTATES + (size_t)old) * NSTATES + (size_t)s.new_state) * 2 + (size_t)part;
    if (!templates[k]) {
        char path[96];
        call_path(id, path, sizeof path);
        templates[k] = part == 0 ? state_changed(path, old, s.new_state, (dbus_uint32_t)s.reason)
                                 : properties_changed(path, s.new_state, s.reason);
    }
    return templates[k];
}

static long storm(long count, long n_calls, int with_props, long spacing_us, long queue_kb) {
    const int parts = with_props ? 2 : 1;
    const long transitions = (count + parts - 1) / parts;
    if (!templates) templates = calloc((size_t)n_calls * NSTATES * NSTATES * 2, sizeof *templates);
    if (!templates) oom();
    const long queue_limit = queue_kb * 1024;
    long sent = 0, idle = 0;
    for (long event = 0; sent < count && idle < n_calls; event++) {
        /* event k is call k % C's (k / C)-th transition; a call's last one terminates it */
        const long id = event % n_calls, nth = event / n_calls;
        const long per_call = transitions / n_calls + (id < transitions % n_calls ? 1 : 0);
        struct call *c = &calls[id];
        if (c->state == ST_TERMINATED) { /* a storm after a storm: these calls are over */
            idle++;
            continue;
        }
        idle = 0;
        struct step s = storm_step(c, nth == per_call - 1);
        const dbus_int32_t old = c->state;
        c->state = s.new_state;
        c->reason = s.reason;
        for (int part = 0; part < parts && sent < count; part++) {
            DBusMessage *m = dbus_message_copy(storm_template(id, s, old, part));
            if (!m) oom();
            char path[96];
            if (times) call_path(id, path, sizeof path);
            send_signal(m, path, part == 0 ? "StateChanged" : "PropertiesChanged", s.new_state, spacing_us > 0);
            dbus_message_unref(m);
            sent++;
            if (spacing_us > 0) {
                serve_until(mono_ns() + spacing_us * 1000, NULL, 0);
            } else if (dbus_connection_get_outgoing_size(conn) > queue_limit) {
                dbus_connection_flush(conn);
            }
            if ((sent & 1023) == 0) {
                /* Answer whatever arrived (method calls) so nothing queues up on our side. */
                dbus_connection_read_write(conn, 0);
                dispatch_all();
            }
        }
    }
    dbus_connection_flush(conn);
    return sent;
}

/* ---------------------------------------------------------------- lifecycles */

static long waiting_for;
static int fetched_waiting(void) { return !calls[waiting_for].exists || calls[waiting_for].fetched; }
static int hung_up_waiting(void) { return !calls[waiting_for].exists || calls[waiting_for].hangup_ns != 0; }

static long lifecycles(long n, long spacing_us, long wait_fetch_ms) {
    static long next_modem;
    long sent = 0;
    for (long i = 0; i < n && !stop_requested; i++) {
        long id = new_call((int)(next_modem++ % n_modems), ST_RINGING_IN, RS_INCOMING_NEW, DIR_INCOMING);
        add_call_signal(id, NULL);
        sent++;
        if (wait_fetch_ms > 0) {
            waiting_for = id;
            serve_until(mono_ns() + wait_fetch_ms * 1000000, fetched_waiting, 0);
        }
        serve_until(mono_ns() + spacing_us * 1000, NULL, 0);
        change_state(id, ST_ACTIVE, RS_ACCEPTED, 1, 1);
        sent += 2;
        serve_until(mono_ns() + spacing_us * 1000, NULL, 0);
        change_state(id, ST_TERMINATED, RS_TERMINATED, 1, 1);
        sent += 2;
        serve_until(mono_ns() + spacing_us * 1000, NULL, 0);
        delete_call(id, 1);
        sent++;
        serve_until(mono_ns() + spacing_us * 1000, NULL, 0);
    }
    dbus_connection_flush(conn);
    return sent;
}

/* ---------------------------------------------------------------- interactive */

static int opt_with_props;
static long opt_queue_kb = 256, opt_storm_calls;

static void report_sent(long sent, double elapsed) {
    printf("sent %ld in %.3f s (%.0f/s)\n", sent, elapsed, elapsed > 0 ? (double)sent / elapsed : 0.0);
}

static int set_times(const char *path) {
    if (times && fclose(times) != 0) fprintf(stderr, "emitter: writing the times file failed: %s\n", strerror(errno));
    times = NULL;
    if (!path || strcmp(path, "-") == 0) return 1;
    times = fopen(path, "w");
    if (!times) fprintf(stderr, "emitter: cannot write %s: %s\n", path, strerror(errno));
    return times != NULL;
}

/* Commands on stdin, one per line; each answers one line on stdout. */
static void interactive(void) {
    long live = -1, rings = 0;
    for (;;) {
        serve_until(-1, NULL, 1);
        if (stop_requested) return;
        char *line = stdin_line();
        if (!line) {
            if (!stdin_open) return;
            continue;
        }
        char path[96], arg[512];
        long a = 0, b = 0, c = 0;
        if (strcmp(line, "ring") == 0) {
            live = new_call((int)(rings++ % n_modems), ST_RINGING_IN, RS_INCOMING_NEW, DIR_INCOMING);
            uint64_t ns;
            dbus_uint32_t serial = add_call_signal(live, &ns);
            call_path(live, path, sizeof path);
            printf("ring %s %" PRIu32 " %" PRIu64 "\n", path, serial, ns);
        } else if (strcmp(line, "hangup") == 0) {
            if (live < 0) {
                printf("error no live call\n");
            } else {
                uint64_t ns = now_real_ns();
                change_state(live, ST_TERMINATED, RS_TERMINATED, 1, 1);
                delete_call(live, 1);
                call_path(live, path, sizeof path);
                printf("hangup %s 0 %" PRIu64 "\n", path, ns);
                live = -1;
            }
        } else if (sscanf(line, "stuck %ld", &a) == 1 && a >= 1) {
            long first = -1, id = -1;
            for (long i = 0; i < a && !stop_requested; i++) {
                id = new_call((int)(i % n_modems), ST_RINGING_IN, RS_INCOMING_NEW, DIR_INCOMING);
                calls[id].stuck = 1;
                if (first < 0) first = id;
                add_call_signal(id, NULL);
                if ((i & 63) == 63) { /* keep answering meanwhile (nothing queues up on our side) */
                    dbus_connection_read_write(conn, 0);
                    dispatch_all();
                }
            }
            char last[96];
            call_path(first, path, sizeof path);
            call_path(id, last, sizeof last);
            printf("stuck %ld %s %s\n", a, path, last);
        } else if (strncmp(line, "screen-ring", 11) == 0 && (line[11] == 0 || line[11] == ' ')) {
            a = 5000;
            if (line[11] && (sscanf(line + 11, "%ld", &a) != 1 || a < 0)) {
                printf("error screen-ring [WAIT_MS]\n");
                fflush(stdout);
                continue;
            }
            long id = new_call((int)(rings++ % n_modems), ST_RINGING_IN, RS_INCOMING_NEW, DIR_INCOMING);
            uint64_t ns;
            dbus_uint32_t serial = add_call_signal(id, &ns);
            waiting_for = id;
            serve_until(mono_ns() + a * 1000000, hung_up_waiting, 0);
            struct call *sc = &calls[id];
            live = sc->hangup_ns ? -1 : id;
            call_path(id, path, sizeof path);
            printf("screen-ring %s %" PRIu32 " %" PRIu64 " %" PRId64 " %" PRId64 "\n", path, serial, ns,
                   sc->number_ns ? (int64_t)sc->number_ns : -1, sc->hangup_ns ? (int64_t)sc->hangup_ns : -1);
        } else if (strcmp(line, "delete") == 0) {
            long gone = 0;
            for (long id = 0; id < calls_next; id++) {
                if (calls[id].exists && calls[id].state == ST_TERMINATED && !calls[id].stuck) {
                    delete_call(id, 0);
                    gone++;
                }
            }
            dbus_connection_flush(conn);
            printf("delete %ld\n", gone);
        } else if (strcmp(line, "unstick") == 0) {
            /* The stuck calls go (CallDeleted each); their reads stay unanswered, counted by the bus. */
            long gone = 0;
            for (long id = 0; id < calls_next; id++) {
                if (!calls[id].exists || !calls[id].stuck) continue;
                delete_call(id, 0);
                if ((++gone & 63) == 0) {
                    dbus_connection_read_write(conn, 0);
                    dispatch_all();
                }
            }
            dbus_connection_flush(conn);
            printf("unstick %ld\n", gone);
        } else if (strcmp(line, "stuck-reads") == 0) {
            int64_t now = mono_ns();
            printf("stuck-reads %ld %.3f %.3f\n", stuck_reads,
                   stuck_reads ? (double)(now - stuck_first_ns) / 1e6 : -1.0,
                   stuck_reads ? (double)(now - stuck_last_ns) / 1e6 : -1.0);
        } else if (sscanf(line, "lifecycles %ld %ld %ld", &a, &b, &c) >= 1 && a >= 0 && b >= 0 && c >= 0) {
            double t0 = now_mono();
            long sent = lifecycles(a, b, c);
            if (times) fflush(times);
            report_sent(sent, now_mono() - t0);
        } else if (sscanf(line, "storm %ld", &a) == 1 && a >= 0 && opt_storm_calls < 1) {
            printf("error the storm needs --calls of at least 1\n");
        } else if (sscanf(line, "storm %ld", &a) == 1 && a >= 0) {
            double t0 = now_mono();
            long sent = storm(a, opt_storm_calls, opt_with_props, 0, opt_queue_kb);
            if (times) fflush(times);
            report_sent(sent, now_mono() - t0);
        } else if (sscanf(line, "times %511s", arg) == 1) {
            printf(set_times(arg) ? "ok\n" : "error cannot write %s\n", arg);
        } else if (strcmp(line, "quit") == 0) {
            return;
        } else if (line[0]) {
            printf("error unknown command '%s'\n", line);
        }
        fflush(stdout);
    }
}

/* ---------------------------------------------------------------- main */

static void usage(FILE *f) {
    fprintf(f,
            "usage: emitter [--mode storm|lifecycles|interactive|serve] [--address A] [--modems M] [--calls C]\n"
            "               [--count N] [--with-properties] [--spacing-us U] [--times PATH] [--queue-kb K]\n"
            "               [--wait-fetch-ms W] [--ready-file PATH] [--ready-timeout S] [--wait-go] [--linger]\n"
            "  --mode M           storm (default), lifecycles, interactive, serve (see the top of emitter.c)\n"
            "  --address A        bus address (default: $DBUS_SYSTEM_BUS_ADDRESS)\n"
            "  --modems M         modems /org/freedesktop/ModemManager1/Modem/0..M-1 (default 4)\n"
            "  --calls C          calls that exist from the start, Call/0..C-1 (default: 200 in storm, else 0)\n"
            "  --count N          storm: signals (default 100000); lifecycles: call lifecycles (default 1000)\n"
            "  --with-properties  storm: each StateChanged is followed by PropertiesChanged (total stays N)\n"
            "  --spacing-us U     storm: sleep U µs between signals, flushing each; lifecycles: between steps\n"
            "  --times PATH       write \"serial send_time_ns path member new_state\" per signal\n"
            "  --queue-kb K       storm: flush when libdbus's outgoing queue passes K KiB (default 256)\n"
            "  --wait-fetch-ms W  lifecycles: after CallAdded wait up to W ms for the call's GetAll (default 0)\n"
            "  --ready-file PATH  after owning the name, wait until PATH exists before sending\n"
            "  --ready-timeout S  give up waiting for the ready file or go after S seconds (default 60)\n"
            "  --wait-go          wait for a line \"go\" on stdin before sending\n"
            "  --linger           after sending, keep answering methods until SIGTERM/SIGINT\n");
}

static long parse_long(const char *opt, const char *s, long min) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < min) {
        fprintf(stderr, "emitter: bad value for %s: %s\n", opt, s);
        exit(64);
    }
    return v;
}

static const char *ready_path;
static int ready_file_exists(void) {
    struct stat st;
    return stat(ready_path, &st) == 0;
}

int main(int argc, char **argv) {
    const char *address = getenv("DBUS_SYSTEM_BUS_ADDRESS");
    const char *mode = "storm";
    long count = -1, n_calls = -1, spacing_us = 0, queue_kb = 256, wait_fetch_ms = 0;
    double ready_timeout = 60;
    int with_props = 0, wait_go = 0, linger = 0;
    const char *ready_file = NULL, *times_path = NULL;

    enum { O_ADDRESS = 1, O_COUNT, O_CALLS, O_MODEMS, O_PROPS, O_READY, O_READY_TIMEOUT, O_SPACING,
           O_TIMES, O_QUEUE, O_MODE, O_WAIT_FETCH, O_WAIT_GO, O_LINGER };
    static const struct option opts[] = {
        {"mode", required_argument, NULL, O_MODE},
        {"address", required_argument, NULL, O_ADDRESS},
        {"count", required_argument, NULL, O_COUNT},
        {"calls", required_argument, NULL, O_CALLS},
        {"modems", required_argument, NULL, O_MODEMS},
        {"with-properties", no_argument, NULL, O_PROPS},
        {"ready-file", required_argument, NULL, O_READY},
        {"ready-timeout", required_argument, NULL, O_READY_TIMEOUT},
        {"spacing-us", required_argument, NULL, O_SPACING},
        {"times", required_argument, NULL, O_TIMES},
        {"queue-kb", required_argument, NULL, O_QUEUE},
        {"wait-fetch-ms", required_argument, NULL, O_WAIT_FETCH},
        {"wait-go", no_argument, NULL, O_WAIT_GO},
        {"linger", no_argument, NULL, O_LINGER},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case O_MODE: mode = optarg; break;
        case O_ADDRESS: address = optarg; break;
        case O_COUNT: count = parse_long("--count", optarg, 0); break;
        case O_CALLS: n_calls = parse_long("--calls", optarg, 0); break;
        case O_MODEMS: n_modems = parse_long("--modems", optarg, 1); break;
        case O_PROPS: with_props = 1; break;
        case O_READY: ready_file = optarg; break;
        case O_READY_TIMEOUT: ready_timeout = (double)parse_long("--ready-timeout", optarg, 0); break;
        case O_SPACING: spacing_us = parse_long("--spacing-us", optarg, 0); break;
        case O_TIMES: times_path = optarg; break;
        case O_QUEUE: queue_kb = parse_long("--queue-kb", optarg, 1); break;
        case O_WAIT_FETCH: wait_fetch_ms = parse_long("--wait-fetch-ms", optarg, 0); break;
        case O_WAIT_GO: wait_go = 1; break;
        case O_LINGER: linger = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 64;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "emitter: unexpected argument: %s\n", argv[optind]);
        usage(stderr);
        return 64;
    }
    const int is_storm = strcmp(mode, "storm") == 0, is_life = strcmp(mode, "lifecycles") == 0,
              is_inter = strcmp(mode, "interactive") == 0 || strcmp(mode, "ring") == 0, is_serve = strcmp(mode, "serve") == 0;
    if (!is_storm && !is_life && !is_inter && !is_serve) {
        fprintf(stderr, "emitter: unknown --mode %s\n", mode);
        return 64;
    }
    if (!address || !*address) {
        fprintf(stderr, "emitter: no bus address: pass --address or set DBUS_SYSTEM_BUS_ADDRESS\n");
        return 64;
    }
    if (n_calls < 0) n_calls = is_storm ? 200 : 0;
    opt_with_props = with_props;
    opt_queue_kb = queue_kb;
    opt_storm_calls = n_calls;
    if (count < 0) count = is_storm ? 100000 : 1000;
    if (is_storm && n_calls < 1) {
        fprintf(stderr, "emitter: the storm needs --calls of at least 1\n");
        return 64;
    }
    if (ready_file && wait_go) {
        fprintf(stderr, "emitter: --ready-file and --wait-go exclude each other\n");
        return 64;
    }

    /* SIGTERM/SIGINT are only delivered inside ppoll(): a clean exit between two sends. */
    struct sigaction sa = {.sa_handler = on_stop};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    sigprocmask(SIG_BLOCK, &block, NULL);

    if (times_path) {
        times = fopen(times_path, "w");
        if (!times) {
            fprintf(stderr, "emitter: cannot write %s: %s\n", times_path, strerror(errno));
            return 2;
        }
    }

    /* The calls that exist before anyone looks: even ones ringing in, odd ones dialing out. */
    for (long i = 0; i < n_calls; i++) {
        if (i % 2 == 0) new_call((int)(i % n_modems), ST_RINGING_IN, RS_INCOMING_NEW, DIR_INCOMING);
        else new_call((int)(i % n_modems), ST_DIALING, RS_OUTGOING_STARTED, DIR_OUTGOING);
    }

    DBusError err;
    dbus_error_init(&err);
    conn = dbus_connection_open_private(address, &err);
    if (!conn) die("cannot connect to the bus", &err);
    dbus_connection_set_exit_on_disconnect(conn, FALSE);
    if (!dbus_bus_register(conn, &err)) die("Hello failed", &err);
    if (!dbus_connection_add_filter(conn, on_message, NULL, NULL)) oom();

    int r = dbus_bus_request_name(conn, MM_NAME, DBUS_NAME_FLAG_DO_NOT_QUEUE, &err);
    if (r == -1) die("RequestName(" MM_NAME ") failed", &err);
    if (r != DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER && r != DBUS_REQUEST_NAME_REPLY_ALREADY_OWNER) {
        fprintf(stderr, "emitter: could not own %s (reply %d: %s)\n", MM_NAME, r,
                r == DBUS_REQUEST_NAME_REPLY_EXISTS ? "another connection owns it" : "not primary owner");
        return 2;
    }
    const int sends = is_storm || is_life;
    fprintf(stderr, "emitter: %s owns %s (%ld modems, %ld calls); %s\n", dbus_bus_get_unique_name(conn), MM_NAME,
            n_modems, n_calls,
            !sends ? "serving" : ready_file ? "waiting for ready file" : wait_go ? "waiting for go" : "sending");

    if (is_serve) {
        serve_until(-1, NULL, 0);
    } else if (is_inter) {
        interactive();
    } else {
        if (ready_file) {
            ready_path = ready_file;
            int64_t deadline = mono_ns() + (int64_t)(ready_timeout * 1e9);
            /* The ready file cannot be polled: look every millisecond, answering meanwhile. */
            while (!ready_file_exists() && !stop_requested) {
                if (mono_ns() > deadline) {
                    fprintf(stderr, "emitter: ready file %s did not appear within %.0f s\n", ready_file, ready_timeout);
                    return 3;
                }
                serve_until(mono_ns() + 1000000, ready_file_exists, 0);
            }
        } else if (wait_go) {
            int64_t deadline = mono_ns() + (int64_t)(ready_timeout * 1e9);
            for (;;) {
                serve_until(deadline, NULL, 1);
                char *line = pending_line() ? stdin_line() : NULL;
                if (line && strcmp(line, "go") == 0) break;
                if (stop_requested || !stdin_open || mono_ns() >= deadline) {
                    fprintf(stderr, "emitter: no \"go\" on stdin%s\n", stop_requested ? " (stopped)" : "");
                    return 3;
                }
            }
        }
        if (stop_requested) return 1;
        double t0 = now_mono();
        long sent = is_storm ? storm(count, n_calls, with_props, spacing_us, queue_kb)
                             : lifecycles(count, spacing_us, wait_fetch_ms);
        double elapsed = now_mono() - t0;
        if (!dbus_connection_get_is_connected(conn)) die("disconnected from the bus before the end", NULL);
        if (times && fflush(times) != 0) {
            fprintf(stderr, "emitter: writing %s failed: %s\n", times_path, strerror(errno));
            return 2;
        }
        report_sent(sent, elapsed);
        fflush(stdout);
        if (linger) serve_until(-1, NULL, 0);
    }

    if (times && fclose(times) != 0) {
        fprintf(stderr, "emitter: writing %s failed: %s\n", times_path, strerror(errno));
        return 2;
    }
    if (templates) {
        for (size_t i = 0; i < (size_t)n_calls * NSTATES * NSTATES * 2; i++)
            if (templates[i]) dbus_message_unref(templates[i]);
        free(templates);
    }
    free(calls);
    dbus_connection_close(conn);
    dbus_connection_unref(conn);
    return 0;
}
