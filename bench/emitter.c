/* bench/emitter.c — a ModemManager-shaped signal storm for telwatch's benchmarks.
 *
 * Build:  cc -O2 -o bench/out/emitter bench/emitter.c $(pkg-config --cflags --libs dbus-1)
 *
 * Connects to a bus (--address, else $DBUS_SYSTEM_BUS_ADDRESS), owns
 * org.freedesktop.ModemManager1 (DO_NOT_QUEUE; exits 2 if it cannot), optionally waits
 * for a ready file, then emits --count signals with the real daemon's shapes:
 *
 *   org.freedesktop.ModemManager1.Call.StateChanged (i old, i new, u reason)
 *   org.freedesktop.DBus.Properties.PropertiesChanged
 *       (s "org.freedesktop.ModemManager1.Call", a{sv} {"State": <i>, "StateReason": <i>}, as [])
 *
 * on /org/freedesktop/ModemManager1/Call/0 .. Call/C-1, round robin. With --with-properties
 * every StateChanged is followed by its PropertiesChanged (the total is still --count).
 * Each call walks a realistic cycle: an answered incoming call (3→4, 4→7), then an outgoing
 * call on the same path (0→1, 1→2, 2→4, 4→7).
 *
 * Sends are not flushed one by one: libdbus queues outgoing data and writes what the socket
 * takes; we flush only when the queue passes --queue-kb (and at the end), so the emitter keeps
 * the bus's socket full. When the bus daemon is slower than us it simply reads us more slowly.
 *
 * Latency mode: --spacing-us U sleeps U µs between signals and flushes each one; --times PATH
 * writes "serial send_time_ns" (CLOCK_REALTIME, taken just before the send) per signal.
 *
 * stdout: exactly one line at the end, "sent N in S s (R/s)". Diagnostics go to stderr;
 * "emitter: waiting for ready file" is printed once the name is owned (harnesses wait for it).
 */
#define _GNU_SOURCE
#include <dbus/dbus.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MM_NAME "org.freedesktop.ModemManager1"
#define MM_CALL_IFACE "org.freedesktop.ModemManager1.Call"
#define MM_CALL_PREFIX "/org/freedesktop/ModemManager1/Call/"

/* MMCallState / MMCallStateReason values, see design.md §3. */
struct transition { dbus_int32_t old_state, new_state; dbus_uint32_t reason; };
static const struct transition cycle[] = {
    {3, 4, 3}, /* ringing-in -> active, accepted */
    {4, 7, 4}, /* active -> terminated, terminated */
    {0, 1, 1}, /* unknown -> dialing, outgoing-started */
    {1, 2, 1}, /* dialing -> ringing-out */
    {2, 4, 3}, /* ringing-out -> active, accepted */
    {4, 7, 4}, /* active -> terminated */
};
#define CYCLE_LEN (sizeof cycle / sizeof cycle[0])

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

static uint64_t now_real_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static DBusMessage *state_changed(const char *path, const struct transition *t) {
    DBusMessage *m = dbus_message_new_signal(path, MM_CALL_IFACE, "StateChanged");
    if (!m) oom();
    dbus_int32_t o = t->old_state, n = t->new_state;
    dbus_uint32_t r = t->reason;
    if (!dbus_message_append_args(m, DBUS_TYPE_INT32, &o, DBUS_TYPE_INT32, &n, DBUS_TYPE_UINT32, &r,
                                  DBUS_TYPE_INVALID))
        oom();
    return m;
}

static void append_int_entry(DBusMessageIter *dict, const char *key, dbus_int32_t value) {
    DBusMessageIter entry, variant;
    if (!dbus_message_iter_open_container(dict, DBUS_TYPE_DICT_ENTRY, NULL, &entry) ||
        !dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &key) ||
        !dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, DBUS_TYPE_INT32_AS_STRING, &variant) ||
        !dbus_message_iter_append_basic(&variant, DBUS_TYPE_INT32, &value) ||
        !dbus_message_iter_close_container(&entry, &variant) ||
        !dbus_message_iter_close_container(dict, &entry))
        oom();
}

static DBusMessage *properties_changed(const char *path, const struct transition *t) {
    DBusMessage *m = dbus_message_new_signal(path, DBUS_INTERFACE_PROPERTIES, "PropertiesChanged");
    if (!m) oom();
    DBusMessageIter it, dict, inval;
    const char *iface = MM_CALL_IFACE;
    dbus_message_iter_init_append(m, &it);
    if (!dbus_message_iter_append_basic(&it, DBUS_TYPE_STRING, &iface) ||
        !dbus_message_iter_open_container(&it, DBUS_TYPE_ARRAY, "{sv}", &dict))
        oom();
    append_int_entry(&dict, "State", t->new_state);
    append_int_entry(&dict, "StateReason", (dbus_int32_t)t->reason); /* property is i, signal arg is u */
    if (!dbus_message_iter_close_container(&it, &dict) ||
        !dbus_message_iter_open_container(&it, DBUS_TYPE_ARRAY, DBUS_TYPE_STRING_AS_STRING, &inval) ||
        !dbus_message_iter_close_container(&it, &inval))
        oom();
    return m;
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: emitter [--address A] [--count N] [--calls C] [--modems M] [--with-properties]\n"
            "               [--ready-file PATH] [--ready-timeout S] [--spacing-us U] [--times PATH]\n"
            "               [--queue-kb K]\n"
            "  --address A        bus address (default: $DBUS_SYSTEM_BUS_ADDRESS)\n"
            "  --count N          total signals to send (default 100000)\n"
            "  --calls C          spread over /org/freedesktop/ModemManager1/Call/0..C-1 (default 200)\n"
            "  --modems M         informational for now (default 1)\n"
            "  --with-properties  each StateChanged is followed by PropertiesChanged (total stays N)\n"
            "  --ready-file PATH  after owning the name, wait until PATH exists before sending\n"
            "  --ready-timeout S  give up waiting for the ready file after S seconds (default 60)\n"
            "  --spacing-us U     sleep U µs between signals and flush each one (latency runs)\n"
            "  --times PATH       write \"serial send_time_ns\" (CLOCK_REALTIME) per signal\n"
            "  --queue-kb K       flush when libdbus's outgoing queue passes K KiB (default 256)\n");
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

int main(int argc, char **argv) {
    const char *address = getenv("DBUS_SYSTEM_BUS_ADDRESS");
    long count = 100000, calls = 200, modems = 1, spacing_us = 0, queue_kb = 256;
    double ready_timeout = 60;
    int with_props = 0;
    const char *ready_file = NULL, *times_path = NULL;

    enum { O_ADDRESS = 1, O_COUNT, O_CALLS, O_MODEMS, O_PROPS, O_READY, O_READY_TIMEOUT, O_SPACING,
           O_TIMES, O_QUEUE };
    static const struct option opts[] = {
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
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case O_ADDRESS: address = optarg; break;
        case O_COUNT: count = parse_long("--count", optarg, 0); break;
        case O_CALLS: calls = parse_long("--calls", optarg, 1); break;
        case O_MODEMS: modems = parse_long("--modems", optarg, 1); break;
        case O_PROPS: with_props = 1; break;
        case O_READY: ready_file = optarg; break;
        case O_READY_TIMEOUT: ready_timeout = (double)parse_long("--ready-timeout", optarg, 0); break;
        case O_SPACING: spacing_us = parse_long("--spacing-us", optarg, 0); break;
        case O_TIMES: times_path = optarg; break;
        case O_QUEUE: queue_kb = parse_long("--queue-kb", optarg, 1); break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 64;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "emitter: unexpected argument: %s\n", argv[optind]);
        usage(stderr);
        return 64;
    }
    if (!address || !*address) {
        fprintf(stderr, "emitter: no bus address: pass --address or set DBUS_SYSTEM_BUS_ADDRESS\n");
        return 64;
    }
    (void)modems;

    FILE *times = NULL;
    if (times_path) {
        times = fopen(times_path, "w");
        if (!times) {
            fprintf(stderr, "emitter: cannot write %s: %s\n", times_path, strerror(errno));
            return 2;
        }
    }

    DBusError err;
    dbus_error_init(&err);
    DBusConnection *conn = dbus_connection_open_private(address, &err);
    if (!conn) die("cannot connect to the bus", &err);
    dbus_connection_set_exit_on_disconnect(conn, FALSE);
    if (!dbus_bus_register(conn, &err)) die("Hello failed", &err);

    int r = dbus_bus_request_name(conn, MM_NAME, DBUS_NAME_FLAG_DO_NOT_QUEUE, &err);
    if (r == -1) die("RequestName(" MM_NAME ") failed", &err);
    if (r != DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER && r != DBUS_REQUEST_NAME_REPLY_ALREADY_OWNER) {
        fprintf(stderr, "emitter: could not own %s (reply %d: %s)\n", MM_NAME, r,
                r == DBUS_REQUEST_NAME_REPLY_EXISTS ? "another connection owns it" : "not primary owner");
        return 2;
    }
    fprintf(stderr, "emitter: %s owns %s; %s\n", dbus_bus_get_unique_name(conn), MM_NAME,
            ready_file ? "waiting for ready file" : "sending");

    if (ready_file) {
        double deadline = now_mono() + ready_timeout;
        struct stat st;
        while (stat(ready_file, &st) != 0) {
            if (now_mono() > deadline) {
                fprintf(stderr, "emitter: ready file %s did not appear within %.0f s\n", ready_file,
                        ready_timeout);
                return 3;
            }
            /* Keep the connection serviced (NameAcquired etc.) while waiting. */
            dbus_connection_read_write(conn, 1);
            while (dbus_connection_dispatch(conn) == DBUS_DISPATCH_DATA_REMAINS) {}
            if (!dbus_connection_get_is_connected(conn)) die("disconnected while waiting", NULL);
        }
    }

    /* Build every distinct message once (C calls x cycle x {StateChanged, PropertiesChanged});
     * each send is then a dbus_message_copy(), about twice as cheap as marshalling afresh. */
    const int parts = with_props ? 2 : 1;
    const size_t ntemplates = (size_t)calls * CYCLE_LEN * (size_t)parts;
    DBusMessage **templates = calloc(ntemplates, sizeof *templates);
    if (!templates) oom();
    for (long i = 0; i < calls; i++) {
        char path[sizeof MM_CALL_PREFIX + 24];
        snprintf(path, sizeof path, MM_CALL_PREFIX "%ld", i);
        for (size_t k = 0; k < CYCLE_LEN; k++)
            for (int part = 0; part < parts; part++)
                templates[((size_t)i * CYCLE_LEN + k) * (size_t)parts + (size_t)part] =
                    part == 0 ? state_changed(path, &cycle[k]) : properties_changed(path, &cycle[k]);
    }

    const long queue_limit = queue_kb * 1024;
    const struct timespec spacing = {spacing_us / 1000000, (spacing_us % 1000000) * 1000};
    long sent = 0, event = 0;
    double t0 = now_mono();
    while (sent < count) {
        /* event k touches call k % C and is that call's (k / C)-th transition */
        const size_t call = (size_t)(event % calls), step = (size_t)(event / calls) % CYCLE_LEN;
        DBusMessage **tmpl = &templates[(call * CYCLE_LEN + step) * (size_t)parts];
        event++;
        for (int part = 0; part < parts && sent < count; part++) {
            DBusMessage *m = dbus_message_copy(tmpl[part]);
            if (!m) oom();
            dbus_uint32_t serial = 0;
            uint64_t ts = times ? now_real_ns() : 0;
            if (!dbus_connection_send(conn, m, &serial)) oom();
            dbus_message_unref(m);
            sent++;
            if (times) fprintf(times, "%" PRIu32 " %" PRIu64 "\n", serial, ts);
            if (spacing_us > 0) {
                dbus_connection_flush(conn);
                nanosleep(&spacing, NULL);
            } else if (dbus_connection_get_outgoing_size(conn) > queue_limit) {
                dbus_connection_flush(conn);
            }
            if ((sent & 1023) == 0) {
                /* Drain anything the bus sent us so it never queues up on our side either. */
                while (dbus_connection_dispatch(conn) == DBUS_DISPATCH_DATA_REMAINS) {}
                if (!dbus_connection_get_is_connected(conn)) die("disconnected from the bus", NULL);
            }
        }
    }
    dbus_connection_flush(conn);
    double elapsed = now_mono() - t0;
    if (!dbus_connection_get_is_connected(conn)) die("disconnected from the bus before the end", NULL);

    if (times && fclose(times) != 0) {
        fprintf(stderr, "emitter: writing %s failed: %s\n", times_path, strerror(errno));
        return 2;
    }
    printf("sent %ld in %.3f s (%.0f/s)\n", sent, elapsed, elapsed > 0 ? (double)sent / elapsed : 0.0);
    fflush(stdout);

    for (size_t i = 0; i < ntemplates; i++) dbus_message_unref(templates[i]);
    free(templates);
    dbus_connection_close(conn);
    dbus_connection_unref(conn);
    return 0;
}
