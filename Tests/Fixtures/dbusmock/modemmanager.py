'''ModemManager voice-call mock for telwatch's integration tests (python3-dbusmock template).

Start it on a PRIVATE bus only (see README.md beside this file):

    DBUS_SYSTEM_BUS_ADDRESS=unix:path=$d/bus /usr/bin/python3 -m dbusmock --system \
        -t Tests/Fixtures/dbusmock/modemmanager.py [-p '{"modems": 1, "calls": [...]}']

It owns org.freedesktop.ModemManager1 with the daemon's own paths and interfaces:

    /org/freedesktop/ModemManager1          org.freedesktop.DBus.ObjectManager (modems only)
                                            org.freedesktop.ModemManager1 (Version; no-op methods)
    /org/freedesktop/ModemManager1/Modem/N  org.freedesktop.ModemManager1.Modem (properties only;
                                              EquipmentIdentifier 35693800000000N, OwnNumbers
                                              ["+1555010000N"])
                                            org.freedesktop.ModemManager1.Modem.Modem3gpp (properties
                                              only; OperatorName "Telwatch Mobile")
                                            org.freedesktop.ModemManager1.Modem.Voice
    /org/freedesktop/ModemManager1/Call/N   org.freedesktop.ModemManager1.Call (NOT in the ObjectManager)
    /org/freedesktop/ModemManager1/SIM/N    org.freedesktop.ModemManager1.Sim (properties only), only with
                                              the parameter "sim_emergency_numbers": [...] (its
                                              EmergencyNumbers, as); otherwise a modem's Sim is "/"

Modem and call numbers count from 0 for the life of the process and are never reused, like the
daemon's; restarting the mock restarts them, as restarting ModemManager does.

Control methods, on org.freedesktop.DBus.Mock at /org/freedesktop/ModemManager1. Each one puts
its signals on the bus before it replies, so once `gdbus call` returns they have been sent.

    AddModem(s name) -> o           New modem with Voice; InterfacesAdded. `name` becomes Model.
    RemoveModem(o modem)            InterfacesRemoved; its calls vanish with no CallDeleted/StateChanged
                                    (the daemon drops them with the modem).
    Ring(o modem, s number) -> o    Incoming call: PropertiesChanged(Voice.Calls), then CallAdded, the
                                    call already State 3 RINGING_IN, StateReason 2, Direction 1; no
                                    StateChanged. number "" = a bare RING (no +CLIP yet).
    Wait(o modem, s number) -> o    Same, as a waiting call: State 6 WAITING, StateReason 2, Direction 1.
    Dial(o modem, s number) -> o    What a client's CreateCall + Start puts on the bus: CallAdded with
                                    State 0 UNKNOWN, Direction 2, then StateChanged(0, 1, 1) and
                                    PropertiesChanged(State, StateReason) -> 1 DIALING.
    SetOperator(o modem, s name)    Modem3gpp.OperatorName: PropertiesChanged (nothing when unchanged).
    SetOwnNumbers(o modem, as numbers)
                                    Modem.OwnNumbers: PropertiesChanged (nothing when unchanged).
    SetNumber(o call, s number)     A late +CLIP: PropertiesChanged with Number only (nothing when unchanged).
    SetState(o call, i state, u reason)
                                    Any transition, any integer (unknown values too): StateChanged(old,
                                    new, reason), then PropertiesChanged with State (and StateReason when
                                    it changed). Like the daemon, nothing at all when state == old state.
    RemoteHangup(o call)            SetState(call, 7 TERMINATED, 4 terminated). The call stays listed.
    Delete(o call)                  As Voice.DeleteCall: object removed, PropertiesChanged(Calls), CallDeleted.
    LoseSignals(b lose) -> u        A system asleep: while on, every change still happens but no signal
                                    reaches the bus (ListCalls and GetAll show the truth); off, signals
                                    flow again and the reply counts those dropped. E.g. Ring, RemoteHangup
                                    while on: a terminated call telwatch never heard of stays listed.

A stuck stack (a message filter takes a call's Properties.GetAll before dbusmock sees it):
    RingAnswering(o modem, s number, s answer, d delay) -> o
                                    As Ring, but the call answers GetAll as `answer` says: "late"
                                    (after `delay` s, from a GLib timeout; UnknownObject if it was
                                    deleted meanwhile), "never" (the read is kept unanswered: the bus
                                    counts it against the caller for as long as the mock lives),
                                    "hostile-error" (Error.Core.Failed with ESC sequences, BEL,
                                    newlines, a forged "telwatch: " line, over 5 KB).
    FloodUnanswered(o modem, u n) -> u
                                    n calls ringing with answer "never" (n CallAdded); returns how
                                    many calls the modem lists.
    DeleteUnanswered() -> u         Delete for every "never" call; returns how many. The reads they
                                    received stay unanswered.
    HeldReads() -> u                How many GetAll calls are held unanswered.
    FloodNumbers(o call, u n)       n PropertiesChanged of Number on the call, +15550000000 up, each
                                    a new value. Returns at once: the signals go out in batches from
                                    the main loop, so other control calls are served mid-flood.
                                    They go straight on the connection: LoseSignals does not drop them.
    HearTones(o call, s dtmf, u n)  n DtmfReceived(dtmf) on the call, all in one main-loop turn, as
                                    the daemon passes on a modem's tone URCs (docs/modem-stacks.md
                                    §14); a call must be active (Error.Core.WrongState otherwise), a
                                    path that is no call gets them all the same (a confused daemon).

Real methods (besides org.freedesktop.DBus.Properties Get/GetAll on every object):
    Voice: ListCalls() -> ao (newest first, as the daemon), CreateCall(a{sv} {"number": s}) -> o
           (State 0 UNKNOWN, Direction 2; needs Start), DeleteCall(o), HangupAll(), HoldAndAccept(),
           HangupAndAccept(), Transfer(), CallWaitingSetup(b), CallWaitingQuery() -> b.
    Call:  Start (0 -> 1 DIALING, reason 1), Accept (3 -> 4 ACTIVE, reason 3), Hangup (-> 7, reason 4),
           Deflect(s) (3/6 -> 7, reason 9), JoinMultiparty, LeaveMultiparty, SendDtmf(s) (no-op when
           active). They check states and fail with org.freedesktop.ModemManager1.Error.Core.* as the
           daemon does; polkit is not modelled (everything is allowed).

Template parameters (-p JSON, all optional):
    "modems": N      modems present at start (default 1, the first is .../Modem/0).
    "calls": [ {...}, ... ]
                     calls already live at start (no signals), for start-up sync tests. Keys:
                     "modem" (index into the start-up modems, default 0), "state" (int, default 4
                     ACTIVE), "direction" (int; default 2 for states 0-2, else 1), "number" (default
                     ""), "reason" (int; default: what the daemon would have set for that state),
                     "multiparty" (bool, default false).
'''

import itertools
import os
import sys

import dbus
from gi.repository import GLib

from dbusmock import MOCK_IFACE
from dbusmock.mockobject import OBJECT_MANAGER_IFACE, objects

# dbusmock runs a template from its path, not as a package: the shared module is found beside it.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import templatelib  # noqa: E402  pylint: disable=wrong-import-position

BUS_NAME = 'org.freedesktop.ModemManager1'
MAIN_OBJ = '/org/freedesktop/ModemManager1'
MAIN_IFACE = 'org.freedesktop.ModemManager1'
SYSTEM_BUS = True
# dbusmock's automatic ObjectManager reports every object below MAIN_OBJ, calls included; the
# daemon's covers modems only, so GetManagedObjects is provided by this template instead.
IS_OBJECT_MANAGER = False

MODEM_IFACE = 'org.freedesktop.ModemManager1.Modem'
MODEM3GPP_IFACE = 'org.freedesktop.ModemManager1.Modem.Modem3gpp'
VOICE_IFACE = 'org.freedesktop.ModemManager1.Modem.Voice'
SIM_IFACE = 'org.freedesktop.ModemManager1.Sim'
CALL_IFACE = 'org.freedesktop.ModemManager1.Call'
MODEM_PREFIX = MAIN_OBJ + '/Modem/'
CALL_PREFIX = MAIN_OBJ + '/Call/'

# MMCallState
UNKNOWN, DIALING, RINGING_OUT, RINGING_IN, ACTIVE, HELD, WAITING, TERMINATED = range(8)
# MMCallStateReason
(R_UNKNOWN, R_OUTGOING_STARTED, R_INCOMING_NEW, R_ACCEPTED, R_TERMINATED, R_REFUSED_OR_BUSY,
 R_ERROR, R_AUDIO_SETUP_FAILED, R_TRANSFERRED, R_DEFLECTED) = range(10)
# MMCallDirection
D_UNKNOWN, D_INCOMING, D_OUTGOING = range(3)

MODEM_STATE_REGISTERED = 8

# How a call rung with RingAnswering answers its Properties.GetAll (see _CallReads).
READ_ANSWERS = ('late', 'never', 'hostile-error')

HOSTILE_MESSAGE = (
    'modem exploded\x1b[2J\x1b]0;owned\x07\x07\r\n'
    'telwatch: forged warning: everything is fine\n'
    '\x1b[31mred\x1b[0m\tand\u202ereversed\n'
    + 'A' * 5000 + '\ntelwatch: forged tail'
)

# Number changes sent per main-loop turn by FloodNumbers: small enough that a control call waiting
# in between is served within a few milliseconds.
FLOOD_BATCH = 250


def _core_error(kind, message):
    return dbus.exceptions.DBusException(message, name='org.freedesktop.ModemManager1.Error.Core.' + kind)


def _as_int32(value):
    '''StateChanged carries the reason as u, the StateReason property as i: wrap like C does.'''
    value = int(value) & 0xFFFFFFFF
    return dbus.Int32(value - 0x100000000 if value >= 0x80000000 else value)


def _valid_number(number):
    '''The daemon's own check: non-empty, no control characters, no ';'.'''
    if not number:
        raise _core_error('InvalidArgs', 'missing number')
    if any(ord(c) < 0x20 or c == ';' for c in number):
        raise _core_error('InvalidArgs', 'invalid character in number')


class _ModemManager:
    '''All the state of one mock instance; dbusmock's Reset() builds a fresh one.'''

    def __init__(self, mock):
        self.mock = mock
        self.modems = []          # modem paths, in creation order
        self.calls = {}           # modem path -> call paths, newest first (the daemon prepends)
        self.call_modem = {}      # call path -> modem path
        self.next_modem = 0
        self.sim_emergency_numbers = None
        self.next_call = 0
        self.call_waiting = {}    # modem path -> CallWaitingSetup flag
        self.reads = _CallReads(self, mock.connection)

    # ---- lookups ---------------------------------------------------------------------------

    def modem(self, path):
        if path not in self.calls:
            raise templatelib.mock_error(f'no such modem: {path}')
        return objects[path]

    def call(self, path):
        if path not in self.call_modem:
            raise templatelib.mock_error(f'no such call: {path}')
        return objects[path]

    @staticmethod
    def state_of(path):
        return int(objects[path].props[CALL_IFACE]['State'])

    # ---- property plumbing -----------------------------------------------------------------

    @staticmethod
    def store(obj, iface, changes):
        '''Store new property values; return only those that really changed, because a GDBus
        skeleton (which the daemon uses) leaves unchanged values out of PropertiesChanged.'''
        props = obj.props[iface]
        changed = {k: v for k, v in changes.items() if k not in props or props[k] != v}
        props.update(changed)
        return changed

    @staticmethod
    def emit_changed(obj, iface, changed):
        if changed:
            obj.EmitSignal(dbus.PROPERTIES_IFACE, 'PropertiesChanged', 'sa{sv}as',
                           [iface, dbus.Dictionary(changed, signature='sv'), dbus.Array([], signature='s')])

    def publish_call_list(self, modem_path):
        obj = objects[modem_path]
        paths = dbus.Array([dbus.ObjectPath(p) for p in self.calls[modem_path]], signature='o')
        self.emit_changed(obj, VOICE_IFACE, self.store(obj, VOICE_IFACE, {'Calls': paths}))

    # ---- modems ----------------------------------------------------------------------------

    def add_modem(self, name, announce):
        index = self.next_modem
        self.next_modem += 1
        path = f'{MODEM_PREFIX}{index}'
        device = f'/sys/devices/telwatch-mock/modem{index}'
        sim = '/'
        if self.sim_emergency_numbers is not None:
            sim = f'{MAIN_OBJ}/SIM/{index}'
            self.mock.AddObject(sim, SIM_IFACE, {
                'Active': dbus.Boolean(True),
                'SimIdentifier': dbus.String(f'8901000000000000{index:03d}'),
                'Imsi': dbus.String(f'00101000000{index:04d}'),
                'OperatorIdentifier': dbus.String('00101'),
                'OperatorName': dbus.String('Telwatch Mobile'),
                'EmergencyNumbers': dbus.Array(self.sim_emergency_numbers, signature='s'),
            }, [])
        self.mock.AddObject(path, MODEM_IFACE, {
            'Sim': dbus.ObjectPath(sim),
            'Bearers': dbus.Array([], signature='o'),
            'SupportedCapabilities': dbus.Array([dbus.UInt32(4)], signature='u'),
            'CurrentCapabilities': dbus.UInt32(4),            # GSM/UMTS
            'MaxBearers': dbus.UInt32(1),
            'MaxActiveBearers': dbus.UInt32(1),
            'Manufacturer': dbus.String('telwatch'),
            'Model': dbus.String(name or 'Mock Modem'),
            'Revision': dbus.String('mock-1'),
            'HardwareRevision': dbus.String(''),
            'DeviceIdentifier': dbus.String(f'{index:040x}'),
            'Device': dbus.String(device),
            'Drivers': dbus.Array(['mock'], signature='s'),
            'Plugin': dbus.String('generic'),
            'PrimaryPort': dbus.String(f'mock{index}'),
            'Ports': dbus.Array([dbus.Struct((f'mock{index}', dbus.UInt32(3)), signature='su')],
                                signature='(su)'),
            'EquipmentIdentifier': dbus.String(f'35693800{index:07d}'),
            'UnlockRequired': dbus.UInt32(1),                 # MM_MODEM_LOCK_NONE
            'State': dbus.Int32(MODEM_STATE_REGISTERED),
            'StateFailedReason': dbus.UInt32(0),
            'AccessTechnologies': dbus.UInt32(0),
            'SignalQuality': dbus.Struct((dbus.UInt32(80), dbus.Boolean(True)), signature='ub'),
            'OwnNumbers': dbus.Array([f'+1555010{index:04d}'], signature='s'),
            'PowerState': dbus.UInt32(3),                     # on
        }, [])
        obj = objects[path]
        obj.props[MODEM3GPP_IFACE] = {
            'Imei': dbus.String(f'35693800{index:07d}'),
            'RegistrationState': dbus.UInt32(1),              # home
            'OperatorCode': dbus.String('00101'),
            'OperatorName': dbus.String('Telwatch Mobile'),
            'EnabledFacilityLocks': dbus.UInt32(0),
        }
        obj.props[VOICE_IFACE] = {
            'Calls': dbus.Array([], signature='o'),
            'EmergencyOnly': dbus.Boolean(False),
        }
        self.modems.append(path)
        self.calls[path] = []
        self.call_waiting[path] = False
        self.add_voice_methods(obj, path)
        if announce:
            self.mock.EmitSignal(OBJECT_MANAGER_IFACE, 'InterfacesAdded', 'oa{sa{sv}}',
                                 [dbus.ObjectPath(path), obj.props])
        return path

    def remove_modem(self, path):
        obj = self.modem(path)
        interfaces = dbus.Array(list(obj.props), signature='s')
        # Calls die with the modem: unexported without CallDeleted or StateChanged.
        for call_path in self.calls.pop(path):
            del self.call_modem[call_path]
            self.mock.RemoveObject(call_path)
        self.modems.remove(path)
        del self.call_waiting[path]
        self.mock.RemoveObject(path)
        self.mock.EmitSignal(OBJECT_MANAGER_IFACE, 'InterfacesRemoved', 'oas',
                             [dbus.ObjectPath(path), interfaces])

    def managed_objects(self):
        return dbus.Dictionary({dbus.ObjectPath(p): objects[p].props for p in self.modems},
                               signature='oa{sa{sv}}')

    # ---- calls -----------------------------------------------------------------------------

    def add_call(self, modem_path, state, reason, direction, number, multiparty=False, announce=True):
        '''Export a call object already in its first state, then announce it like the daemon:
        the Calls property is flushed (PropertiesChanged) before CallAdded is emitted.'''
        self.modem(modem_path)
        path = f'{CALL_PREFIX}{self.next_call}'
        self.next_call += 1
        self.mock.AddObject(path, CALL_IFACE, {
            'State': dbus.Int32(state),
            'StateReason': _as_int32(reason),
            'Direction': dbus.Int32(direction),
            'Number': dbus.String(number),
            'Multiparty': dbus.Boolean(multiparty),
            'AudioPort': dbus.String(''),
            'AudioFormat': dbus.Dictionary({}, signature='sv'),
        }, [])
        self.add_call_methods(objects[path], path)
        self.call_modem[path] = modem_path
        self.calls[modem_path].insert(0, path)
        if announce:
            self.publish_call_list(modem_path)
            objects[modem_path].EmitSignal(VOICE_IFACE, 'CallAdded', 'o', [dbus.ObjectPath(path)])
        else:
            self.store(objects[modem_path], VOICE_IFACE, {
                'Calls': dbus.Array([dbus.ObjectPath(p) for p in self.calls[modem_path]], signature='o')})
        return path

    def delete_call(self, path):
        modem_path = self.call_modem.pop(path)
        self.calls[modem_path].remove(path)
        self.mock.RemoveObject(path)
        self.publish_call_list(modem_path)
        objects[modem_path].EmitSignal(VOICE_IFACE, 'CallDeleted', 'o', [dbus.ObjectPath(path)])

    def change_state(self, path, new_state, reason, also=None):
        '''The daemon's only way to move a call: store State/StateReason, emit StateChanged, and
        the skeleton's PropertiesChanged follows. A "change" to the current state emits no
        StateChanged. `also` holds other properties changed in the same step (Multiparty); a
        skeleton coalesces them into that one PropertiesChanged.'''
        obj = self.call(path)
        old_state = self.state_of(path)
        changes = dict(also or {})
        if old_state != int(new_state):
            changes.update(State=dbus.Int32(new_state), StateReason=_as_int32(reason))
        changed = self.store(obj, CALL_IFACE, changes)
        if old_state != int(new_state):
            obj.EmitSignal(CALL_IFACE, 'StateChanged', 'iiu',
                           [dbus.Int32(old_state), dbus.Int32(new_state), dbus.UInt32(int(reason) & 0xFFFFFFFF)])
        self.emit_changed(obj, CALL_IFACE, changed)

    def set_property(self, path, name, value):
        obj = self.call(path)
        self.emit_changed(obj, CALL_IFACE, self.store(obj, CALL_IFACE, {name: value}))

    def calls_in(self, modem_path, *states):
        return [p for p in self.calls[modem_path] if self.state_of(p) in states]

    # ---- Modem.Voice methods ---------------------------------------------------------------

    def add_voice_methods(self, obj, modem_path):
        def list_calls():
            return dbus.Array(self.calls[modem_path], signature='o')

        def create_call(properties):
            number = ''
            for key, value in properties.items():
                if key == 'number':
                    number = str(value)
                elif key != 'dtmf-tone-duration':
                    raise _core_error('InvalidArgs', f"Invalid properties dictionary, unexpected key '{key}'")
            _valid_number(number)
            return self.add_call(modem_path, UNKNOWN, R_UNKNOWN, D_OUTGOING, number)

        def delete_call(path):
            if path not in self.calls[modem_path]:
                raise _core_error('NotFound', f"No call found with path '{path}'")
            self.delete_call(path)

        def next_to_accept():
            # The daemon walks its list (newest first): the last WAITING call seen wins, else
            # the first HELD one.
            waiting = self.calls_in(modem_path, WAITING)
            if waiting:
                return waiting[-1]
            held = self.calls_in(modem_path, HELD)
            return held[0] if held else None

        def hold_and_accept():
            active, nxt = self.calls_in(modem_path, ACTIVE), next_to_accept()
            for p in active:
                self.change_state(p, HELD, R_UNKNOWN)
            if nxt:
                self.change_state(nxt, ACTIVE, R_ACCEPTED)

        def hangup_and_accept():
            active, nxt = self.calls_in(modem_path, ACTIVE), next_to_accept()
            for p in active:
                self.change_state(p, TERMINATED, R_TERMINATED)
            if nxt:
                self.change_state(nxt, ACTIVE, R_ACCEPTED)

        def hangup_all():
            # Like the daemon: only the calls +CHUP surely ends; held/waiting ones are left.
            for p in self.calls_in(modem_path, DIALING, RINGING_OUT, RINGING_IN, ACTIVE):
                self.change_state(p, TERMINATED, R_TERMINATED)

        def transfer():
            for p in self.calls_in(modem_path, ACTIVE, HELD):
                self.change_state(p, TERMINATED, R_TRANSFERRED)

        def call_waiting_setup(enable):
            self.call_waiting[modem_path] = bool(enable)

        for name, in_sig, out_sig, impl in [
                ('ListCalls', '', 'ao', list_calls),
                ('CreateCall', 'a{sv}', 'o', create_call),
                ('DeleteCall', 'o', '', delete_call),
                ('HoldAndAccept', '', '', hold_and_accept),
                ('HangupAndAccept', '', '', hangup_and_accept),
                ('HangupAll', '', '', hangup_all),
                ('Transfer', '', '', transfer),
                ('CallWaitingSetup', 'b', '', call_waiting_setup),
                ('CallWaitingQuery', '', 'b', lambda: dbus.Boolean(self.call_waiting[modem_path])),
        ]:
            templatelib.add_method(obj, VOICE_IFACE, name, in_sig, out_sig, impl)

    # ---- Call methods ----------------------------------------------------------------------

    def add_call_methods(self, obj, path):
        def require(states, message, kind='Failed'):
            if self.state_of(path) not in states:
                raise _core_error(kind, message)

        def start():
            require((UNKNOWN,), 'This call was not in unknown state, cannot start it')
            self.change_state(path, DIALING, R_OUTGOING_STARTED)

        def accept():
            require((RINGING_IN,), 'This call was not ringing, cannot accept')
            self.change_state(path, ACTIVE, R_ACCEPTED)

        def deflect(number):
            _valid_number(number)
            require((RINGING_IN, WAITING), 'This call was not ringing/waiting, cannot deflect')
            self.change_state(path, TERMINATED, R_DEFLECTED)

        def hangup():
            if self.state_of(path) in (UNKNOWN, TERMINATED):
                raise _core_error('Failed', 'This call was not active, cannot hangup')
            self.change_state(path, TERMINATED, R_TERMINATED)

        def send_dtmf(_dtmf):
            require((ACTIVE,), 'This call was not active, cannot send DTMF')

        def multiparty(p):
            return bool(objects[p].props[CALL_IFACE]['Multiparty'])

        def join_multiparty():
            if multiparty(path):
                raise _core_error('WrongState', 'this call is already part of a multiparty call')
            require((HELD,), 'invalid call state: must be held', 'WrongState')
            for p in self.calls_in(self.call_modem[path], ACTIVE, HELD):
                self.change_state(p, ACTIVE, R_UNKNOWN, {'Multiparty': dbus.Boolean(True)})

        def leave_multiparty():
            if not multiparty(path):
                raise _core_error('WrongState', 'this call is not part of a multiparty call')
            require((ACTIVE, HELD), 'invalid call state: must be either active or held', 'WrongState')
            others = [p for p in self.calls_in(self.call_modem[path], ACTIVE, HELD)
                      if p != path and multiparty(p)]
            # A multiparty call of one is no multiparty call: the last partner leaves it too.
            last = {'Multiparty': dbus.Boolean(False)} if len(others) == 1 else None
            for p in others:
                self.change_state(p, HELD, R_UNKNOWN, last)
            self.change_state(path, ACTIVE, R_UNKNOWN, {'Multiparty': dbus.Boolean(False)})

        for name, in_sig, impl in [
                ('Start', '', start),
                ('Accept', '', accept),
                ('Deflect', 's', deflect),
                ('Hangup', '', hangup),
                ('SendDtmf', 's', send_dtmf),
                ('JoinMultiparty', '', join_multiparty),
                ('LeaveMultiparty', '', leave_multiparty),
        ]:
            templatelib.add_method(obj, CALL_IFACE, name, in_sig, '', impl)

    # ---- control methods (org.freedesktop.DBus.Mock) ---------------------------------------

    def ctl_ring(self, modem, number):
        return self.add_call(modem, RINGING_IN, R_INCOMING_NEW, D_INCOMING, number)

    def ctl_wait(self, modem, number):
        return self.add_call(modem, WAITING, R_INCOMING_NEW, D_INCOMING, number)

    def ctl_dial(self, modem, number):
        path = self.add_call(modem, UNKNOWN, R_UNKNOWN, D_OUTGOING, number)
        self.change_state(path, DIALING, R_OUTGOING_STARTED)
        return path

    def ctl_set_operator(self, modem, name):
        obj = self.modem(modem)
        self.emit_changed(obj, MODEM3GPP_IFACE, self.store(obj, MODEM3GPP_IFACE, {'OperatorName': dbus.String(name)}))

    def ctl_set_own_numbers(self, modem, numbers):
        obj = self.modem(modem)
        value = dbus.Array([dbus.String(n) for n in numbers], signature='s')
        self.emit_changed(obj, MODEM_IFACE, self.store(obj, MODEM_IFACE, {'OwnNumbers': value}))

    def ctl_set_number(self, call, number):
        self.set_property(call, 'Number', dbus.String(number))

    def ctl_set_state(self, call, state, reason):
        self.change_state(call, state, reason)

    def ctl_remote_hangup(self, call):
        self.change_state(call, TERMINATED, R_TERMINATED)

    def ctl_delete(self, call):
        self.call(call)
        self.delete_call(call)

    def ctl_ring_answering(self, modem, number, answer, delay):
        if answer not in READ_ANSWERS:
            raise templatelib.mock_error(f'unknown answer "{answer}": one of {", ".join(READ_ANSWERS)}')
        # Known before CallAdded goes out: telwatch's GetAll follows the signal at once.
        path = f'{CALL_PREFIX}{self.next_call}'
        self.reads.answers[path] = (str(answer), float(delay))
        return self.ctl_ring(modem, number)

    def ctl_flood_unanswered(self, modem, count):
        for _ in range(int(count)):
            self.ctl_ring_answering(modem, '', 'never', 0)
        return dbus.UInt32(len(self.calls[modem]))

    def ctl_delete_unanswered(self):
        calls = self.reads.unanswered_calls()
        for path in calls:
            self.delete_call(path)
        return dbus.UInt32(len(calls))

    def ctl_hear_tones(self, call, dtmf, count):
        if call in self.call_modem and self.state_of(call) != ACTIVE:
            raise _core_error('WrongState', 'the call is not active')
        for _ in range(int(count)):
            signal = dbus.lowlevel.SignalMessage(call, CALL_IFACE, 'DtmfReceived')
            signal.append(dtmf, signature='s')
            self.reads.connection.send_message(signal)

    def ctl_flood_numbers(self, call, count):
        obj = self.call(call)
        indexes = iter(range(int(count)))
        self.mock.log(f'flood of {count} Number changes on {call}')

        def send_batch():
            batch = list(itertools.islice(indexes, FLOOD_BATCH))
            for index in batch:
                number = dbus.String(f'+1555{index:07d}')
                if call not in self.call_modem or not self.store(obj, CALL_IFACE, {'Number': number}):
                    continue
                # Straight onto the connection (so LoseSignals does not drop them): dbusmock's
                # EmitSignal converts and logs each signal, and took 31 s for 30,000 against 9.8 s.
                signal = dbus.lowlevel.SignalMessage(call, dbus.PROPERTIES_IFACE, 'PropertiesChanged')
                signal.append(CALL_IFACE, {'Number': number}, dbus.Array([], signature='s'), signature='sa{sv}as')
                self.reads.connection.send_message(signal)
            return len(batch) == FLOOD_BATCH     # called again while more may be left
        GLib.idle_add(send_batch)


# ---- A stuck stack: reads answered late, never, or with garbage -----------------------------
#
# dbusmock answers every method the moment it is called. A stuck daemon does not, and dbus-daemon
# counts each unanswered call against its caller until the callee answers or leaves the bus
# (docs/modem-stacks.md §8). A message filter on the mock's connection runs before dbusmock's
# objects see a message, so it can take a call's GetAll and keep it unanswered, answer it later
# from a GLib timeout, or answer it with an error.

class _CallReads:
    '''Properties.GetAll of the calls rung with RingAnswering or FloodUnanswered.'''

    def __init__(self, mm, connection):
        self.mm = mm
        self.connection = connection
        self.answers = {}         # call path -> (one of READ_ANSWERS, delay in seconds)
        self.held = 0             # GetAll calls taken and never answered
        # A Reset loads the template again: the old instance's filter goes with it.
        previous = getattr(connection, 'telwatch_read_filter', None)
        if previous is not None:
            connection.remove_message_filter(previous)
        connection.telwatch_read_filter = self.filter
        connection.add_message_filter(self.filter)

    def unanswered_calls(self):
        return [p for p, (answer, _) in self.answers.items() if answer == 'never' and p in self.mm.call_modem]

    def filter(self, _connection, message):
        path = message.get_path()
        if (not isinstance(message, dbus.lowlevel.MethodCallMessage) or message.get_member() != 'GetAll'
                or message.get_interface() != dbus.PROPERTIES_IFACE or path not in self.answers
                or path not in self.mm.call_modem or message.get_args_list() != [CALL_IFACE]):
            return dbus.lowlevel.HANDLER_RESULT_NOT_YET_HANDLED
        answer, delay = self.answers[path]
        if answer == 'never':
            self.held += 1
            self.mm.mock.log(f'GetAll {path}: held, never answered')
        elif answer == 'hostile-error':
            self.connection.send_message(dbus.lowlevel.ErrorMessage(
                message, 'org.freedesktop.ModemManager1.Error.Core.Failed', HOSTILE_MESSAGE))
        else:
            GLib.timeout_add(int(delay * 1000), self.answer_late, message)
        return dbus.lowlevel.HANDLER_RESULT_HANDLED

    def answer_late(self, message):
        path = message.get_path()
        if path in self.mm.call_modem:
            reply = dbus.lowlevel.MethodReturnMessage(message)
            reply.append(dbus.Dictionary(objects[path].props[CALL_IFACE], signature='sv'), signature='a{sv}')
        else:
            # Deleted meanwhile: the read fails as on the daemon, whose object has left the bus.
            reply = dbus.lowlevel.ErrorMessage(message, 'org.freedesktop.DBus.Error.UnknownObject',
                                               f"No such object path '{path}'")
        self.connection.send_message(reply)
        return False


def _default_reason(state, direction):
    if state in (RINGING_IN, WAITING) and direction == D_INCOMING:
        return R_INCOMING_NEW
    if state in (DIALING, RINGING_OUT):
        return R_OUTGOING_STARTED
    if state in (ACTIVE, HELD):
        return R_ACCEPTED if direction == D_INCOMING else R_OUTGOING_STARTED
    if state == TERMINATED:
        return R_TERMINATED
    return R_UNKNOWN


def load(mock, parameters):
    templatelib.install_signal_loss()
    mm = _ModemManager(mock)
    mock.telwatch_mm = mm     # reachable from a debugger or an AddMethod code string

    mock.AddProperty(MAIN_IFACE, 'Version', dbus.String('1.20.4'))
    mock.AddMethods(MAIN_IFACE, [
        ('ScanDevices', '', '', ''),
        ('SetLogging', 's', '', ''),
        ('ReportKernelEvent', 'a{sv}', '', ''),
        ('InhibitDevice', 'sb', '', ''),
    ])
    templatelib.add_method(mock, OBJECT_MANAGER_IFACE, 'GetManagedObjects', '', 'a{oa{sa{sv}}}', mm.managed_objects)

    for name, in_sig, out_sig, impl in [
            ('AddModem', 's', 'o', lambda name: mm.add_modem(str(name), announce=True)),
            ('RemoveModem', 'o', '', mm.remove_modem),
            ('Ring', 'os', 'o', mm.ctl_ring),
            ('Wait', 'os', 'o', mm.ctl_wait),
            ('Dial', 'os', 'o', mm.ctl_dial),
            ('SetOperator', 'os', '', mm.ctl_set_operator),
            ('SetOwnNumbers', 'oas', '', mm.ctl_set_own_numbers),
            ('SetNumber', 'os', '', mm.ctl_set_number),
            ('SetState', 'oiu', '', mm.ctl_set_state),
            ('RemoteHangup', 'o', '', mm.ctl_remote_hangup),
            ('Delete', 'o', '', mm.ctl_delete),
            ('LoseSignals', 'b', 'u', templatelib.lose_signals),
            ('RingAnswering', 'ossd', 'o', mm.ctl_ring_answering),
            ('FloodUnanswered', 'ou', 'u', mm.ctl_flood_unanswered),
            ('DeleteUnanswered', '', 'u', mm.ctl_delete_unanswered),
            ('HeldReads', '', 'u', lambda: dbus.UInt32(mm.reads.held)),
            ('FloodNumbers', 'ou', '', mm.ctl_flood_numbers),
            ('HearTones', 'osu', '', mm.ctl_hear_tones),
    ]:
        templatelib.add_method(mock, MOCK_IFACE, name, in_sig, out_sig, impl)

    if 'sim_emergency_numbers' in parameters:
        mm.sim_emergency_numbers = [str(n) for n in parameters['sim_emergency_numbers']]
    # Start-up state is created silently: it was there before any test client connected.
    for _ in range(int(parameters.get('modems', 1))):
        mm.add_modem('', announce=False)
    for spec in parameters.get('calls', []):
        state = int(spec.get('state', ACTIVE))
        direction = int(spec.get('direction', D_OUTGOING if state in (UNKNOWN, DIALING, RINGING_OUT)
                                 else D_INCOMING))
        mm.add_call(mm.modems[int(spec.get('modem', 0))], state,
                    int(spec.get('reason', _default_reason(state, direction))), direction,
                    str(spec.get('number', '')), bool(spec.get('multiparty', False)), announce=False)
