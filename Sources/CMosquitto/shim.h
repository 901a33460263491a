#ifndef TELWATCH_CMOSQUITTO_SHIM_H
#define TELWATCH_CMOSQUITTO_SHIM_H

/* Debian's libmosquitto-dev: the MQTT client library of the Mosquitto project. telwatch uses it
   without its thread: its socket joins telwatch's own event loop (docs/ARCHITECTURE.md, "MQTT").

   The library is not linked: it is loaded (dlopen) the first time MQTT is used, so a telwatch
   without MQTT maps neither libmosquitto nor the OpenSSL it links, about 1.7 MiB of resident
   pages (docs/packaging.md). Only types and constants come from the header; every call goes
   through the table below. */
#include <dlfcn.h>
#include <mosquitto.h>
#include <stdio.h>

#define TELWATCH_MOSQUITTO_FUNCTIONS(X) \
    X(lib_init) X(new) X(destroy) X(int_option) X(username_pw_set) X(will_set) X(tls_set) \
    X(connect_callback_set) X(disconnect_callback_set) X(publish_callback_set) X(log_callback_set) \
    X(message_callback_set) X(subscribe) \
    X(connect_async) X(socket) X(publish) X(disconnect) X(want_write) X(loop_read) X(loop_write) \
    X(loop_misc) X(connack_string) X(strerror)

/* mosquitto_NAME as `NAME`. */
struct telwatch_mosquitto {
#define TELWATCH_MOSQUITTO_FIELD(name) __typeof__(mosquitto_##name) *_Nonnull name;
    TELWATCH_MOSQUITTO_FUNCTIONS(TELWATCH_MOSQUITTO_FIELD)
#undef TELWATCH_MOSQUITTO_FIELD
};

/* The functions of libmosquitto.so.1, loaded and initialised (mosquitto_lib_init) on the first
   call; NULL, with *failure saying why in dlerror()'s words, when it cannot be loaded. One
   thread only, as the rest of telwatch's loop. */
static inline const struct telwatch_mosquitto *_Nullable
telwatch_mosquitto_load(const char *_Nullable *_Nullable failure) {
    static struct telwatch_mosquitto table;
    static int state; /* 0: not tried yet, 1: loaded, -1: cannot be loaded */
    static char reason[256];
    if (state == 0) {
        void *library = dlopen("libmosquitto.so.1", RTLD_NOW | RTLD_LOCAL);
        state = library != NULL ? 1 : -1;
        if (library == NULL) snprintf(reason, sizeof reason, "%s", dlerror());
#define TELWATCH_MOSQUITTO_LOAD(name) \
        if (state == 1 && (*(void **)&table.name = dlsym(library, "mosquitto_" #name)) == NULL) { \
            state = -1; \
            snprintf(reason, sizeof reason, "%s", dlerror()); \
        }
        TELWATCH_MOSQUITTO_FUNCTIONS(TELWATCH_MOSQUITTO_LOAD)
#undef TELWATCH_MOSQUITTO_LOAD
        if (state == 1) table.lib_init();
    }
    if (state != 1) {
        if (failure != NULL) *failure = reason;
        return NULL;
    }
    return &table;
}

#endif
