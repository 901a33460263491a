#ifndef TELWATCH_CMOSQUITTO_SHIM_H
#define TELWATCH_CMOSQUITTO_SHIM_H

/* Debian's libmosquitto-dev: the MQTT client library of the Mosquitto project. telwatch uses it
   without its thread: its socket joins telwatch's own event loop (docs/ARCHITECTURE.md, "MQTT"). */
#include <mosquitto.h>

#endif
