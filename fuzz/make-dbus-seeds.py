#!/usr/bin/python3
"""Writes fuzz/corpus/dbus-messages/: one marshalled message per shape telwatch reads, with the
values ModemManager, oFono and logind send (docs/modem-stacks.md §2, §3, §4.2), marshalled by GLib's
GDBus, a D-Bus implementation independent of libdbus."""
import os
import sys

from gi.repository import Gio, GLib

MM = "org.freedesktop.ModemManager1"
CALL = "/org/freedesktop/ModemManager1/Call/1"
MODEM = "/org/freedesktop/ModemManager1/Modem/0"


def signal(path, interface, member, body):
    message = Gio.DBusMessage.new_signal(path, interface, member)
    message.set_sender(":1.7")
    message.set_body(GLib.Variant(body[0], body[1]))
    # A message on the wire has a serial (GDBus gives one when it sends): libdbus rejects serial 0.
    message.set_serial(42)
    return message


def reply(body):
    call = Gio.DBusMessage.new_method_call(MM, "/", "org.freedesktop.DBus.Properties", "GetAll")
    call.set_serial(7)
    message = Gio.DBusMessage.new_method_reply(call)
    message.set_body(GLib.Variant(body[0], body[1]))
    message.set_serial(43)
    return message


call_properties = {"State": GLib.Variant("i", 3), "StateReason": GLib.Variant("i", 4),
                   "Direction": GLib.Variant("i", 1), "Number": GLib.Variant("s", "+15551230001"),
                   "Multiparty": GLib.Variant("b", False)}
ofono_call = {"State": GLib.Variant("s", "incoming"), "LineIdentification": GLib.Variant("s", "+15551230001"),
              "Name": GLib.Variant("s", "Alice"), "Multiparty": GLib.Variant("b", False)}
ofono_modem = {"Interfaces": GLib.Variant("as", ["org.ofono.VoiceCallManager"]), "Online": GLib.Variant("b", True)}

seeds = {
    "mm-call-added": signal(MODEM, MM + ".Modem.Voice", "CallAdded", ("(o)", (CALL,))),
    "mm-call-deleted": signal(MODEM, MM + ".Modem.Voice", "CallDeleted", ("(o)", (CALL,))),
    "mm-state-changed": signal(CALL, MM + ".Call", "StateChanged", ("(iiu)", (3, 4, 1))),
    "mm-properties-changed": signal(CALL, "org.freedesktop.DBus.Properties", "PropertiesChanged",
                                    ("(sa{sv}as)", (MM + ".Call", call_properties, []))),
    "mm-interfaces-added": signal("/org/freedesktop/ModemManager1", "org.freedesktop.DBus.ObjectManager",
                                  "InterfacesAdded", ("(oa{sa{sv}})", (MODEM, {MM + ".Modem.Voice": {}}))),
    "mm-get-all": reply(("(a{sv})", (call_properties,))),
    "mm-get-managed-objects": reply(("(a{oa{sa{sv}}})", ({MODEM: {MM + ".Modem.Voice": {},
                                                                   MM + ".Modem": {"State": GLib.Variant("i", 8)}}},))),
    "ofono-call-added": signal("/ril_0", "org.ofono.VoiceCallManager", "CallAdded",
                               ("(oa{sv})", ("/ril_0/voicecall01", ofono_call))),
    "ofono-call-removed": signal("/ril_0", "org.ofono.VoiceCallManager", "CallRemoved", ("(o)", ("/ril_0/voicecall01",))),
    "ofono-property-changed": signal("/ril_0/voicecall01", "org.ofono.VoiceCall", "PropertyChanged",
                                     ("(sv)", ("State", GLib.Variant("s", "active")))),
    "ofono-disconnect-reason": signal("/ril_0/voicecall01", "org.ofono.VoiceCall", "DisconnectReason",
                                      ("(s)", ("remote",))),
    "ofono-modem-added": signal("/", "org.ofono.Manager", "ModemAdded", ("(oa{sv})", ("/ril_0", ofono_modem))),
    "ofono-get-calls": reply(("(a(oa{sv}))", ([("/ril_0/voicecall01", ofono_call)],))),
    "ofono-get-modems": reply(("(a(oa{sv}))", ([("/ril_0", ofono_modem)],))),
    "logind-prepare-for-sleep": signal("/org/freedesktop/login1", "org.freedesktop.login1.Manager",
                                       "PrepareForSleep", ("(b)", (True,))),
    "logind-resumed": signal("/org/freedesktop/login1", "org.freedesktop.login1.Manager",
                             "PrepareForSleep", ("(b)", (False,))),
    # Descriptors travel beside a message's bytes, and libdbus rejects bytes whose header counts
    # any: the reply's `h` indexes none, which telwatch must take as no lock.
    "logind-inhibit-reply": reply(("(h)", (0,))),
}

directory = os.path.join(os.path.dirname(os.path.abspath(sys.argv[0])), "corpus", "dbus-messages")
os.makedirs(directory, exist_ok=True)
for name, message in seeds.items():
    with open(os.path.join(directory, name), "wb") as seed:
        seed.write(message.to_blob(Gio.DBusCapabilityFlags.NONE))
