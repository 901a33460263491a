'''A ModemManager that stops answering, for telwatch's stuck-stack tests.

Start it on a PRIVATE bus only, with Debian's interpreter (python3-dbus and python3-gi are
installed for it):

    DBUS_SYSTEM_BUS_ADDRESS=unix:path=$d/bus /usr/bin/python3 \
        Tests/Fixtures/stuckstack/modemmanager_stuck.py

It owns org.freedesktop.ModemManager1 with the daemon's own paths and interfaces
(docs/modem-stacks.md §2), like the dbusmock template beside it (Tests/Fixtures/dbusmock/), but
it is a plain python-dbus service on a GLib main loop, because what it is for is what dbusmock
cannot do: leave a method call unanswered. dbus-daemon counts every unanswered call against its
caller until the callee answers or leaves the bus (docs/modem-stacks.md §8), so this service can
hold as many of telwatch's calls as a stuck daemon would.

    /org/freedesktop/ModemManager1          org.freedesktop.DBus.ObjectManager (modems only)
    /org/freedesktop/ModemManager1/Modem/0  org.freedesktop.ModemManager1.Modem (properties only)
                                            org.freedesktop.ModemManager1.Modem.Voice
                                            (ListCalls; CallAdded, CallDeleted)
    /org/freedesktop/ModemManager1/Call/N   org.freedesktop.ModemManager1.Call (StateChanged), with
                                            org.freedesktop.DBus.Properties (GetAll, Get;
                                            PropertiesChanged). NOT in the ObjectManager.

Call numbers count from 0 for the life of the process and are never reused. A call's properties
are ModemManager's: State i, StateReason i, Direction i, Number s, Multiparty b, AudioPort s,
AudioFormat a{sv}. Every call is announced as the daemon does it: PropertiesChanged(Voice.Calls)
on the modem, then CallAdded(o), the call already ringing (State 3, StateReason 2, Direction 1).

Each call answers Properties.GetAll in its own way, its "mode":

    answer          with its properties, at once or after the call's delay (a GLib timeout)
    never           never: the reply callbacks are kept and never called, so the call stays
                    counted against the caller at the bus for as long as this process lives
    hostile-error   with an error (org.freedesktop.ModemManager1.Error.Core.Failed) whose message
                    is hostile text: ESC sequences, BEL, newlines, a forged "telwatch: " line,
                    and over 5 KB in all

A deleted call's object leaves the bus: a read of it then fails as on the daemon, while the reads
a "never" call received before it went stay unanswered.

Control methods, interface org.telwatch.Test.Stuck at /org/telwatch/Test/Stuck. Except
FloodNumbers, each one puts its signals on the bus before it replies.

    FloodStuck(u n) -> u         n new calls whose GetAll never answers (n CallAdded); returns how
                                 many calls exist now.
    Ring(s number, d delay, s mode) -> o
                                 A new ringing incoming call whose GetAll answers in `mode`, after
                                 `delay` seconds for `answer`; returns its path.
    SetState(o call, i state, u reason)
                                 StateChanged(old, new, reason), then PropertiesChanged(State, and
                                 StateReason when it changed); nothing when the state is the same.
    FloodNumbers(o call, u n)    n PropertiesChanged of Number on the call, each a new value (which
                                 telwatch reports as `updated`). Returns at once: the signals go
                                 out in batches from the main loop, so that other control calls
                                 (a Ring) are served in the middle of the flood.
    Delete(o call)               As Voice.DeleteCall: the object leaves the bus,
                                 PropertiesChanged(Voice.Calls), CallDeleted(o).
    DeleteStuck() -> u           Delete for every call whose GetAll never answers; returns how many.
    Ready() -> u held, u calls   Answers once every flood started before it has been sent: how
                                 many GetAll calls are held unanswered, and how many calls exist.

The service exits when its bus goes away, and on SIGTERM or SIGINT.
'''

import os
import signal
import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

BUS_NAME = 'org.freedesktop.ModemManager1'
MAIN_OBJ = '/org/freedesktop/ModemManager1'
MODEM_IFACE = 'org.freedesktop.ModemManager1.Modem'
VOICE_IFACE = 'org.freedesktop.ModemManager1.Modem.Voice'
CALL_IFACE = 'org.freedesktop.ModemManager1.Call'
OBJECT_MANAGER_IFACE = 'org.freedesktop.DBus.ObjectManager'
MODEM_PATH = MAIN_OBJ + '/Modem/0'
CALL_PREFIX = MAIN_OBJ + '/Call/'

CONTROL_IFACE = 'org.telwatch.Test.Stuck'
CONTROL_PATH = '/org/telwatch/Test/Stuck'

# MMCallState
UNKNOWN, DIALING, RINGING_OUT, RINGING_IN, ACTIVE, HELD, WAITING, TERMINATED = range(8)
# MMCallStateReason
R_INCOMING_NEW = 2
# MMCallDirection
D_INCOMING = 1

MODEM_STATE_REGISTERED = 8

MODES = ('answer', 'never', 'hostile-error')

# Signals sent per main-loop turn during FloodNumbers: small enough that a control call waiting
# in between is served within a few milliseconds.
FLOOD_BATCH = 250

HOSTILE_MESSAGE = (
    'modem exploded\x1b[2J\x1b]0;owned\x07\x07\r\n'
    'telwatch: forged warning: everything is fine\n'
    '\x1b[31mred\x1b[0m\tand\u202ereversed\n'
    + 'A' * 5000 + '\ntelwatch: forged tail'
)


def _as_int32(value):
    '''StateChanged carries the reason as u, the StateReason property as i: wrap like C does.'''
    value = int(value) & 0xFFFFFFFF
    return dbus.Int32(value - 0x100000000 if value >= 0x80000000 else value)


def _failed(message):
    return dbus.exceptions.DBusException(message, name='org.freedesktop.ModemManager1.Error.Core.Failed')


def _unknown_object(path):
    return dbus.exceptions.DBusException(f'No such object path \'{path}\'',
                                         name='org.freedesktop.DBus.Error.UnknownObject')


def _changed(interface, changes):
    return (interface, dbus.Dictionary(changes, signature='sv'), dbus.Array([], signature='s'))


class Call(dbus.service.Object):
    '''One call object; its mode decides how GetAll is answered.'''

    def __init__(self, stack, path, number, mode, delay):
        super().__init__(stack.bus, path)
        self.stack = stack
        self.path = path
        self.mode = mode
        self.delay = float(delay)
        self.gone = False
        self.props = {
            'State': dbus.Int32(RINGING_IN),
            'StateReason': dbus.Int32(R_INCOMING_NEW),
            'Direction': dbus.Int32(D_INCOMING),
            'Number': dbus.String(number),
            'Multiparty': dbus.Boolean(False),
            'AudioPort': dbus.String(''),
            'AudioFormat': dbus.Dictionary({}, signature='sv'),
        }

    def snapshot(self):
        return dbus.Dictionary(dict(self.props), signature='sv')

    @dbus.service.method(dbus.PROPERTIES_IFACE, in_signature='s', out_signature='a{sv}',
                         async_callbacks=('reply', 'error'))
    def GetAll(self, interface, reply, error):
        if interface != CALL_IFACE:
            return reply(dbus.Dictionary({}, signature='sv'))
        if self.mode == 'never':
            # Kept, never called: the caller's slot at the bus stays taken.
            self.stack.unanswered.append((reply, error))
            return None
        if self.mode == 'hostile-error':
            return error(_failed(HOSTILE_MESSAGE))
        if self.delay <= 0:
            return reply(self.snapshot())

        def late():
            if self.gone:
                error(_unknown_object(self.path))
            else:
                reply(self.snapshot())
            return False
        GLib.timeout_add(int(self.delay * 1000), late)
        return None

    @dbus.service.method(dbus.PROPERTIES_IFACE, in_signature='ss', out_signature='v')
    def Get(self, interface, name):
        if interface != CALL_IFACE or name not in self.props:
            raise dbus.exceptions.DBusException(f'No such property \'{name}\'',
                                                name='org.freedesktop.DBus.Error.InvalidArgs')
        return self.props[name]

    @dbus.service.signal(CALL_IFACE, signature='iiu')
    def StateChanged(self, old, new, reason):
        pass

    @dbus.service.signal(dbus.PROPERTIES_IFACE, signature='sa{sv}as')
    def PropertiesChanged(self, interface, changed, invalidated):
        pass

    def store(self, changes):
        '''New values only, as a GDBus skeleton (the daemon's) leaves unchanged ones out.'''
        changed = {k: v for k, v in changes.items() if self.props.get(k) != v}
        self.props.update(changed)
        return changed

    def set_state(self, state, reason):
        old = int(self.props['State'])
        if old == int(state):
            return
        changed = self.store({'State': dbus.Int32(state), 'StateReason': _as_int32(reason)})
        self.StateChanged(dbus.Int32(old), dbus.Int32(state), dbus.UInt32(int(reason) & 0xFFFFFFFF))
        if changed:
            self.PropertiesChanged(*_changed(CALL_IFACE, changed))

    def set_number(self, number):
        changed = self.store({'Number': dbus.String(number)})
        if changed:
            self.PropertiesChanged(*_changed(CALL_IFACE, changed))


class Modem(dbus.service.Object):
    def __init__(self, stack):
        super().__init__(stack.bus, MODEM_PATH)
        self.stack = stack
        self.props = {
            MODEM_IFACE: {
                'Manufacturer': dbus.String('telwatch'),
                'Model': dbus.String('Stuck Modem'),
                'Revision': dbus.String('stuck-1'),
                'Device': dbus.String('/sys/devices/telwatch-stuck/modem0'),
                'Drivers': dbus.Array(['stuck'], signature='s'),
                'Plugin': dbus.String('generic'),
                'PrimaryPort': dbus.String('stuck0'),
                'EquipmentIdentifier': dbus.String('356938000000000'),
                'State': dbus.Int32(MODEM_STATE_REGISTERED),
                'CurrentCapabilities': dbus.UInt32(4),
            },
            VOICE_IFACE: {
                'Calls': dbus.Array([], signature='o'),
                'EmergencyOnly': dbus.Boolean(False),
            },
        }

    def interfaces(self):
        return dbus.Dictionary({iface: dbus.Dictionary(props, signature='sv')
                                for iface, props in self.props.items()}, signature='sa{sv}')

    @dbus.service.method(VOICE_IFACE, in_signature='', out_signature='ao')
    def ListCalls(self):
        return self.call_list()

    @dbus.service.method(dbus.PROPERTIES_IFACE, in_signature='s', out_signature='a{sv}')
    def GetAll(self, interface):
        return dbus.Dictionary(self.props.get(interface, {}), signature='sv')

    @dbus.service.signal(VOICE_IFACE, signature='o')
    def CallAdded(self, path):
        pass

    @dbus.service.signal(VOICE_IFACE, signature='o')
    def CallDeleted(self, path):
        pass

    @dbus.service.signal(dbus.PROPERTIES_IFACE, signature='sa{sv}as')
    def PropertiesChanged(self, interface, changed, invalidated):
        pass

    def call_list(self):
        # Newest first, as the daemon prepends.
        return dbus.Array([dbus.ObjectPath(p) for p in reversed(self.stack.calls)], signature='o')

    def publish_calls(self):
        self.props[VOICE_IFACE]['Calls'] = self.call_list()
        self.PropertiesChanged(*_changed(VOICE_IFACE, {'Calls': self.props[VOICE_IFACE]['Calls']}))


class Root(dbus.service.Object):
    def __init__(self, stack):
        super().__init__(stack.bus, MAIN_OBJ)
        self.stack = stack

    @dbus.service.method(OBJECT_MANAGER_IFACE, in_signature='', out_signature='a{oa{sa{sv}}}')
    def GetManagedObjects(self):
        return dbus.Dictionary({dbus.ObjectPath(MODEM_PATH): self.stack.modem.interfaces()},
                               signature='oa{sa{sv}}')


class Control(dbus.service.Object):
    def __init__(self, stack):
        super().__init__(stack.bus, CONTROL_PATH)
        self.stack = stack

    @dbus.service.method(CONTROL_IFACE, in_signature='u', out_signature='u')
    def FloodStuck(self, count):
        for _ in range(int(count)):
            self.stack.add_call('', 'never', 0)
        return dbus.UInt32(len(self.stack.calls))

    @dbus.service.method(CONTROL_IFACE, in_signature='sds', out_signature='o')
    def Ring(self, number, delay, mode):
        if mode not in MODES:
            raise _failed(f'unknown mode {mode!r}: one of {", ".join(MODES)}')
        return dbus.ObjectPath(self.stack.add_call(str(number), str(mode), float(delay)))

    @dbus.service.method(CONTROL_IFACE, in_signature='oiu', out_signature='')
    def SetState(self, path, state, reason):
        self.stack.call(path).set_state(int(state), int(reason))

    @dbus.service.method(CONTROL_IFACE, in_signature='ou', out_signature='')
    def FloodNumbers(self, path, count):
        call = self.stack.call(path)
        self.stack.flood(call, int(count))

    @dbus.service.method(CONTROL_IFACE, in_signature='o', out_signature='')
    def Delete(self, path):
        self.stack.delete(self.stack.call(path))

    @dbus.service.method(CONTROL_IFACE, in_signature='', out_signature='u')
    def DeleteStuck(self):
        stuck = [self.stack.calls[p] for p in list(self.stack.calls) if self.stack.calls[p].mode == 'never']
        for call in stuck:
            self.stack.delete(call)
        return dbus.UInt32(len(stuck))

    @dbus.service.method(CONTROL_IFACE, in_signature='', out_signature='uu',
                         async_callbacks=('reply', 'error'))
    def Ready(self, reply, error):
        self.stack.when_flooded(lambda: reply(dbus.UInt32(len(self.stack.unanswered)),
                                              dbus.UInt32(len(self.stack.calls))))


class StuckStack:
    def __init__(self, bus):
        self.bus = bus
        self.calls = {}           # path -> Call, in creation order
        self.next_call = 0
        self.unanswered = []      # (reply, error) of GetAll calls never to be answered
        self.floods = []          # [call, values left to send, next index]
        self.flood_waiters = []
        self.root = Root(self)
        self.modem = Modem(self)
        self.control = Control(self)

    def call(self, path):
        call = self.calls.get(str(path))
        if call is None:
            raise _failed(f'no such call: {path}')
        return call

    def add_call(self, number, mode, delay):
        path = f'{CALL_PREFIX}{self.next_call}'
        self.next_call += 1
        self.calls[path] = Call(self, path, number, mode, delay)
        self.modem.publish_calls()
        self.modem.CallAdded(dbus.ObjectPath(path))
        return path

    def delete(self, call):
        call.gone = True
        del self.calls[call.path]
        call.remove_from_connection()
        self.modem.publish_calls()
        self.modem.CallDeleted(dbus.ObjectPath(call.path))

    def flood(self, call, count):
        if count <= 0:
            return
        first = not self.floods
        self.floods.append([call, count, 0])
        if first:
            GLib.idle_add(self.flood_some)

    def flood_some(self):
        budget = FLOOD_BATCH
        while self.floods and budget > 0:
            entry = self.floods[0]
            call, left, index = entry
            while left > 0 and budget > 0:
                if not call.gone:
                    call.set_number(f'+1555{index:07d}')
                index += 1
                left -= 1
                budget -= 1
            entry[1], entry[2] = left, index
            if left == 0:
                self.floods.pop(0)
        if self.floods:
            return True
        waiters, self.flood_waiters = self.flood_waiters, []
        for waiter in waiters:
            waiter()
        return False

    def when_flooded(self, done):
        if self.floods:
            self.flood_waiters.append(done)
        else:
            done()


def main():
    address = os.environ.get('DBUS_SYSTEM_BUS_ADDRESS')
    if not address:
        sys.exit('modemmanager_stuck: DBUS_SYSTEM_BUS_ADDRESS is not set (a private bus only)')
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    loop = GLib.MainLoop()
    bus = dbus.bus.BusConnection(address)
    bus.set_exit_on_disconnect(False)
    bus.call_on_disconnection(lambda _connection: loop.quit())
    # Every object is exported before the name is taken: whoever sees the name can use them all.
    stack = StuckStack(bus)
    name = dbus.service.BusName(BUS_NAME, bus, do_not_queue=True)
    for number in (signal.SIGTERM, signal.SIGINT):
        GLib.unix_signal_add(GLib.PRIORITY_HIGH, number, lambda: (loop.quit(), False)[1])
    loop.run()
    del name, stack


if __name__ == '__main__':
    main()
